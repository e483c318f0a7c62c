/*
 * The calls of one precision, instantiated by attn_call.c through
 * precisions.inc.c (SUFFIX f32 or f64), so the two precisions share one
 * source.
 */
#define GLUE_(name, suffix) name##_##suffix
#define GLUE(name, suffix) GLUE_(name, suffix)
#define TYPED(name) GLUE(name, SUFFIX)

static attn_status TYPED(run_plan)(const bench_attn_call *call)
{
    const bench_problem *p = call->problem;
    attn_status status = TYPED(attn_forward)(call->plan, p->X, p->Wq, p->Wk, p->Wv, p->Wo,
                                             p->out, p->weights);
    if (status != ATTN_OK || call->config.shape.op != BENCH_OP_BACKWARD)
        return status;
    return TYPED(attn_backward)(call->plan, p->X, p->Wq, p->Wk, p->Wv, p->Wo, p->dout, p->dX,
                                p->dWq, p->dWk, p->dWv, p->dWo);
}

static attn_status TYPED(run_oneshot)(const bench_attn_call *call)
{
    const bench_problem *p = call->problem;
    const bench_shape *s = &call->config.shape;
    const int causal = s->causal;
    if (!call->config.heads_from_count)
        return TYPED(attn_self_attention)(s->B, s->T, s->C, s->hs, causal, p->X, p->Wq, p->Wk,
                                          p->Wv, p->out, p->weights);
    if (s->op == BENCH_OP_FORWARD)
        return TYPED(attn_mha_forward)(s->B, s->T, s->C, s->NH, causal, p->X, p->Wq, p->Wk,
                                       p->Wv, p->Wo, p->out);
    return TYPED(attn_mha_backward)(s->B, s->T, s->C, s->NH, causal, p->X, p->Wq, p->Wk, p->Wv,
                                    p->Wo, p->dout, p->dX, p->dWq, p->dWk, p->dWv, p->dWo);
}

static attn_status TYPED(run_call)(const bench_attn_call *call)
{
    return call->config.api == BENCH_API_PLAN ? TYPED(run_plan)(call) : TYPED(run_oneshot)(call);
}

#undef TYPED
#undef GLUE
#undef GLUE_
