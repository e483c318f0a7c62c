/*
 * overhead_c — the C side of python/benchmarks/overhead.py, built by it as a
 * shared library (linked to the package's own libattn) and called through
 * ctypes, so that the C loops and the Python loops run in one process, on
 * the same arrays, interleaved repeat by repeat.
 *
 * Each function makes `calls` calls from C and returns the mean nanoseconds
 * per call (a negative value if a call failed). The timed calls are the
 * ones the Python benchmark makes through the package:
 *   overhead_oneshot_ns  attn_sdpa_f32(shape, scale 0, flags 0, window 0, a)
 *   overhead_plan_ns     attn_sdpa_forward_f32(plan, a)
 */
#include <attn/attn.h>

#include <time.h>

#if defined(__GNUC__)
#define OVERHEAD_API __attribute__((visibility("default")))
#else
#define OVERHEAD_API
#endif

OVERHEAD_API double overhead_oneshot_ns(const attn_sdpa_shape *shape,
                                        const attn_sdpa_args_f32 *a, size_t calls);
OVERHEAD_API double overhead_plan_ns(attn_plan *plan, const attn_sdpa_args_f32 *a,
                                     size_t calls);

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double overhead_oneshot_ns(const attn_sdpa_shape *shape, const attn_sdpa_args_f32 *a,
                           size_t calls) {
    if (calls == 0) return -1.0;
    double t0 = now_ns();
    for (size_t c = 0; c < calls; ++c) {
        if (attn_sdpa_f32(shape, 0.0, 0u, 0, a) != ATTN_OK) return -1.0;
    }
    return (now_ns() - t0) / (double)calls;
}

double overhead_plan_ns(attn_plan *plan, const attn_sdpa_args_f32 *a, size_t calls) {
    if (calls == 0) return -1.0;
    double t0 = now_ns();
    for (size_t c = 0; c < calls; ++c) {
        if (attn_sdpa_forward_f32(plan, a) != ATTN_OK) return -1.0;
    }
    return (now_ns() - t0) / (double)calls;
}
