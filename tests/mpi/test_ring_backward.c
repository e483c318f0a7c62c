/*
 * test_ring_backward: attn_ring_backward_* (after attn_ring_forward_*) on
 * every problem of ring_cases.c that keeps its lse, both precisions,
 * against attn_sdpa_backward_* on the gathered sequence (computed on every
 * rank): the rank's dQ, dK, dV rows (dK, dV summed over the query heads of
 * each group and over every rank's queries) within the suite's tolerance
 * (ring_support.h), in every layout of ring_cases.c ((B,T,NH,hs) rows,
 * (B,NH,T,hs), fused QKV and dQKV), the gaps of strided gradients untouched. Run by ctest
 * under mpirun with 1 to 4 ranks.
 */
#include "ring_support.h"

int main(int argc, char **argv)
{
    rt_ctx ctx;
    rt_init(&ctx, &argc, &argv);
    const rt_prec *precs[] = {&rt_f32, &rt_f64};
    for (size_t c = 0; c < rt_case_count; c++)
        for (int k = 0; k < 2; k++)
            if (!rt_cases[c].no_lse)
                rt_run_problem(&ctx, precs[k], &rt_cases[c], 1, rt_case_names[c]);
    return rt_finish(&ctx, "test_ring_backward");
}
