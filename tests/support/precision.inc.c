/*
 * Template of one test_prec (see precision.h); precision.c includes it once
 * per element type with
 *   REAL        float or double
 *   SFX(name)   name##_f32 or name##_f64
 *   SFX_DTYPE   ATTN_F32 or ATTN_F64
 *   SFX_OTHER   the test_prec of the other element type
 */

static double SFX(round)(double x)
{
    return (double)(REAL)x;
}

static double SFX(next_up)(double x)
{
    return (double)SFX(nextafter_real)((REAL)x, (REAL)INFINITY);
}

static void SFX(from_double)(void *dst, const double *src, size_t n)
{
    REAL *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = (REAL)src[i];
}

static void SFX(to_double)(double *dst, const void *src, size_t n)
{
    const REAL *s = src;
    for (size_t i = 0; i < n; i++)
        dst[i] = (double)s[i];
}

static attn_status SFX(softmax_rows)(void *x, size_t rows, size_t cols, size_t ld)
{
    return SFX(attn_softmax_rows)(x, rows, cols, ld);
}

static attn_status SFX(lookup)(size_t Tq, size_t Tk, size_t d, size_t dv, double scale,
                               const void *q, const void *k, const void *v, void *out,
                               void *weights)
{
    return SFX(attn_lookup)(Tq, Tk, d, dv, scale, q, k, v, out, weights);
}

static attn_status SFX(self_attention)(size_t B, size_t T, size_t C, size_t hs, int causal,
                                       const void *X, const void *Wq, const void *Wk,
                                       const void *Wv, void *out, void *weights)
{
    return SFX(attn_self_attention)(B, T, C, hs, causal, X, Wq, Wk, Wv, out, weights);
}

static attn_status SFX(mha_forward)(size_t B, size_t T, size_t C, size_t NH, int causal,
                                    const void *X, const void *Wq, const void *Wk,
                                    const void *Wv, const void *Wo, void *out)
{
    return SFX(attn_mha_forward)(B, T, C, NH, causal, X, Wq, Wk, Wv, Wo, out);
}

static attn_status SFX(mha_backward)(size_t B, size_t T, size_t C, size_t NH, int causal,
                                     const void *X, const void *Wq, const void *Wk,
                                     const void *Wv, const void *Wo, const void *dout,
                                     void *dX, void *dWq, void *dWk, void *dWv, void *dWo)
{
    return SFX(attn_mha_backward)(B, T, C, NH, causal, X, Wq, Wk, Wv, Wo, dout, dX, dWq, dWk,
                                  dWv, dWo);
}

static attn_status SFX(forward)(attn_plan *plan, const void *X, const void *Wq, const void *Wk,
                                const void *Wv, const void *Wo, void *out, void *weights)
{
    return SFX(attn_forward)(plan, X, Wq, Wk, Wv, Wo, out, weights);
}

static attn_status SFX(backward)(attn_plan *plan, const void *X, const void *Wq,
                                 const void *Wk, const void *Wv, const void *Wo,
                                 const void *dout, void *dX, void *dWq, void *dWk, void *dWv,
                                 void *dWo)
{
    return SFX(attn_backward)(plan, X, Wq, Wk, Wv, Wo, dout, dX, dWq, dWk, dWv, dWo);
}

static int SFX(has_kernels)(attn_isa isa)
{
    return SFX(attn_softmax_row_kernel)(isa) != NULL && SFX(attn_exp_kernel)(isa) != NULL;
}

static int SFX(softmax_row)(attn_isa isa, const void *x, void *y, size_t n_valid,
                            size_t n_total, double scale)
{
    SFX(attn_softmax_row_fn) kernel = SFX(attn_softmax_row_kernel)(isa);
    if (kernel == NULL)
        return 0;
    kernel(x, y, n_valid, n_total, (REAL)scale);
    return 1;
}

static int SFX(exp)(attn_isa isa, const void *x, void *y, size_t n)
{
    SFX(attn_exp_fn) kernel = SFX(attn_exp_kernel)(isa);
    if (kernel == NULL)
        return 0;
    kernel(x, y, n);
    return 1;
}

static int SFX(softmax_online)(attn_isa isa, const void *s, void *p, size_t n_valid,
                               size_t n_total, double scale, double *running_max,
                               double *running_sum, double *alpha)
{
    SFX(attn_softmax_online_fn) kernel = SFX(attn_softmax_online_kernel)(isa);
    if (kernel == NULL)
        return 0;
    REAL max = (REAL)*running_max, sum = (REAL)*running_sum;
    *alpha = (double)kernel(s, p, n_valid, n_total, (REAL)scale, &max, &sum);
    *running_max = (double)max;
    *running_sum = (double)sum;
    return 1;
}

static int SFX(gemm)(attn_isa isa, int trans_a, int trans_b, size_t M, size_t N, size_t K,
                     double alpha, const void *A, size_t lda, const void *B, size_t ldb,
                     double beta, void *C, size_t ldc, void *pack)
{
    SFX(attn_gemm_fn) kernel = SFX(attn_gemm_kernel)(isa);
    if (kernel == NULL)
        return 0;
    kernel(trans_a, trans_b, M, N, K, (REAL)alpha, A, lda, B, ldb, (REAL)beta, C, ldc, pack);
    return 1;
}

static int SFX(gemm_lower)(attn_isa isa, size_t M, size_t N, const void *A, size_t lda,
                           const void *B, size_t ldb, double beta, void *C, size_t ldc,
                           void *pack)
{
    SFX(attn_gemm_lower_fn) kernel = SFX(attn_gemm_lower_kernel)(isa);
    if (kernel == NULL)
        return 0;
    kernel(M, N, A, lda, B, ldb, (REAL)beta, C, ldc, pack);
    return 1;
}

static int SFX(gemm_shared_a)(attn_isa isa, int trans_a, int trans_b, size_t M, size_t N,
                              size_t K, const void *A, size_t lda, size_t count,
                              const void *const *B, size_t ldb, const void *const *prepacked,
                              void *const *C, size_t ldc, void *pack)
{
    SFX(attn_gemm_shared_a_fn) kernel = SFX(attn_gemm_shared_a_kernel)(isa);
    if (kernel == NULL)
        return 0;
    kernel(trans_a, trans_b, M, N, K, (REAL)1, A, lda, count, (const REAL *const *)B, ldb,
           (const REAL *const *)prepacked, (REAL)0, (REAL *const *)C, ldc, pack);
    return 1;
}

static int SFX(gemm_pack_b)(attn_isa isa, int trans_b, size_t K, size_t N, const void *B,
                            size_t ldb, size_t k0, void *packed)
{
    SFX(attn_gemm_pack_b_fn) kernel = SFX(attn_gemm_pack_b_kernel)(isa);
    if (kernel == NULL)
        return 0;
    kernel(trans_b, K, N, B, ldb, k0, packed);
    return 1;
}

const test_prec SFX(test_prec) = {
    .name = SFX_NAME,
    .size = sizeof(REAL),
    .tol = SFX_TOL,
    .epsilon = SFX_EPSILON,
    .max = SFX_MAX,
    .min_normal = SFX_MIN_NORMAL,
    .round = SFX(round),
    .next_up = SFX(next_up),
    .from_double = SFX(from_double),
    .to_double = SFX(to_double),
    .softmax_rows = SFX(softmax_rows),
    .lookup = SFX(lookup),
    .self_attention = SFX(self_attention),
    .mha_forward = SFX(mha_forward),
    .mha_backward = SFX(mha_backward),
    .dtype = SFX_DTYPE,
    .forward = SFX(forward),
    .backward = SFX(backward),
    .other = &SFX_OTHER,
    .has_kernels = SFX(has_kernels),
    .softmax_row = SFX(softmax_row),
    .exp = SFX(exp),
    .softmax_online = SFX(softmax_online),
    .gemm = SFX(gemm),
    .gemm_lower = SFX(gemm_lower),
    .gemm_shared_a = SFX(gemm_shared_a),
    .gemm_pack_b = SFX(gemm_pack_b),
};
