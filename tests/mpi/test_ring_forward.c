/*
 * test_ring_forward: attn_ring_forward_* on every problem of ring_cases.c,
 * both precisions, against attn_sdpa_forward_* on the gathered sequence
 * (computed on every rank): the rank's out and lse rows within the
 * suite's tolerance (ring_support.h: max|got - ref| / max|ref|, f64 1e-12,
 * f32 1e-5), in every layout of ring_cases.c ((B,T,NH,hs) rows, (B,NH,T,hs),
 * fused QKV), the gaps of strided outputs untouched. Run by ctest under
 * mpirun with 1 to 4 ranks.
 */
#include "ring_support.h"

int main(int argc, char **argv)
{
    rt_ctx ctx;
    rt_init(&ctx, &argc, &argv);
    const rt_prec *precs[] = {&rt_f32, &rt_f64};
    for (size_t c = 0; c < rt_case_count; c++)
        for (int k = 0; k < 2; k++)
            rt_run_problem(&ctx, precs[k], &rt_cases[c], 0, rt_case_names[c]);
    return rt_finish(&ctx, "test_ring_forward");
}
