/* The two rt_prec (ring_support.h), from one template (ring_prec.inc.c). */
#include "ring_support.h"

#define REAL float
#define SFX(name) name##_f32
#include "ring_prec.inc.c"
#undef REAL
#undef SFX

#define REAL double
#define SFX(name) name##_f64
#include "ring_prec.inc.c"
#undef REAL
#undef SFX

const rt_prec rt_f32 = {"f32", ATTN_F32, sizeof(float), 1e-5, 0, from_double_f32, to_double_f32,
                        sdpa_forward_f32, sdpa_backward_f32, ring_forward_f32,
                        ring_backward_f32, &rt_f64};
const rt_prec rt_f64 = {"f64", ATTN_F64, sizeof(double), 1e-12, 1, from_double_f64,
                        to_double_f64, sdpa_forward_f64, sdpa_backward_f64, ring_forward_f64,
                        ring_backward_f64, &rt_f32};
