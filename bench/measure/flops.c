#include "measure/flops.h"

const char bench_flops_formula[] =
    "forward 3*2*B*T*C*D (projections) + 2*2*B*T*T*D (scores, weights x V; causal: half)"
    " + 2*B*T*D*C with Wo; backward rows count 3 x the forward (the backward's GEMMs are"
    " twice the forward's); D = NH*hs, a multiply-add counts 2, the softmax is not counted;"
    " every implementation is credited with the same count";

double bench_forward_flops(const bench_shape *s)
{
    double rows = (double)s->B * (double)s->T;
    double D = (double)s->NH * (double)s->hs;
    double visible = s->causal ? 0.5 : 1.0; /* share of the T*T products counted */
    double projections = 3.0 * 2.0 * rows * (double)s->C * D;
    double scores_and_mixing = 2.0 * 2.0 * rows * (double)s->T * D * visible;
    double output = s->wo ? 2.0 * rows * D * (double)s->C : 0.0;
    return projections + scores_and_mixing + output;
}

double bench_shape_flops(const bench_shape *s)
{
    double forward = bench_forward_flops(s);
    return s->op == BENCH_OP_BACKWARD ? 3.0 * forward : forward;
}
