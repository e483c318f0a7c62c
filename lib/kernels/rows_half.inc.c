/*
 * The few-row products of rows_kernel.inc.c on bfloat16 or float16 keys
 * and values, in float: the decode step of a half plan reads its cache in
 * place, half the bytes of a float one, each row widened in registers
 * (the vocabulary's v_load_bf16 / v_load_f16). The including file names
 *   ROWS_HALF_VOCABULARY  the kernel set's vocabulary header
 *   ROWS_HALF_BF16        1: bfloat16, 0: float16
 *   ROWS_HALF_NAME(kernel)  the kernels' names, of kernel dot and axpy
 * Compiled once, in float.
 */
#define ATTN_REAL_BITS 32
#include <stdint.h>
#include <string.h>

#include ROWS_HALF_VOCABULARY

#if ROWS_HALF_BF16
#define ROWS_LOAD_B(p) v_load_bf16(p)
#else
#define ROWS_LOAD_B(p) v_load_f16(p)
#endif

/* n < VLEN elements at p, the rest 0. */
static inline vec rows_load_half_part(const uint16_t *p, size_t n)
{
    uint16_t t[VLEN] = {0};
    memcpy(t, p, n * sizeof *p);
    return ROWS_LOAD_B(t);
}

#define ROWS_DOT_NAME ROWS_HALF_NAME(dot)
#define ROWS_AXPY_NAME ROWS_HALF_NAME(axpy)
#define ROWS_B uint16_t
#define ROWS_LOAD_B_PART(p, n) rows_load_half_part(p, n)
#include "kernels/rows_kernel.inc.c"
