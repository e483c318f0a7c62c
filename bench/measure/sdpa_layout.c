#include "measure/sdpa_layout.h"

/* A (B, T, H, d) array's strides in the layout. */
static bench_sdpa_strides strides_of(bench_sdpa_layout layout, size_t T, size_t H, size_t d)
{
    if (layout == BENCH_SDPA_LAYOUT_BHSD)
        return (bench_sdpa_strides){.sb = H * T * d, .sh = T * d, .ld = d};
    return (bench_sdpa_strides){.sb = T * H * d, .sh = d, .ld = H * d};
}

bench_sdpa_layout_strides bench_sdpa_layout_of(const bench_sdpa_shape *s)
{
    const size_t T = bench_sdpa_capacity(s);
    return (bench_sdpa_layout_strides){
        .q = strides_of(s->layout, s->Tq, s->NH, s->hs),
        .k = strides_of(s->layout, T, s->NH_kv, s->hs),
        .v = strides_of(s->layout, T, s->NH_kv, s->hs_v),
        .o = strides_of(s->layout, s->Tq, s->NH, s->hs_v),
    };
}
