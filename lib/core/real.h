/*
 * Element-type template. Every source listed under ATTN_PRECISION_SOURCES in
 * lib/CMakeLists.txt is compiled twice, with ATTN_REAL_BITS=32 (float) and
 * ATTN_REAL_BITS=64 (double); this header turns that into
 *   real        the element type
 *   FN(name)    name_f32 or name_f64 (public and internal symbols alike)
 *   REAL_C(x)   a literal of type real
 *   ATTN_REAL_MAX  the largest finite real
 */
#ifndef ATTN_REAL_H
#define ATTN_REAL_H

#include <float.h>

#if !defined(ATTN_REAL_BITS)
#error "compile this source with ATTN_REAL_BITS=32 or ATTN_REAL_BITS=64"
#elif ATTN_REAL_BITS == 32
typedef float real;
#define ATTN_REAL_MAX FLT_MAX
#define ATTN_CONCAT_(a, b) a##_f32
#define REAL_C(x) x##f
#elif ATTN_REAL_BITS == 64
typedef double real;
#define ATTN_REAL_MAX DBL_MAX
#define ATTN_CONCAT_(a, b) a##_f64
#define REAL_C(x) x
#else
#error "ATTN_REAL_BITS must be 32 or 64"
#endif

#define FN(name) ATTN_CONCAT_(name, ATTN_REAL_BITS)

#endif /* ATTN_REAL_H */
