/* The clock and the phase names of profiling (profile.h, attn.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "engine/profile.h"

#include <time.h>

uint64_t attn_profile_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

const char *attn_phase_name(attn_phase phase)
{
    static const char *const names[ATTN_PHASE_COUNT] = {
        [ATTN_PHASE_PACK] = "pack",
        [ATTN_PHASE_PROJECTIONS] = "projections",
        [ATTN_PHASE_TRANSPOSE] = "transpose",
        [ATTN_PHASE_SCORES] = "scores",
        [ATTN_PHASE_SOFTMAX] = "softmax",
        [ATTN_PHASE_WEIGHTED_SUM] = "weighted_sum",
        [ATTN_PHASE_OUTPUT] = "output",
        [ATTN_PHASE_BACKWARD_PACK] = "backward_pack",
        [ATTN_PHASE_BACKWARD_OUTPUT] = "backward_output",
        [ATTN_PHASE_BACKWARD_TRANSPOSE] = "backward_transpose",
        [ATTN_PHASE_BACKWARD_VALUES] = "backward_values",
        [ATTN_PHASE_BACKWARD_WEIGHTS] = "backward_weights",
        [ATTN_PHASE_BACKWARD_SOFTMAX] = "backward_softmax",
        [ATTN_PHASE_BACKWARD_SCORES] = "backward_scores",
        [ATTN_PHASE_BACKWARD_PROJECTIONS] = "backward_projections",
        [ATTN_PHASE_BACKWARD_INPUT] = "backward_input",
        [ATTN_PHASE_BACKWARD_RECOMPUTE] = "backward_recompute",
    };
    return (unsigned)phase < ATTN_PHASE_COUNT ? names[phase] : "unknown";
}
