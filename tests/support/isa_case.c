/* The (precision, kernel set) states of the kernel suites (see test_common.h). */
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
