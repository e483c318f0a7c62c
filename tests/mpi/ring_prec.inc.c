/*
 * Template of one rt_prec (ring_support.h); ring_prec.c includes it once
 * per element type with REAL (float, double) and SFX(name) (name_f32,
 * name_f64).
 */

static void SFX(from_double)(void *dst, const double *src, size_t n)
{
    REAL *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = (REAL)src[i];
}

static void SFX(to_double)(double *dst, const void *src, size_t n)
{
    const REAL *s = src;
    for (size_t i = 0; i < n; i++)
        dst[i] = (double)s[i];
}

static SFX(attn_sdpa_args) SFX(args_of)(const rt_arrays *a)
{
    SFX(attn_sdpa_args) t = {0};
    t.Q = a->Q;
    t.ldq = a->ldq;
    t.K = a->K;
    t.ldk = a->ldk;
    t.V = a->V;
    t.ldv = a->ldv;
    t.mask = a->mask;
    t.mask_ld = a->mask_ld;
    t.mask_sb = a->mask_sb;
    t.mask_sh = a->mask_sh;
    t.key_lengths = a->key_lengths;
    t.out = a->out;
    t.ldo = a->ldo;
    t.lse = a->lse;
    t.sbq = a->sbq;
    t.shq = a->shq;
    t.sbk = a->sbk;
    t.shk = a->shk;
    t.sbv = a->sbv;
    t.shv = a->shv;
    t.sbo = a->sbo;
    t.sho = a->sho;
    return t;
}

static attn_status SFX(sdpa_forward)(attn_plan *plan, const rt_arrays *a)
{
    if (a == NULL)
        return SFX(attn_sdpa_forward)(plan, NULL);
    const SFX(attn_sdpa_args) t = SFX(args_of)(a);
    return SFX(attn_sdpa_forward)(plan, &t);
}

static attn_status SFX(sdpa_backward)(attn_plan *plan, const rt_arrays *a, const void *dout,
                                      void *dQ, void *dK, void *dV)
{
    if (a == NULL)
        return SFX(attn_sdpa_backward)(plan, NULL, dout, dQ, dK, dV);
    const SFX(attn_sdpa_args) t = SFX(args_of)(a);
    return SFX(attn_sdpa_backward)(plan, &t, dout, dQ, dK, dV);
}

static attn_status SFX(ring_forward)(attn_plan *plan, const rt_arrays *a)
{
    if (a == NULL)
        return SFX(attn_ring_forward)(plan, NULL);
    const SFX(attn_sdpa_args) t = SFX(args_of)(a);
    return SFX(attn_ring_forward)(plan, &t);
}

static attn_status SFX(ring_backward)(attn_plan *plan, const rt_arrays *a, const void *dout,
                                      void *dQ, void *dK, void *dV)
{
    if (a == NULL)
        return SFX(attn_ring_backward)(plan, NULL, dout, dQ, dK, dV);
    const SFX(attn_sdpa_args) t = SFX(args_of)(a);
    return SFX(attn_ring_backward)(plan, &t, dout, dQ, dK, dV);
}
