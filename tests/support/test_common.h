/*
 * Common includes of the test programs: cmocka (with the headers it needs
 * first) and the shared helpers. PREC_CASES(fn) registers one test function
 * twice, with the float and the double test_prec as its state; every test
 * frees its talloc buffers in teardown.
 */
#ifndef ATTN_TEST_COMMON_H
#define ATTN_TEST_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <attn/attn.h>

#include "support/check.h"
#include "support/precision.h"
#include "reference/reference.h"
#include "support/rng.h"
#include "support/talloc.h"

#define CASE_WITH_STATE(name, fn, state) {name, fn, NULL, talloc_teardown, (void *)(state)}
#define PREC_CASES(fn)                                        \
    CASE_WITH_STATE("f32/" #fn, fn, &test_prec_f32),          \
    CASE_WITH_STATE("f64/" #fn, fn, &test_prec_f64)
#define PLAIN_CASE(fn) CASE_WITH_STATE(#fn, fn, NULL)

/* the number of elements of an array */
#define N_OF(array) (sizeof(array) / sizeof((array)[0]))

/* One (element type, kernel set) pair: the state of the kernel tests. */
typedef struct isa_case {
    const test_prec *prec;
    attn_isa isa;
} isa_case;
/* [precision (0 f32, 1 f64)][isa] */
extern const isa_case isa_cases[2][ATTN_ISA_COUNT];

/* ISA_CASES(fn) registers fn once per precision and kernel set (those of
 * another architecture are skipped by isa_case_enter). */
#define ISA_CASES(fn)                                                      \
    CASE_WITH_STATE("scalar/f32/" #fn, fn, &isa_cases[0][ATTN_ISA_SCALAR]), \
    CASE_WITH_STATE("avx2/f32/" #fn, fn, &isa_cases[0][ATTN_ISA_AVX2]),     \
    CASE_WITH_STATE("avx512/f32/" #fn, fn, &isa_cases[0][ATTN_ISA_AVX512]), \
    CASE_WITH_STATE("neon/f32/" #fn, fn, &isa_cases[0][ATTN_ISA_NEON]),     \
    CASE_WITH_STATE("scalar/f64/" #fn, fn, &isa_cases[1][ATTN_ISA_SCALAR]), \
    CASE_WITH_STATE("avx2/f64/" #fn, fn, &isa_cases[1][ATTN_ISA_AVX2]),     \
    CASE_WITH_STATE("avx512/f64/" #fn, fn, &isa_cases[1][ATTN_ISA_AVX512]), \
    CASE_WITH_STATE("neon/f64/" #fn, fn, &isa_cases[1][ATTN_ISA_NEON])

/* The isa_case of an ISA_CASES test; skips the test (with a message) when
 * the CPU cannot run the kernel set or the library was built without it. */
const isa_case *isa_case_enter(void **state);

/* The exit status of a program that tested nothing here: ctest reports it as
 * skipped (SKIP_RETURN_CODE, set on every registration). */
#define TEST_SKIPPED 77

/* For main() of every program registered per kernel set (<name>.<isa>, run
 * with ATTN_SIMD=<isa>), before anything else: true, after printing why,
 * when ATTN_SIMD names a kernel set that the library does not run here (the
 * CPU or the build lacks it, or no such set exists): the program must then
 * return TEST_SKIPPED rather than pass having tested another set. With
 * kernel_suite set (the programs of ISA_CASES) the run is also restricted to
 * the cases of that set. Without ATTN_SIMD: false, every case runs. */
int isa_variant_skipped(int kernel_suite);

/* the test_prec a PREC_CASES test runs with */
#define TEST_PREC(state) ((const test_prec *)*(state))

#endif /* ATTN_TEST_COMMON_H */
