/*
 * test_api: the library's self-description.
 *   - attn_status_string: never NULL, a distinct non-empty text for every
 *     status (the contiguous values from ATTN_OK to the last, ATTN_ERR_BAD_DROPOUT
 *     = 19, exactly; the sdpa statuses ATTN_ERR_PLAN_KIND = 17 and
 *     ATTN_ERR_BAD_LENGTH = 18 at their values), and "unknown attn_status"
 *     (distinct from all of them) for every value outside the enum,
 *     negative ones included;
 *   - attn_version_number() == ATTN_VERSION_NUMBER and attn_version_string()
 *     equals ATTN_VERSION_STRING (the header and the linked library agree);
 *   - attn_simd_name() is "avx512", "avx2", "neon" or "scalar", equals the
 *     name of the active kernel set, and honours ATTN_SIMD when the CPU
 *     supports the requested set (ctest runs this program once per ATTN_SIMD
 *     value);
 *   - the scalar kernels always exist and are always supported; every
 *     supported set has its kernels (a set of another architecture has none
 *     and is unsupported).
 * No tolerances: every check is an exact comparison.
 */
#include <stdlib.h>
#include <string.h>

#include "support/test_common.h"

/* The statuses are the contiguous values 0..count-1 (the enum grows with the
 * API); every value past them is unknown. */
static void status_strings(void **state)
{
    (void)state;
    enum { PROBE = 256 };
    const char *unknown = "unknown attn_status";
    const char *texts[PROBE];
    int count = 0;
    while (count < PROBE) {
        texts[count] = attn_status_string((attn_status)count);
        check_true(texts[count] != NULL, "status %d gives NULL", count);
        if (strcmp(texts[count], unknown) == 0)
            break;
        check_true(texts[count][0] != '\0', "status %d has an empty text", count);
        count++;
    }
    print_message("  %d statuses\n", count);
    check_true(count == ATTN_ERR_BAD_DROPOUT + 1, "%d statuses have a text, the enum has %d",
               count, ATTN_ERR_BAD_DROPOUT + 1);
    /* the values of the enum are its ABI: the last ones the sdpa calls and
     * dropout added */
    check_true(ATTN_ERR_BAD_THREADS == 16 && ATTN_ERR_PLAN_KIND == 17 &&
                   ATTN_ERR_BAD_LENGTH == 18 && ATTN_ERR_BAD_DROPOUT == 19,
               "the status values moved: BAD_THREADS %d, PLAN_KIND %d, BAD_LENGTH %d, "
               "BAD_DROPOUT %d",
               (int)ATTN_ERR_BAD_THREADS, (int)ATTN_ERR_PLAN_KIND, (int)ATTN_ERR_BAD_LENGTH,
               (int)ATTN_ERR_BAD_DROPOUT);
    for (int s = count; s < PROBE; s++)
        assert_string_equal(attn_status_string((attn_status)s), unknown);
    assert_string_equal(attn_status_string((attn_status)-1), unknown);
    assert_string_equal(attn_status_string((attn_status)100000), unknown);
    texts[count] = unknown;
    for (int a = 0; a <= count; a++)
        for (int b = a + 1; b <= count; b++)
            check_true(strcmp(texts[a], texts[b]) != 0, "statuses %d and %d share \"%s\"", a, b,
                       texts[a]);
}

static void version(void **state)
{
    (void)state;
    assert_int_equal(attn_version_number(), ATTN_VERSION_NUMBER);
    check_true(attn_version_string() != NULL, "version string is NULL");
    assert_string_equal(attn_version_string(), ATTN_VERSION_STRING);
}

static void simd_name(void **state)
{
    (void)state;
    const char *name = attn_simd_name();
    check_true(name != NULL, "attn_simd_name() is NULL");
    check_true(strcmp(name, "amx") == 0 || strcmp(name, "avx512-bf16") == 0 ||
                   strcmp(name, "avx512") == 0 || strcmp(name, "avx2") == 0 ||
                   strcmp(name, "neon") == 0 || strcmp(name, "scalar") == 0,
               "attn_simd_name() = \"%s\"", name);
    attn_isa active = attn_isa_active();
    check_true(attn_isa_supported(active), "active kernel set %d unsupported", (int)active);
    assert_string_equal(name, attn_isa_name(active));
    print_message("  kernel set: %s\n", name);

    const char *forced = getenv("ATTN_SIMD");
    if (forced == NULL)
        return;
    for (int isa = 0; isa < ATTN_ISA_COUNT; isa++)
        if (strcmp(forced, attn_isa_name((attn_isa)isa)) == 0) {
            if (attn_isa_supported((attn_isa)isa))
                assert_string_equal(name, forced);
            else
                print_message("  ATTN_SIMD=%s: not supported by this CPU\n", forced);
        }
}

static void scalar_kernels_exist(void **state)
{
    (void)state;
    check_true(attn_isa_supported(ATTN_ISA_SCALAR), "scalar unsupported");
    check_true(attn_softmax_row_kernel_f32(ATTN_ISA_SCALAR) != NULL, "no scalar f32 softmax");
    check_true(attn_softmax_row_kernel_f64(ATTN_ISA_SCALAR) != NULL, "no scalar f64 softmax");
    check_true(attn_exp_kernel_f32(ATTN_ISA_SCALAR) != NULL, "no scalar f32 exp");
    check_true(attn_exp_kernel_f64(ATTN_ISA_SCALAR) != NULL, "no scalar f64 exp");
}

/* A supported set has every kernel; one without kernels (not built for this
 * architecture) is not supported. */
static void supported_sets_have_kernels(void **state)
{
    (void)state;
    for (int i = 0; i < ATTN_ISA_COUNT; i++) {
        const attn_isa isa = (attn_isa)i;
        const int built = attn_softmax_row_kernel_f32(isa) != NULL &&
                          attn_softmax_rows_kernel_f64(isa) != NULL &&
                          attn_gemm_kernel_f32(isa) != NULL && attn_gemm_kernel_f64(isa) != NULL &&
                          attn_rows_axpy_kernel_f32(isa) != NULL &&
                          attn_gemm_panel_kernel_f64(isa) != NULL;
        print_message("  %s: %s\n", attn_isa_name(isa),
                      attn_isa_supported(isa) ? "supported" : built ? "built, unsupported"
                                                                    : "not built");
        if (attn_isa_supported(isa))
            check_true(built, "%s is supported but lacks kernels", attn_isa_name(isa));
    }
}

int main(void)
{
    if (isa_variant_skipped(0))
        return TEST_SKIPPED;
    const struct CMUnitTest tests[] = {
        PLAIN_CASE(status_strings),
        PLAIN_CASE(version),
        PLAIN_CASE(simd_name),
        PLAIN_CASE(scalar_kernels_exist),
        PLAIN_CASE(supported_sets_have_kernels),
    };
    return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
