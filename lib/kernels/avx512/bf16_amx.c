/*
 * The amx set's bf16 products (kernels.h, attn_bf16_gemm_fn) on AMX-BF16
 * tiles: tdpbf16ps adds to a 16 x 16 tile of float sums the products of a
 * 16 x 32 tile of A and a 32 x 16 tile of B (16 rows of pairs, the packed
 * layout's). Shapes:
 *   C (M, N) (+)= A (M, K) B (K, N), B packed in panels of 64 columns
 * Block: 32 rows x 32 columns of C in four tiles (0-3), two of A (4, 5) and
 * two of B (6, 7); K in steps of 32. A block that overhangs M or N goes
 * through a 32 x 32 copy on the stack. The tile configuration is loaded at
 * each call and released at its end, so a thread holds no tile state
 * between calls. Compiled with -mavx512f -mamx-tile -mamx-bf16; entered
 * only through attn_bf16_products_of, which the OS's permission for the
 * tile data gates (isa.c).
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/kernels.h"

enum { NR = ATTN_BF16_NR, BLOCK = 32, TILE = 16 };
_Static_assert(ATTN_BF16_M_STEP == BLOCK && ATTN_BF16_K_STEP == BLOCK,
               "the block is the products' padding step");

/* Palette 1: eight tiles of 16 rows of 64 bytes. */
typedef struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

static void configure(void)
{
    tile_config c;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (int t = 0; t < 8; t++) {
        c.colsb[t] = 64;
        c.rows[t] = TILE;
    }
    _tile_loadconfig(&c);
}

/* C block (32 x 32 floats, rows ldc apart) (+)= A rows [0, 32) B panel
 * columns [0, 32) from `panel` (the block's first column), over K. */
static void block(size_t K, const uint16_t *A, size_t lda, const uint16_t *panel, int accumulate,
                  float *C, size_t ldc)
{
    const size_t cs = ldc * sizeof(float), as = lda * sizeof(uint16_t);
    if (accumulate) {
        _tile_loadd(0, C, cs);
        _tile_loadd(1, C + TILE, cs);
        _tile_loadd(2, C + TILE * ldc, cs);
        _tile_loadd(3, C + TILE * ldc + TILE, cs);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    for (size_t k = 0; k < K; k += BLOCK) {
        const uint16_t *b = panel + k / 2 * 2 * NR; /* pair row k/2 */
        _tile_loadd(4, A + k, as);
        _tile_loadd(5, A + TILE * lda + k, as);
        _tile_loadd(6, b, 2 * NR * sizeof(uint16_t));
        _tile_loadd(7, b + 2 * TILE, 2 * NR * sizeof(uint16_t));
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, C, cs);
    _tile_stored(1, C + TILE, cs);
    _tile_stored(2, C + TILE * ldc, cs);
    _tile_stored(3, C + TILE * ldc + TILE, cs);
}

void attn_bf16_gemm_amx(size_t M, size_t N, size_t K, const uint16_t *A, size_t lda,
                        const uint16_t *B, size_t kb, int accumulate, float *C, size_t ldc)
{
    configure();
    for (size_t p = 0; p * NR < N; p++)
        for (size_t i = 0; i < M; i += BLOCK)
            for (size_t jj = 0; jj < NR && p * NR + jj < N; jj += BLOCK) {
                const size_t j = p * NR + jj;
                const size_t rows = M - i < BLOCK ? M - i : BLOCK;
                const size_t cols = N - j < BLOCK ? N - j : BLOCK;
                const uint16_t *a = A + i * lda, *panel = B + p * kb * NR + 2 * jj;
                float *c = C + i * ldc + j;
                if (rows == BLOCK && cols == BLOCK) {
                    block(K, a, lda, panel, accumulate, c, ldc);
                    continue;
                }
                float part[BLOCK * BLOCK] = {0};
                for (size_t r = 0; accumulate && r < rows; r++)
                    memcpy(part + r * BLOCK, c + r * ldc, cols * sizeof(float));
                block(K, a, lda, panel, accumulate, part, BLOCK);
                for (size_t r = 0; r < rows; r++)
                    memcpy(c + r * ldc, part + r * BLOCK, cols * sizeof(float));
            }
    _tile_release();
}
