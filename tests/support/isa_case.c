/* The (precision, kernel set) states of the kernel suites, and the skip of
 * a registration for a kernel set the library does not run (see
 * test_common.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_common.h"

const isa_case isa_cases[2][ATTN_ISA_COUNT] = {
    {{&test_prec_f32, ATTN_ISA_SCALAR}, {&test_prec_f32, ATTN_ISA_AVX2},
     {&test_prec_f32, ATTN_ISA_AVX512}, {&test_prec_f32, ATTN_ISA_NEON}},
    {{&test_prec_f64, ATTN_ISA_SCALAR}, {&test_prec_f64, ATTN_ISA_AVX2},
     {&test_prec_f64, ATTN_ISA_AVX512}, {&test_prec_f64, ATTN_ISA_NEON}},
};

const isa_case *isa_case_enter(void **state)
{
    const isa_case *c = *state;
    if (!attn_isa_supported(c->isa)) {
        print_message("  skipped: this CPU or build cannot run the %s kernels\n",
                      attn_isa_name(c->isa));
        skip();
    }
    if (!c->prec->has_kernels(c->isa)) {
        print_message("  skipped: the library was built without %s kernels\n",
                      attn_isa_name(c->isa));
        skip();
    }
    return c;
}

int isa_variant_skipped(int kernel_suite)
{
    const char *forced = getenv("ATTN_SIMD");
    if (forced == NULL || forced[0] == '\0')
        return 0;
    if (strcmp(forced, attn_simd_name()) != 0) {
        printf("skipped: ATTN_SIMD=%s, but the library runs the %s kernels here (the CPU or "
               "the build lacks %s)\n",
               forced, attn_simd_name(), forced);
        return 1;
    }
    if (kernel_suite) { /* the cases "<isa>/<precision>/<test>" of this set */
        static char pattern[64];
        snprintf(pattern, sizeof pattern, "%s/*", forced);
        cmocka_set_test_filter(pattern);
    }
    return 0;
}
