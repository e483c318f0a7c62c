/*
 * Instantiates a template source for both precisions. Before including this
 * file, define BENCH_TEMPLATE as the template's name in quotes; the template
 * sees REAL (float, double) and SUFFIX (f32, f64) and names its functions
 * with them.
 */
#ifndef BENCH_TEMPLATE
#error "define BENCH_TEMPLATE before including precisions.inc.c"
#endif

#define REAL float
#define SUFFIX f32
#include BENCH_TEMPLATE
#undef REAL
#undef SUFFIX

#define REAL double
#define SUFFIX f64
#include BENCH_TEMPLATE
#undef REAL
#undef SUFFIX

#undef BENCH_TEMPLATE
