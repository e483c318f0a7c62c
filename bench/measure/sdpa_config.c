#include "measure/sdpa_config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/text.h"

const char *const bench_sdpa_mask_names[BENCH_SDPA_MASK_COUNT] = {"none", "padding", "full"};
const char *const bench_sdpa_cache_names[BENCH_SDPA_CACHE_COUNT] = {"warm", "cold"};
const char *const bench_sdpa_layout_names[BENCH_SDPA_LAYOUT_COUNT] = {"bshd", "bhsd"};
const char *const bench_sdpa_scenario_names[BENCH_SDPA_SCENARIO_COUNT] = {"call", "decode-loop"};

const char bench_sdpa_flops_formula[] =
    "per visible (query, key) pair of every query head (keys no query row can see are "
    "not counted): forward 2*hs (scores) + 2*hs_v (weights x V); backward rows time the "
    "forward and the backward together: forward + 2*hs (scores recomputed) + 2*hs_v "
    "(dP = dout V^T) + 2*hs_v (dV) + 2*hs (dQ) + 2*hs (dK) = 8*hs + 6*hs_v "
    "(3.5 x the forward when hs_v = hs)";

size_t bench_sdpa_capacity(const bench_sdpa_shape *s)
{
    return s->Tk + (s->scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP ? s->steps : 0);
}

/* A decode loop's mean step attends over Tk + (steps + 1) / 2 keys. */
static double loop_mean_keys(const bench_sdpa_shape *s)
{
    return (double)s->Tk + 0.5 * (double)(s->steps + 1);
}

size_t bench_sdpa_length(const bench_sdpa_shape *s, size_t b)
{
    if (!s->lengths || s->lengths->count == 0)
        return s->Tk;
    return s->lengths->values[s->lengths->count == 1 ? 0 : b];
}

size_t bench_sdpa_aligned_length(const bench_sdpa_shape *s, size_t b)
{
    return s->mask == BENCH_SDPA_MASK_NONE ? bench_sdpa_length(s, b) : s->Tk;
}

void bench_sdpa_visible_range(const bench_sdpa_shape *s, size_t b, size_t t, size_t *lo,
                              size_t *hi)
{
    const int64_t length = (int64_t)bench_sdpa_length(s, b);
    const int64_t p = (int64_t)bench_sdpa_aligned_length(s, b) - (int64_t)s->Tq + (int64_t)t;
    int64_t top = length, bottom = 0;
    if (s->causal && p + 1 < top)
        top = p + 1;
    if (s->window > 0 && p - (int64_t)s->window + 1 > bottom)
        bottom = p - (int64_t)s->window + 1;
    if (top < 0)
        top = 0;
    if (bottom > top)
        bottom = top;
    *lo = (size_t)bottom;
    *hi = (size_t)top;
}

double bench_sdpa_visible_pairs(const bench_sdpa_shape *s)
{
    if (s->scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP) /* one query, every key */
        return (double)s->B * loop_mean_keys(s);
    double pairs = 0.0;
    for (size_t b = 0; b < s->B; ++b)
        for (size_t t = 0; t < s->Tq; ++t) {
            size_t lo, hi;
            bench_sdpa_visible_range(s, b, t, &lo, &hi);
            pairs += (double)(hi - lo);
        }
    return pairs;
}

size_t bench_sdpa_keys_needed(const bench_sdpa_shape *s, size_t b)
{
    /* lo and hi never decrease with t: the union is counted in one pass */
    size_t keys = 0, covered = 0;
    for (size_t t = 0; t < s->Tq; ++t) {
        size_t lo, hi;
        bench_sdpa_visible_range(s, b, t, &lo, &hi);
        if (lo < covered)
            lo = covered;
        if (hi > lo)
            keys += hi - lo;
        if (hi > covered)
            covered = hi;
    }
    return keys;
}

double bench_sdpa_kv_bytes(const bench_sdpa_shape *s)
{
    double keys = 0.0;
    for (size_t b = 0; b < s->B; ++b)
        keys += s->scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP ? loop_mean_keys(s)
                                                               : (double)bench_sdpa_keys_needed(s, b);
    return keys * (double)s->NH_kv * (double)(s->hs + s->hs_v) *
           (double)bench_dtype_size(s->dtype);
}

double bench_sdpa_flops(const bench_sdpa_shape *s)
{
    const double per_pair = s->op == BENCH_OP_FORWARD ? 2.0 * (double)(s->hs + s->hs_v)
                                                      : 2.0 * (double)(4 * s->hs + 3 * s->hs_v);
    return bench_sdpa_visible_pairs(s) * (double)s->NH * per_pair;
}

int bench_sdpa_is_decode(const bench_sdpa_shape *s)
{
    return s->Tq <= BENCH_SDPA_DECODE_MAX_TQ;
}

int bench_sdpa_shape_equal(const bench_sdpa_shape *a, const bench_sdpa_shape *b)
{
    return a->dtype == b->dtype && a->op == b->op && a->causal == b->causal &&
           a->window == b->window && a->mask == b->mask && a->B == b->B && a->NH == b->NH &&
           a->NH_kv == b->NH_kv && a->Tq == b->Tq && a->Tk == b->Tk && a->hs == b->hs &&
           a->hs_v == b->hs_v && a->lengths == b->lengths && a->cache == b->cache &&
           a->layout == b->layout && a->scenario == b->scenario && a->steps == b->steps &&
           a->threads == b->threads && a->dropout == b->dropout;
}

int bench_sdpa_shape_same_group(const bench_sdpa_shape *a, const bench_sdpa_shape *b)
{
    bench_sdpa_shape other = *b;
    other.layout = a->layout;
    other.dropout = a->dropout;
    return bench_sdpa_shape_equal(a, &other);
}

int bench_sdpa_format_lengths(const bench_sdpa_shape *s, char *text, size_t size)
{
    text[0] = '\0';
    if (!s->lengths || s->lengths->count == 0)
        return bench_append_text(text, size, "full");
    for (size_t b = 0; b < s->B; ++b) {
        char item[32];
        snprintf(item, sizeof item, "%s%zu", b ? "/" : "", bench_sdpa_length(s, b));
        if (bench_append_text(text, size, item) != 0)
            return -1;
    }
    return 0;
}
