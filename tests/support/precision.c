/* The two test_prec instances, from one template (precision.inc.c). */
#include "support/precision.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "support/talloc.h"

/* kernels.h names its typedefs by precision; give them SFX-able names */
typedef attn_softmax_row_f32_fn attn_softmax_row_fn_f32;
typedef attn_softmax_row_f64_fn attn_softmax_row_fn_f64;
typedef attn_exp_f32_fn attn_exp_fn_f32;
typedef attn_exp_f64_fn attn_exp_fn_f64;
typedef attn_softmax_online_f32_fn attn_softmax_online_fn_f32;
typedef attn_softmax_online_f64_fn attn_softmax_online_fn_f64;
typedef attn_gemm_f32_fn attn_gemm_fn_f32;
typedef attn_gemm_f64_fn attn_gemm_fn_f64;
typedef attn_gemm_lower_f32_fn attn_gemm_lower_fn_f32;
typedef attn_gemm_lower_f64_fn attn_gemm_lower_fn_f64;
typedef attn_gemm_shared_a_f32_fn attn_gemm_shared_a_fn_f32;
typedef attn_gemm_shared_a_f64_fn attn_gemm_shared_a_fn_f64;
typedef attn_gemm_pack_b_f32_fn attn_gemm_pack_b_fn_f32;
typedef attn_gemm_pack_b_f64_fn attn_gemm_pack_b_fn_f64;
#define nextafter_real_f32 nextafterf
#define nextafter_real_f64 nextafter

/* each instance names the other one (.other) */
extern const test_prec test_prec_f32;
extern const test_prec test_prec_f64;

#define REAL float
#define SFX(name) name##_f32
#define SFX_NAME "f32"
#define SFX_TOL 1e-5
#define SFX_EPSILON ((double)FLT_EPSILON)
#define SFX_MAX ((double)FLT_MAX)
#define SFX_MIN_NORMAL ((double)FLT_MIN)
#define SFX_DTYPE ATTN_F32
#define SFX_OTHER test_prec_f64
#include "support/precision.inc.c"
#undef REAL
#undef SFX
#undef SFX_NAME
#undef SFX_TOL
#undef SFX_EPSILON
#undef SFX_MAX
#undef SFX_MIN_NORMAL
#undef SFX_DTYPE
#undef SFX_OTHER

#define REAL double
#define SFX(name) name##_f64
#define SFX_NAME "f64"
#define SFX_TOL 1e-12
#define SFX_EPSILON DBL_EPSILON
#define SFX_MAX DBL_MAX
#define SFX_MIN_NORMAL DBL_MIN
#define SFX_DTYPE ATTN_F64
#define SFX_OTHER test_prec_f32
#include "support/precision.inc.c"

void prec_round_array(const test_prec *p, double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = p->round(x[i]);
}

void *prec_typed(const test_prec *p, const double *src, size_t n)
{
    void *dst = talloc(n * p->size);
    p->from_double(dst, src, n);
    return dst;
}

double *prec_doubles(const test_prec *p, const void *src, size_t n)
{
    double *dst = talloc(n * sizeof(double));
    p->to_double(dst, src, n);
    return dst;
}

void *prec_at(const test_prec *p, void *base, size_t i)
{
    return (char *)base + i * p->size;
}
