/*
 * Internal interface of the kernels: one portable scalar set and one per
 * SIMD instruction set, all generated from lib/kernels/softmax_kernel.inc.c,
 * lib/kernels/gemm_kernel.inc.c, lib/kernels/rows_kernel.inc.c and
 * lib/kernels/dropout_kernel.inc.c (instantiated by
 * kernels_<isa>.c), selected at run time. Only the sets of the target
 * architecture are built (scalar everywhere; AVX2 and AVX-512 on x86-64;
 * NEON on AArch64): the getters below return NULL for the others, which
 * attn_isa_supported reports unsupported. Not installed; tests reach it
 * through the static library.
 */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* In order of preference within an architecture: the highest supported
 * value is the default. */
typedef enum attn_isa {
    ATTN_ISA_SCALAR = 0,
    ATTN_ISA_AVX2 = 1,   /* AVX2 + FMA + F16C; x86-64 builds only */
    ATTN_ISA_AVX512 = 2, /* AVX-512F + FMA; x86-64 builds only */
    ATTN_ISA_NEON = 3,   /* AArch64 Advanced SIMD; AArch64 builds only */
    /* avx512 and, for a bf16 plan's products (attn_bf16_products_of),
     * AVX512-BF16 dot products (vdpbf16ps); x86-64 builds only */
    ATTN_ISA_AVX512_BF16 = 4,
    /* avx512-bf16 whose bf16 products are AMX-BF16 tiles (tdpbf16ps), with
     * Linux's permission for the tile state; x86-64 builds only */
    ATTN_ISA_AMX = 5,
    ATTN_ISA_COUNT = 6
} attn_isa;

/* Whether this build has the kernels of `isa` and this CPU (and OS) can run
 * them. */
int attn_isa_supported(attn_isa isa);

/* The kernel set this process uses: the best supported one (avx512-bf16 only
 * where attn_cpu_bf16_dot_is_fast), or the one named by ATTN_SIMD
 * (scalar|avx2|avx512|avx512-bf16|amx|neon) when it is supported. Decided
 * once. */
attn_isa attn_isa_active(void);

const char *attn_isa_name(attn_isa isa);

/*
 * Fused scale / mask / softmax of one row.
 *   x (n_total) in, y (n_total) out; x == y allowed (in place).
 *   y[j] = exp(scale*x[j] - m) / sum_{k<n_valid} exp(scale*x[k] - m),  j < n_valid
 *   y[j] = 0,                                                         j >= n_valid
 * where m = max_{k<n_valid} scale*x[k]. n_valid == 0 (fully masked) gives a row
 * of zeros; entries equal to -inf are masked too. Reads x at most twice.
 */
typedef void (*attn_softmax_row_f32_fn)(const float *x, float *y, size_t n_valid,
                                        size_t n_total, float scale);
typedef void (*attn_softmax_row_f64_fn)(const double *x, double *y, size_t n_valid,
                                        size_t n_total, double scale);

/*
 * The row kernel on `rows` rows of x (leading dimension ld; y alike, x == y
 * allowed), row r with n_valid + r * n_valid_step valid entries of n_total
 * (n_valid_step 0: every row alike; 1: the rows of a causal block). The
 * same results as the row kernel, row by row; short rows go several at a
 * time so that their dependency chains overlap.
 */
typedef void (*attn_softmax_rows_f32_fn)(const float *x, float *y, size_t rows, size_t ld,
                                         size_t n_valid, size_t n_valid_step, size_t n_total,
                                         float scale);
typedef void (*attn_softmax_rows_f64_fn)(const double *x, double *y, size_t rows, size_t ld,
                                         size_t n_valid, size_t n_valid_step, size_t n_total,
                                         double scale);

/*
 * One key block of the tiled (online) softmax, for a row whose earlier key
 * blocks left a running max m (start: -REAL_MAX) and sum l (start: 0):
 *   m' = max(m, max_{j<n_valid} scale*s[j])
 *   p[j] = exp(scale*s[j] - m') for j < n_valid, p[j] = 0 up to n_total
 *   l' = l * exp(m - m') + sum_j p[j]
 * returns alpha = exp(m - m') >= 0, by which the caller rescales the row's
 * partial output; s == p allowed. When m' is +inf (a +inf score) p is zeroed,
 * m' = +inf is stored and -1 is returned: the caller recomputes the row.
 */
typedef float (*attn_softmax_online_f32_fn)(const float *s, float *p, size_t n_valid,
                                            size_t n_total, float scale, float *max, float *sum);
typedef double (*attn_softmax_online_f64_fn)(const double *s, double *p, size_t n_valid,
                                             size_t n_total, double scale, double *max,
                                             double *sum);


/*
 * attn's own matrix product (gemm_kernel.inc.c), for the paths that must not
 * call a multithreaded BLAS or that are too small for a BLAS call to pay:
 *   C (M,N) = alpha op(A) (M,K) op(B) (K,N) + beta C        row-major
 * op(X) is X (trans 0) or X^T (trans 1) of the row-major X with leading
 * dimension ldx. beta must be 0 (C is written without being read) or 1
 * (C added to): the kernels do not multiply by beta, any other value would
 * act as 1; debug builds assert it (every caller passes a constant 0 or 1,
 * or a "first block" choice between them).
 * Single-threaded; `pack` is scratch of attn_gemm_pack_elements(M, N, K)
 * elements. Order of the sums: a product small enough for the unpacked path
 * (attn_gemm_is_direct) sums each C element in two accumulators, even k and
 * odd k, each in increasing k, added at the end; a larger one sums each
 * span of ATTN_GEMM_KSPAN k (the last one shorter) in increasing k into one
 * accumulator, and adds the spans' sums, each times alpha, to C in
 * increasing order (the first written when beta is 0); a prepacked op(B)
 * gives the same sums. Either way results depend on the shape and the kernel
 * set only (not on threads, nor on where the product's rows lie), and the
 * order is not simply increasing k.
 */
typedef void (*attn_gemm_f32_fn)(int trans_a, int trans_b, size_t M, size_t N, size_t K,
                                 float alpha, const float *A, size_t lda, const float *B,
                                 size_t ldb, float beta, float *C, size_t ldc, float *pack);
typedef void (*attn_gemm_f64_fn)(int trans_a, int trans_b, size_t M, size_t N, size_t K,
                                 double alpha, const double *A, size_t lda, const double *B,
                                 size_t ldb, double beta, double *C, size_t ldc, double *pack);
/* C_m = alpha op(A) op(B_m) + beta C_m for m < count, as `count` products
 * of the kind above (the same results) that share the packing of op(A).
 * prepacked: NULL, or each op(B_m) packed whole by the pack_b kernel below,
 * which the product then reads instead of packing op(B_m) itself (B_m is
 * still read when the product is small enough for the unpacked path).
 * Scratch as for one product M x N x K. */
typedef void (*attn_gemm_shared_a_f32_fn)(int trans_a, int trans_b, size_t M, size_t N, size_t K,
                                          float alpha, const float *A, size_t lda, size_t count,
                                          const float *const *B, size_t ldb,
                                          const float *const *prepacked, float beta,
                                          float *const *C, size_t ldc, float *pack);
typedef void (*attn_gemm_shared_a_f64_fn)(int trans_a, int trans_b, size_t M, size_t N, size_t K,
                                          double alpha, const double *A, size_t lda,
                                          size_t count, const double *const *B, size_t ldb,
                                          const double *const *prepacked, double beta,
                                          double *const *C, size_t ldc, double *pack);
/* Packs the K block [k0, k0 + ATTN_GEMM_KC) of op(B) (K,N) into `packed`, of
 * attn_gemm_packed_b_elements(K, N) elements (the blocks are independent:
 * several threads may pack several blocks at once). */
typedef void (*attn_gemm_pack_b_f32_fn)(int trans_b, size_t K, size_t N, const float *B,
                                        size_t ldb, size_t k0, float *packed);
typedef void (*attn_gemm_pack_b_f64_fn)(int trans_b, size_t K, size_t N, const double *B,
                                        size_t ldb, size_t k0, double *packed);
/* NR of the kernel set: a packed op(B) holds its columns in micro-panels
 * of this many (a divisor of ATTN_GEMM_NR_MAX), panel p of a K block of kc
 * rows at p * kc * NR: the columns from j (a multiple of NR) of a packed
 * matrix of one K block start at j * kc. */
typedef size_t (*attn_gemm_panel_f32_fn)(void);
typedef size_t (*attn_gemm_panel_f64_fn)(void);
attn_gemm_panel_f32_fn attn_gemm_panel_kernel_f32(attn_isa isa);
attn_gemm_panel_f64_fn attn_gemm_panel_kernel_f64(attn_isa isa);

/* C (M,N) = tril(A) (M,M) B (M,N) + beta C, A, B, C row-major: row i of C
 * never reads rows of B after i. beta 0 or 1, as above. Scratch as for
 * M x N x M. Sums: the part left of each group of rows' diagonal block as
 * products above, then the block's own terms one by one in increasing k
 * (gemm_kernel.inc.c). */
typedef void (*attn_gemm_lower_f32_fn)(size_t M, size_t N, const float *A, size_t lda,
                                       const float *B, size_t ldb, float beta, float *C,
                                       size_t ldc, float *pack);
typedef void (*attn_gemm_lower_f64_fn)(size_t M, size_t N, const double *A, size_t lda,
                                       const double *B, size_t ldb, double beta, double *C,
                                       size_t ldc, double *pack);

/* Blocking of the product (the same for every kernel set; see
 * gemm_kernel.inc.c): op(B) packed in K blocks of KC, a micro-tile summing
 * a span of up to KSPAN k (whole K blocks) before it reads and writes C,
 * op(B) blocks of NC columns, blocks of MC rows of op(A); MR x NR
 * micro-tiles of at most the _MAX sizes. */
#define ATTN_GEMM_KC ((size_t)256)
#define ATTN_GEMM_KSPAN ((size_t)768)
#define ATTN_GEMM_NC ((size_t)512)
#define ATTN_GEMM_MC ((size_t)144) /* rows of op(A) per sweep of a packed op(B) block */
#define ATTN_GEMM_MR_MAX ((size_t)16)
#define ATTN_GEMM_NR_MAX ((size_t)64)

static inline size_t attn_gemm_min(size_t a, size_t b) { return a < b ? a : b; }

/* Products this small are computed without packing (gemm_kernel.inc.c),
 * where an op(B) = B^T takes K*N elements of the scratch. M*N is formed
 * first so that M*N*K cannot overflow (dimensions are below 2^31). */
#define ATTN_GEMM_DIRECT_MAX_MN ((size_t)4096)
#define ATTN_GEMM_DIRECT_MAX_MNK ((size_t)1 << 17)
static inline int attn_gemm_is_direct(size_t M, size_t N, size_t K)
{
    return M * N <= ATTN_GEMM_DIRECT_MAX_MN && M * N * K <= ATTN_GEMM_DIRECT_MAX_MNK;
}

/* Elements of the packed op(B) blocks of a span (packed products), and of
 * the whole scratch of a product. */
static inline size_t attn_gemm_pack_b_elements(size_t N, size_t K)
{
    return attn_gemm_min(K, ATTN_GEMM_KSPAN) *
           (attn_gemm_min(N, ATTN_GEMM_NC) + ATTN_GEMM_NR_MAX);
}
/* Elements of a whole packed op(B) (K,N): N rounded up to a micro-tile. */
static inline size_t attn_gemm_packed_b_elements(size_t K, size_t N)
{
    return K * (N + ATTN_GEMM_NR_MAX);
}
/* ... and of a packed op(A) = A^T block over a span (after the op(B)
 * blocks): up to MC rows rounded up to whole micro-panels. */
static inline size_t attn_gemm_pack_a_elements(size_t M, size_t K)
{
    return (attn_gemm_min(M, ATTN_GEMM_MC) + ATTN_GEMM_MR_MAX) *
           attn_gemm_min(K, ATTN_GEMM_KSPAN);
}
static inline size_t attn_gemm_pack_elements(size_t M, size_t N, size_t K)
{
    if (attn_gemm_is_direct(M, N, K))
        return K * N;
    return attn_gemm_pack_b_elements(N, K) + attn_gemm_pack_a_elements(M, K);
}
/* Scratch enough for every product with M, N and K at most these (each
 * term grows with each dimension; a direct product's K*N is at most its
 * M*N*K). A small plan's bound stays under glibc's 64 KiB, from which a
 * free consolidates the heap: a third of a one-shot's time at T=6, C=64. */
static inline size_t attn_gemm_pack_bound(size_t M, size_t N, size_t K)
{
    const size_t packed = attn_gemm_pack_b_elements(N, K) + attn_gemm_pack_a_elements(M, K);
    const size_t direct = attn_gemm_min(attn_gemm_min(K, ATTN_GEMM_DIRECT_MAX_MNK) *
                                            attn_gemm_min(N, ATTN_GEMM_DIRECT_MAX_MNK),
                                        ATTN_GEMM_DIRECT_MAX_MNK);
    return packed > direct ? packed : direct;
}

/*
 * The softmax backward of one row of weights P (n_valid entries of n_total):
 *   dS_j = P_j (dP_j - <dP, P>)  for j < n_valid,   dS_j = 0 up to n_total
 * dP is overwritten by dS; the dot is computed (given_dot NULL) or given,
 * and returned.
 */
typedef float (*attn_softmax_backward_f32_fn)(const float *P, float *dP, size_t n_valid,
                                              size_t n_total, const float *given_dot);
typedef double (*attn_softmax_backward_f64_fn)(const double *P, double *dP, size_t n_valid,
                                               size_t n_total, const double *given_dot);
attn_softmax_backward_f32_fn attn_softmax_backward_kernel_f32(attn_isa isa);
attn_softmax_backward_f64_fn attn_softmax_backward_kernel_f64(attn_isa isa);

/*
 * The weights of one row recomputed from its statistics (the O(T)-memory
 * backward and a training forward's requested weights): with max and
 * log_sum as the tiled forward left them,
 *   p[j] = exp((scale*s[j] - max) - log_sum) for j < n_valid, 0 up to n_total
 * (the row's log-sum-exp is max + log_sum; kept apart, the subtraction of
 * max is as exact as in the forward, which one rounded lse would not be
 * when scores are large); log_sum = -inf (or n_valid 0: no key seen) gives
 * zeros, max = +inf (a score reached +inf) the row kernel's limit (equal
 * shares of the +inf entries). Where |max| or |log_sum| passes 2^20, s may
 * differ from the forward's scores by more than exp tolerates (another
 * product's rounding): weights are then clamped to 1. s == p allowed.
 */
typedef void (*attn_softmax_from_lse_f32_fn)(const float *s, float *p, size_t n_valid,
                                             size_t n_total, float scale, float max,
                                             float log_sum);
typedef void (*attn_softmax_from_lse_f64_fn)(const double *s, double *p, size_t n_valid,
                                             size_t n_total, double scale, double max,
                                             double log_sum);
attn_softmax_from_lse_f32_fn attn_softmax_from_lse_kernel_f32(attn_isa isa);
attn_softmax_from_lse_f64_fn attn_softmax_from_lse_kernel_f64(attn_isa isa);

/*
 * Products of a few rows against many (rows_kernel.inc.c; the decode step),
 * for G groups of R rows, group g's B_g at B + g*ldg (the key/value heads
 * of a cache: side by side in a row, ldg = d, or heads apart):
 *   rows_dot   S (G*R, n) = A_g (R, d) B_g^T  (A, B_g, S row-major, ld lda, ldb, lds)
 *   rows_axpy  C (G*R, m) += P_g (R, n) B_g   (B_g (n, m) row-major, ld ldb)
 * R <= ATTN_ROWS_MAX; each row of B is read once, whole, for all the rows.
 */
#define ATTN_ROWS_MAX 8
typedef void (*attn_rows_dot_f32_fn)(size_t G, size_t R, size_t n, size_t d, const float *A,
                                     size_t lda, const float *B, size_t ldb, size_t ldg,
                                     float *S, size_t lds);
typedef void (*attn_rows_dot_f64_fn)(size_t G, size_t R, size_t n, size_t d, const double *A,
                                     size_t lda, const double *B, size_t ldb, size_t ldg,
                                     double *S, size_t lds);
typedef void (*attn_rows_axpy_f32_fn)(size_t G, size_t R, size_t n, size_t m, const float *P,
                                      size_t ldp, const float *B, size_t ldb, size_t ldg,
                                      float *C, size_t ldc);
typedef void (*attn_rows_axpy_f64_fn)(size_t G, size_t R, size_t n, size_t m, const double *P,
                                      size_t ldp, const double *B, size_t ldb, size_t ldg,
                                      double *C, size_t ldc);
attn_rows_dot_f32_fn attn_rows_dot_kernel_f32(attn_isa isa);
attn_rows_dot_f64_fn attn_rows_dot_kernel_f64(attn_isa isa);
attn_rows_axpy_f32_fn attn_rows_axpy_kernel_f32(attn_isa isa);
attn_rows_axpy_f64_fn attn_rows_axpy_kernel_f64(attn_isa isa);

/*
 * Attention dropout on a row segment (dropout_kernel.inc.c: the draws of
 * core/dropout.h, ULEN Philox calls at once), for row t of head h of
 * sequence b, keys j0 .. j0 + n - 1, with f_i = keep(b, h, t, j0 + i) ?
 * (real)(1 / (1 - p)) : 0:
 *   x (n) [i] *= f_i (x NULL: none),  factors (n) [i] = f_i (NULL: none)
 * d is on (p > 0). Bitwise the same on every kernel set.
 */
struct attn_dropout;
typedef void (*attn_dropout_mask_f32_fn)(const struct attn_dropout *d, size_t b, size_t h,
                                         size_t t, size_t j0, size_t n, float *x,
                                         float *factors);
typedef void (*attn_dropout_mask_f64_fn)(const struct attn_dropout *d, size_t b, size_t h,
                                         size_t t, size_t j0, size_t n, double *x,
                                         double *factors);
attn_dropout_mask_f32_fn attn_dropout_mask_kernel_f32(attn_isa isa);
attn_dropout_mask_f64_fn attn_dropout_mask_kernel_f64(attn_isa isa);

/* For sources templated over `real` (see real.h): the kernel types. */
#ifdef ATTN_REAL_BITS
#if ATTN_REAL_BITS == 32
typedef attn_softmax_row_f32_fn attn_softmax_row_fn;
typedef attn_softmax_online_f32_fn attn_softmax_online_fn;
typedef attn_softmax_rows_f32_fn attn_softmax_rows_fn;
typedef attn_softmax_backward_f32_fn attn_softmax_backward_fn;
typedef attn_softmax_from_lse_f32_fn attn_softmax_from_lse_fn;
typedef attn_gemm_f32_fn attn_gemm_fn;
typedef attn_gemm_shared_a_f32_fn attn_gemm_shared_a_fn;
typedef attn_gemm_pack_b_f32_fn attn_gemm_pack_b_fn;
typedef attn_gemm_lower_f32_fn attn_gemm_lower_fn;
typedef attn_rows_dot_f32_fn attn_rows_dot_fn;
typedef attn_rows_axpy_f32_fn attn_rows_axpy_fn;
typedef attn_dropout_mask_f32_fn attn_dropout_mask_fn;
#else
typedef attn_softmax_row_f64_fn attn_softmax_row_fn;
typedef attn_softmax_online_f64_fn attn_softmax_online_fn;
typedef attn_softmax_rows_f64_fn attn_softmax_rows_fn;
typedef attn_softmax_backward_f64_fn attn_softmax_backward_fn;
typedef attn_softmax_from_lse_f64_fn attn_softmax_from_lse_fn;
typedef attn_gemm_f64_fn attn_gemm_fn;
typedef attn_gemm_shared_a_f64_fn attn_gemm_shared_a_fn;
typedef attn_gemm_pack_b_f64_fn attn_gemm_pack_b_fn;
typedef attn_gemm_lower_f64_fn attn_gemm_lower_fn;
typedef attn_rows_dot_f64_fn attn_rows_dot_fn;
typedef attn_rows_axpy_f64_fn attn_rows_axpy_fn;
typedef attn_dropout_mask_f64_fn attn_dropout_mask_fn;
#endif
#endif

/* The row kernel of `isa`; NULL for a value outside attn_isa and for a set
 * not built on this architecture. */
attn_softmax_row_f32_fn attn_softmax_row_kernel_f32(attn_isa isa);
attn_softmax_row_f64_fn attn_softmax_row_kernel_f64(attn_isa isa);
attn_softmax_online_f32_fn attn_softmax_online_kernel_f32(attn_isa isa);
attn_softmax_rows_f32_fn attn_softmax_rows_kernel_f32(attn_isa isa);
attn_softmax_rows_f64_fn attn_softmax_rows_kernel_f64(attn_isa isa);
attn_softmax_online_f64_fn attn_softmax_online_kernel_f64(attn_isa isa);
attn_gemm_f32_fn attn_gemm_kernel_f32(attn_isa isa);
attn_gemm_f64_fn attn_gemm_kernel_f64(attn_isa isa);
attn_gemm_shared_a_f32_fn attn_gemm_shared_a_kernel_f32(attn_isa isa);
attn_gemm_pack_b_f32_fn attn_gemm_pack_b_kernel_f32(attn_isa isa);
attn_gemm_pack_b_f64_fn attn_gemm_pack_b_kernel_f64(attn_isa isa);
attn_gemm_shared_a_f64_fn attn_gemm_shared_a_kernel_f64(attn_isa isa);
attn_gemm_lower_f32_fn attn_gemm_lower_kernel_f32(attn_isa isa);
attn_gemm_lower_f64_fn attn_gemm_lower_kernel_f64(attn_isa isa);

/* y[i] = exp(x[i]) with the kernel's polynomial exp, for i < n (x == y allowed).
 * Accuracy against libm: relative error <= 2e-7 (f32), <= 1e-14 (f64) where
 * the result is a normal number; exp(-inf) = 0, exp(+inf) = +inf, NaN -> NaN,
 * overflow -> +inf, results below the normal range are flushed to 0 or
 * computed as subnormals (absolute error below the smallest normal). */
typedef void (*attn_exp_f32_fn)(const float *x, float *y, size_t n);
typedef void (*attn_exp_f64_fn)(const double *x, double *y, size_t n);
attn_exp_f32_fn attn_exp_kernel_f32(attn_isa isa);
attn_exp_f64_fn attn_exp_kernel_f64(attn_isa isa);

/*
 * bfloat16 and float16 (16-bit storage, attn.h "half precision"), in each
 * set (convert_kernel.inc.c, rows_half.inc.c):
 *   widen, narrow   to and from float over n elements, src and dst not
 *                   overlapping: widening exact; narrowing to nearest even,
 *                   overflow to +-INFINITY, a NaN a quiet NaN of its sign;
 *                   every set gives the same bits (half_bits.h is the
 *                   scalar set and the tails)
 *   narrow_scaled   dst = narrow(scale src) (the float product rounded,
 *                   then narrowed)
 *   rows_dot, rows_axpy  attn_rows_dot / attn_rows_axpy in float with B
 *                   (keys, values) in the half type, widened as loaded
 */
typedef void (*attn_half_widen_fn)(const uint16_t *src, float *dst, size_t n);
typedef void (*attn_half_narrow_fn)(const float *src, uint16_t *dst, size_t n);
typedef void (*attn_half_narrow_scaled_fn)(const float *src, float scale, uint16_t *dst,
                                           size_t n);
typedef void (*attn_rows_dot_half_fn)(size_t G, size_t R, size_t n, size_t d, const float *A,
                                      size_t lda, const uint16_t *B, size_t ldb, size_t ldg,
                                      float *S, size_t lds);
typedef void (*attn_rows_axpy_half_fn)(size_t G, size_t R, size_t n, size_t m, const float *P,
                                       size_t ldp, const uint16_t *B, size_t ldb, size_t ldg,
                                       float *C, size_t ldc);
typedef struct attn_half_kernels {
    attn_half_widen_fn widen;
    attn_half_narrow_fn narrow;
    attn_half_narrow_scaled_fn narrow_scaled;
    attn_rows_dot_half_fn rows_dot;
    attn_rows_axpy_half_fn rows_axpy;
} attn_half_kernels;
/* The kernels of `isa` for bfloat16 (bf16 != 0) or float16; all NULL for
 * a value outside attn_isa and for a set not built here. */
attn_half_kernels attn_half_kernels_of(attn_isa isa, int bf16);

/*
 * bfloat16 matrix products with float sums: a bf16 plan's Q K^T and P V
 * (engine/sdpa_bf16.h). Shapes and layouts:
 *   C (M, N) = A (M, K) B (K, N)  (accumulate 0)  or  C += A B  (1)
 *   A  bf16 rows lda apart; K a multiple of ATTN_BF16_K_STEP (the caller
 *      pads with zeros) and the rows up to M rounded to ATTN_BF16_M_STEP
 *      readable (tiles read whole; rows past M reach no stored element)
 *   B  attn_bf16_pack_*'s layout for a packed K of kb >= K (rows past K
 *      are not read): panels of ATTN_BF16_NR columns, panel p at
 *      p * kb * NR, element (k, j) of the panel at ((k/2) NR + j) 2 + k%2
 *      (pairs of k side by side: the operand of vdpbf16ps and of an AMX B
 *      tile), zero past N and past the packed rows
 *   C  float, rows ldc apart; only its (M, N) elements are read or written
 * Each element of C is a float sum of the exact products of bf16 numbers,
 * in an order of the kernel's own (pairs, then tiles of 32 along K); the
 * instructions take subnormal inputs and sums for zero.
 * round: float -> bf16 to nearest even (vcvtne2ps2bf16: a subnormal gives
 * a zero of its sign, a NaN a quiet NaN), for the products' A operand P.
 * round_transposed: A = (scale X)^T rounded so, X (rows, kc) float rows
 * ldx apart: dst (kp, np), kp = kc and np = rows rounded up to
 * ATTN_BF16_M_STEP and ATTN_BF16_K_STEP, dst[j np + q] = bf16(scale
 * X[q][j]), zero past rows and kc (the backward's P^T and dS^T).
 * softmax_online: the online block (attn_softmax_online_f32_fn above) with
 * p in bf16: each weight rounded as `round` does, the forward's P written
 * in the products' A layout directly; after a first block (m > -FLT_MAX)
 * m' may stay m, alpha 1, when no weight exp(scale s - m) exceeds 2^11
 * (m' is then a shift of the row's weights, below its max).
 */
#define ATTN_BF16_K_STEP 32
#define ATTN_BF16_M_STEP 32
#define ATTN_BF16_NR 64
typedef void (*attn_bf16_gemm_fn)(size_t M, size_t N, size_t K, const uint16_t *A, size_t lda,
                                  const uint16_t *B, size_t kb, int accumulate, float *C,
                                  size_t ldc);
typedef void (*attn_bf16_round_transposed_fn)(size_t rows, size_t kc, const float *X,
                                              size_t ldx, float scale, uint16_t *dst);
typedef float (*attn_bf16_softmax_online_fn)(const float *s, uint16_t *p, size_t n_valid,
                                             size_t n_total, float scale, float *max,
                                             float *sum);
typedef int (*attn_bf16_pack_fn)(size_t K, size_t N, const float *X, size_t ldx, uint16_t *B);
typedef int (*attn_bf16_pack16_fn)(size_t K, size_t N, const uint16_t *X, size_t ldx,
                                   uint16_t *B);
/* sum_i x_i y_i of n bf16 numbers, in double (each product exact). */
typedef double (*attn_bf16_dot_fn)(const uint16_t *x, const uint16_t *y, size_t n);
typedef struct attn_bf16_products {
    attn_bf16_gemm_fn gemm;
    attn_half_narrow_fn round;
    attn_bf16_round_transposed_fn round_transposed;
    attn_bf16_softmax_online_fn softmax_online;
    attn_bf16_pack_fn pack; /* attn_bf16_pack below, vectorized */
    attn_half_narrow_scaled_fn round_scaled; /* round of scale src (float product) */
    attn_bf16_pack16_fn pack16; /* attn_bf16_pack_bf16 below, vectorized */
    attn_bf16_dot_fn dot;   /* the backward's row sums <dout, out> */
} attn_bf16_products;
/* B = X^T for X (N, K) of float rows ldx apart, or B = X for X (K, N), in
 * the layout above with the packed K = K rounded up to ATTN_BF16_K_STEP;
 * X holds bf16 values (a bf16 plan's widened copies): the top 16 bits of
 * each float are taken as they are (exact). Returns whether every value
 * of X packed is finite. Portable (bf16_pack.c). */
int attn_bf16_pack_transposed(size_t N, size_t K, const float *X, size_t ldx, uint16_t *B);
int attn_bf16_pack(size_t K, size_t N, const float *X, size_t ldx, uint16_t *B);
/* The same from X's bf16 bits (a bf16 forward's K and V in place). */
int attn_bf16_pack_transposed_bf16(size_t N, size_t K, const uint16_t *X, size_t ldx,
                                   uint16_t *B);
int attn_bf16_pack_bf16(size_t K, size_t N, const uint16_t *X, size_t ldx, uint16_t *B);
/* Whether the CPU has AVX512-BF16, and AMX-BF16 with the OS's permission
 * for the tile data (bf16_products.c; asked once). */
int attn_cpu_has_bf16_dot(void);
int attn_cpu_has_amx_bf16(void);
/* Whether vdpbf16ps outruns float FMAs here (not on Intel's cores): the
 * avx512-bf16 set is only the default where it does. */
int attn_cpu_bf16_dot_is_fast(void);
/* The products of each (avx512/bf16_dot_avx512.c, avx512/bf16_amx.c; x86-64
 * builds only) and of `isa`: NULLs for a set without them. */
void attn_bf16_gemm_avx512_bf16(size_t M, size_t N, size_t K, const uint16_t *A, size_t lda,
                                const uint16_t *B, size_t kb, int accumulate, float *C,
                                size_t ldc);
void attn_bf16_gemm_amx(size_t M, size_t N, size_t K, const uint16_t *A, size_t lda,
                        const uint16_t *B, size_t kb, int accumulate, float *C, size_t ldc);
void attn_bf16_round_avx512_bf16(const float *src, uint16_t *dst, size_t n);
void attn_bf16_round_scaled_avx512_bf16(const float *src, float scale, uint16_t *dst, size_t n);
void attn_bf16_round_transposed_avx512_bf16(size_t rows, size_t kc, const float *X, size_t ldx,
                                            float scale, uint16_t *dst);
int attn_bf16_pack_avx512_bf16(size_t K, size_t N, const float *X, size_t ldx, uint16_t *B);
int attn_bf16_pack16_avx512_bf16(size_t K, size_t N, const uint16_t *X, size_t ldx,
                                 uint16_t *B);
double attn_bf16_dot_avx512_bf16(const uint16_t *x, const uint16_t *y, size_t n);
float attn_bf16_softmax_online_avx512_bf16(const float *s, uint16_t *p, size_t n_valid,
                                           size_t n_total, float scale, float *max, float *sum);
attn_bf16_products attn_bf16_products_of(attn_isa isa);

#endif /* ATTN_KERNELS_H */
