#include "measure/sdpa_options.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common_options.h"
#include "cli/option_table.h"
#include "cli/option_values.h"
#include "measure/attn_call.h"
#include "util/product.h"
#include "util/text.h"

void bench_sdpa_options_print_list(FILE *out)
{
    bench_option_table_print(out, BENCH_COMMAND_SDPA);
}

/* A list whose items are numbers or ranges, or `word` (stored as 0). */
static int list_with_word(const bench_option_values *values, bench_option_id id,
                          const char *word, size_t *list, size_t capacity, size_t *list_count)
{
    const char *text = bench_option_text(values, id);
    const char *name = values->table->options[id].name;
    *list_count = 0;
    for (const char *cursor = text; cursor;) {
        const char *comma = strchr(cursor, ',');
        char item[128];
        const size_t length = comma ? (size_t)(comma - cursor) : strlen(cursor);
        if (length == 0 || length >= sizeof item)
            return bench_option_fail(values, id, "a list of numbers");
        memcpy(item, cursor, length);
        item[length] = '\0';
        cursor = comma ? comma + 1 : NULL;
        bench_size_list sizes = {0};
        char reason[160];
        if (strcmp(item, word) == 0) {
            if (*list_count < capacity)
                list[(*list_count)++] = 0;
            continue;
        }
        if (bench_size_list_parse(item, &sizes, reason, sizeof reason) != 0) {
            snprintf(values->error, values->error_size, "--%s: %s", name, reason);
            return -1;
        }
        for (size_t i = 0; i < sizes.count; ++i) {
            int seen = 0;
            for (size_t k = 0; k < *list_count; ++k)
                seen |= list[k] == sizes.values[i];
            if (seen)
                continue;
            if (*list_count == capacity) {
                bench_size_list_free(&sizes);
                snprintf(values->error, values->error_size, "--%s: more than %zu values", name,
                         capacity);
                return -1;
            }
            list[(*list_count)++] = sizes.values[i];
        }
        bench_size_list_free(&sizes);
    }
    return 0;
}

static int parse_hs_v(const bench_option_values *values, bench_sdpa_options *o)
{
    o->hs_v.values = malloc(BENCH_SIZE_LIST_MAX * sizeof *o->hs_v.values);
    if (!o->hs_v.values) {
        snprintf(values->error, values->error_size, "out of memory");
        return -1;
    }
    return list_with_word(values, BENCH_OPT_HS_V, "hs", o->hs_v.values, BENCH_SIZE_LIST_MAX,
                          &o->hs_v.count);
}

static int parse_lengths(const bench_option_values *values, bench_sdpa_options *o)
{
    const char *text = bench_option_text(values, BENCH_OPT_LENGTHS);
    o->lengths_count = 0;
    for (const char *cursor = text; cursor;) {
        const char *comma = strchr(cursor, ',');
        const size_t length = comma ? (size_t)(comma - cursor) : strlen(cursor);
        if (o->lengths_count == BENCH_SDPA_MAX_LENGTHS_ITEMS)
            return bench_option_fail(values, BENCH_OPT_LENGTHS, "a list of at most 64 items");
        bench_sdpa_lengths *item = &o->lengths[o->lengths_count];
        memset(item, 0, sizeof *item);
        if (length == 0 || length >= sizeof item->text)
            return bench_option_fail(values, BENCH_OPT_LENGTHS,
                                     "a list of 'full' or L0/L1/... items");
        memcpy(item->text, cursor, length);
        item->text[length] = '\0';
        cursor = comma ? comma + 1 : NULL;
        o->lengths_count++;
        if (strcmp(item->text, "full") == 0)
            continue;
        size_t parts = 1;
        for (const char *c = item->text; *c; ++c)
            parts += *c == '/';
        item->values = malloc(parts * sizeof *item->values);
        if (!item->values) {
            snprintf(values->error, values->error_size, "out of memory");
            return -1;
        }
        char copy[256];
        bench_copy_text(copy, sizeof copy, item->text);
        for (char *part = copy; part;) {
            char *slash = strchr(part, '/');
            if (slash)
                *slash = '\0';
            if (bench_parse_size(part, &item->values[item->count]) != 0) {
                snprintf(values->error, values->error_size,
                         "--lengths: '%s' in '%s' is not a whole number (items are 'full' or "
                         "L0/L1/...)",
                         part, item->text);
                return -1;
            }
            item->count++;
            part = slash ? slash + 1 : NULL;
        }
    }
    return 0;
}

static const char *const dtype_names[BENCH_DTYPE_ALL_COUNT] = {"f32", "f64", "bf16", "f16"};
static const char *const peer_names[BENCH_SDPA_PEER_COUNT + 1] = {
    "torch", "python", "ort", "openvino", "ggml", "none"};

static int resolve_axes(const bench_option_values *values, bench_sdpa_options *o)
{
    if (bench_option_size_list(values, BENCH_OPT_B, &o->B) ||
        bench_option_size_list(values, BENCH_OPT_NH, &o->NH) ||
        bench_option_size_list(values, BENCH_OPT_NH_KV, &o->NH_kv) ||
        bench_option_size_list(values, BENCH_OPT_TQ, &o->Tq) ||
        bench_option_size_list(values, BENCH_OPT_TK, &o->Tk) ||
        bench_option_size_list(values, BENCH_OPT_HS, &o->hs) || parse_hs_v(values, o) ||
        parse_lengths(values, o) ||
        list_with_word(values, BENCH_OPT_WINDOW, "0", o->windows, BENCH_SDPA_MAX_WINDOWS,
                       &o->window_count))
        return -1;
    if (bench_option_choices(values, BENCH_OPT_MASK, bench_sdpa_mask_names,
                             BENCH_SDPA_MASK_COUNT, o->masks, &o->mask_count) ||
        bench_option_choices(values, BENCH_OPT_OP, bench_op_names, BENCH_OP_COUNT, o->ops,
                             &o->op_count) ||
        bench_option_choices(values, BENCH_OPT_DTYPE, dtype_names, BENCH_DTYPE_ALL_COUNT,
                             o->dtypes, &o->dtype_count) ||
        bench_option_choices(values, BENCH_OPT_ENGINE, bench_engine_names, BENCH_ENGINE_COUNT,
                             o->engines, &o->engine_count) ||
        bench_option_choices(values, BENCH_OPT_CACHE, bench_sdpa_cache_names,
                             BENCH_SDPA_CACHE_COUNT, o->caches, &o->cache_count) ||
        bench_option_choices(values, BENCH_OPT_LAYOUT, bench_sdpa_layout_names,
                             BENCH_SDPA_LAYOUT_COUNT, o->layouts, &o->layout_count) ||
        bench_option_choices(values, BENCH_OPT_SCENARIO, bench_sdpa_scenario_names,
                             BENCH_SDPA_SCENARIO_COUNT, o->scenarios, &o->scenario_count))
        return -1;
    int peers[BENCH_SDPA_PEER_COUNT + 1];
    size_t peer_count = 0;
    if (bench_option_choices(values, BENCH_OPT_PEERS, peer_names, BENCH_SDPA_PEER_COUNT + 1,
                             peers, &peer_count))
        return -1;
    for (size_t i = 0; i < peer_count; ++i)
        if (peers[i] < BENCH_SDPA_PEER_COUNT)
            o->peers[peers[i]] = 1;
    return 0;
}

static int resolve_scalars(const bench_option_values *values, bench_sdpa_options *o)
{
    if (bench_common_options_read(values, &o->common) ||
        bench_option_count(values, BENCH_OPT_CHECK_ROWS, 0, &o->check_rows) ||
        bench_option_count(values, BENCH_OPT_STEPS, 1, &o->steps) ||
        bench_option_count(values, BENCH_OPT_ROUNDS, 1, &o->rounds))
        return -1;
    const char *bandwidth = bench_option_text(values, BENCH_OPT_BANDWIDTH_MIB);
    if (strcmp(bandwidth, "auto") == 0)
        o->bandwidth_mib = SIZE_MAX;
    else if (bench_cli_parse_count(bandwidth, 0, &o->bandwidth_mib) != 0 ||
             o->bandwidth_mib > (SIZE_MAX >> 21))
        return bench_option_fail(values, BENCH_OPT_BANDWIDTH_MIB, "a number of MiB, 0 or auto");
    return 0;
}

bench_options_outcome bench_sdpa_options_parse(int argc, char **argv, int first,
                                               bench_sdpa_options *o, char *error,
                                               size_t error_size)
{
    memset(o, 0, sizeof *o);
    const char *given[BENCH_OPT_COUNT] = {0};
    bench_option_values values = {bench_option_table(BENCH_COMMAND_SDPA), given, 0, error,
                                  error_size};
    const bench_options_outcome outcome = bench_common_options_collect(
        &values, argc, argv, first, NULL, 0, "attn-bench sdpa", &o->common);
    if (outcome == BENCH_OPTIONS_RUN &&
        (resolve_axes(&values, o) != 0 || resolve_scalars(&values, o) != 0)) {
        bench_sdpa_options_free(o);
        return BENCH_OPTIONS_BAD;
    }
    if (outcome == BENCH_OPTIONS_BAD)
        bench_sdpa_options_free(o);
    return outcome;
}

void bench_sdpa_options_free(bench_sdpa_options *o)
{
    bench_size_list *lists[] = {&o->B, &o->NH, &o->NH_kv, &o->Tq, &o->Tk,
                                &o->hs, &o->hs_v};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; ++i)
        bench_size_list_free(lists[i]);
    for (size_t i = 0; i < BENCH_SDPA_MAX_LENGTHS_ITEMS; ++i) {
        free(o->lengths[i].values);
        o->lengths[i].values = NULL;
    }
    bench_common_options_free(&o->common);
}

/* ---- the configurations ------------------------------------------------------- */

static const char *invalid_reason(const bench_sdpa_config *c)
{
    const bench_sdpa_shape *s = &c->shape;
    const char *auto_mismatch = bench_attn_auto_mismatch(c->engine, s->threads);
    if (auto_mismatch)
        return auto_mismatch;
    if (s->NH % s->NH_kv != 0)
        return "NH not a multiple of NH-kv";
    const bench_sdpa_lengths *l = s->lengths;
    if (l->count > 1 && l->count != s->B)
        return "a --lengths item with neither 1 nor B lengths";
    for (size_t i = 0; i < l->count; ++i)
        if (l->values[i] > s->Tk)
            return "a key length above Tk";
    if (s->dropout > 0.0 && s->op != BENCH_OP_BACKWARD)
        return "--dropout above 0 on a forward (an inference op: dropout is for training, "
               "--op backward)";
    if (s->scenario != BENCH_SDPA_SCENARIO_DECODE_LOOP)
        return NULL;
    if (s->Tq != 1)
        return "a decode loop with Tq other than 1";
    if (l->count > 0 || s->mask != BENCH_SDPA_MASK_NONE || s->window > 0 ||
        s->op != BENCH_OP_FORWARD)
        return "a decode loop with lengths, a mask, a window or backward";
    return NULL;
}

int bench_sdpa_sweep_build(const bench_sdpa_options *o, bench_sdpa_sweep *sweep, char *error,
                           size_t error_size)
{
    memset(sweep, 0, sizeof *sweep);
    const bench_common_options *common = &o->common;
    const size_t counts[] = {common->threads.count, o->dtype_count, o->op_count,
                             common->causal_count,
                             o->window_count,  o->mask_count,    o->B.count,   o->NH.count,
                             o->NH_kv.count,   o->hs.count,      o->hs_v.count, o->Tq.count,
                             o->Tk.count,      o->lengths_count, o->cache_count,
                             o->scenario_count, common->dropout_count, o->layout_count,
                             o->engine_count};
    bench_product product;
    if (bench_product_init(&product, counts, sizeof counts / sizeof counts[0],
                           BENCH_SDPA_SWEEP_MAX) != 0) {
        snprintf(error, error_size, "more than %d combinations", BENCH_SDPA_SWEEP_MAX);
        return -1;
    }
    sweep->configs = malloc(product.total * sizeof *sweep->configs);
    if (!sweep->configs) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    for (size_t n = 0; n < product.total; ++n) {
        size_t index[sizeof counts / sizeof counts[0]];
        bench_product_at(&product, n, index);
        bench_sdpa_config c;
        memset(&c, 0, sizeof c);
        bench_sdpa_shape *s = &c.shape;
        s->threads = common->threads.values[index[0]];
        s->dtype = (bench_dtype)o->dtypes[index[1]];
        s->op = (bench_op)o->ops[index[2]];
        s->causal = common->causal[index[3]];
        s->window = o->windows[index[4]];
        s->mask = (bench_sdpa_mask)o->masks[index[5]];
        s->B = o->B.values[index[6]];
        s->NH = o->NH.values[index[7]];
        s->NH_kv = o->NH_kv.values[index[8]];
        s->hs = o->hs.values[index[9]];
        s->hs_v = o->hs_v.values[index[10]] ? o->hs_v.values[index[10]] : s->hs;
        s->Tq = o->Tq.values[index[11]];
        s->Tk = o->Tk.values[index[12]];
        s->lengths = &o->lengths[index[13]];
        s->cache = (bench_sdpa_cache)o->caches[index[14]];
        s->scenario = (bench_sdpa_scenario)o->scenarios[index[15]];
        s->dropout = common->dropouts[index[16]];
        s->layout = (bench_sdpa_layout)o->layouts[index[17]];
        s->steps = s->scenario == BENCH_SDPA_SCENARIO_DECODE_LOOP ? o->steps : 0;
        c.engine = (bench_engine)o->engines[index[18]];
        const char *reason = invalid_reason(&c);
        if (reason) {
            bench_omissions_add(&sweep->omitted, reason);
            continue;
        }
        sweep->configs[sweep->count++] = c;
    }
    if (sweep->count == 0) {
        snprintf(error, error_size, "no configuration to run: %s",
                 sweep->omitted.count ? sweep->omitted.reasons[0].reason : "empty lists");
        bench_sdpa_sweep_free(sweep);
        return -1;
    }
    return 0;
}

void bench_sdpa_sweep_free(bench_sdpa_sweep *sweep)
{
    free(sweep->configs);
    sweep->configs = NULL;
    sweep->count = 0;
}
