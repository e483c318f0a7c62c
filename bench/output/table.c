#include "output/table.h"

#include "output/columns.h"
#include "output/csv_out.h"

static const char *const table_columns[][2] = {
    {"dtype op c api", "the configuration: element type, forward or backward, causal"},
    {"path eng thr", "path asked for (--path), engine (--engine), threads of"},
    {"", "the row: attn's BLAS or own threads, every peer's, the"},
    {"", "ceiling's and the FMA peak's"},
    {"B T C NH hs wo", "the shape; wo = 1 with an output projection"},
    {"check", "relative error of the reference check (skip: not checked,"},
    {"", "FAIL: above tolerance, ERROR: the call failed)"},
    {"attn_ms", "median time of one call, milliseconds"},
    {"athr", "the threads attn ran on (engine auto: what it resolved to)"},
    {"GFLOP/s", "FLOP count / median time"},
    {"peak%", "GFLOP/s as a percentage of the FMA peak of the dtype,"},
    {"", "measured on the row's threads (FMA PEAK)"},
    {"blas%", "GFLOP/s as a percentage of the BLAS GEMM ceiling"},
    {"", "(information: what this BLAS reaches)"},
    {"PEER_ms thr", "each peer's median time, for PEER = naive, numpy, numpy32,"},
    {"", "torch, python (\"-\": not measured), and the threads it"},
    {"", "reports it ran on (naive: 1, plain loops)"},
    {"xPEER", "peer time / attn time: above 1 means attn is faster;"},
    {"", "x* (numpy on f32 rows): the peer computed in float64,"},
    {"", "as the lesson's / np.sqrt(hs) promotes f32 scores under"},
    {"", "NumPy >= 2; numpy32 is the same code kept in float32"},
};

void bench_table_print_columns(FILE *out)
{
    bench_columns_print(out, 26, table_columns, sizeof table_columns / sizeof table_columns[0]);
}

void bench_table_print_header(FILE *out)
{
    fprintf(out,
            "%-5s %-8s %1s %-7s %-12s %-4s %3s %3s %5s %5s %3s %4s %2s | %8s %9s %4s %8s %5s "
            "%5s |",
            "dtype", "op", "c", "api", "path", "eng", "thr", "B", "T", "C", "NH", "hs", "wo",
            "check", "attn_ms", "athr", "GFLOP/s", "peak%", "blas%");
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k) {
        char name[32];
        snprintf(name, sizeof name, "%s_ms", bench_peer_kind_names[k]);
        fprintf(out, " %10s %3s", name, "thr");
    }
    fputs(" |", out);
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k)
        fprintf(out, " x%-7s", bench_peer_kind_names[k]);
    fputc('\n', out);
    fflush(out);
}

void bench_table_print_row(FILE *out, const bench_point *p)
{
    const bench_config *c = &p->config;
    const bench_shape *s = &c->shape;
    fprintf(out, "%-5s %-8s %1d %-7s %-12s %-4s %3zu %3zu %5zu %5zu %3zu %4zu %2d | ",
            bench_dtype_name(s->dtype), bench_op_names[s->op], s->causal,
            bench_api_names[c->api], bench_path_names[c->path], bench_engine_names[c->engine],
            s->threads, s->B, s->T, s->C, s->NH, s->hs, s->wo);
    const bench_outcome *a = &p->outcome;
    bench_columns_print_check(out, a->status, a->check.status == BENCH_CHECK_SKIPPED,
                              a->check.error, s->dropout);
    const double gflops = bench_gflops(p->flops, a->attn.median_s);
    const bench_attn_cells cells = {bench_outcome_timed(a), a->attn.median_s,
                                    bench_point_attn_threads(p), gflops, gflops,
                                    a->peak_gflops, a->ceiling_gflops};
    bench_columns_print_attn(out, &cells);
    fputs(" |", out);
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k) {
        const bench_peer_timing *peer = &p->peers[k];
        if (peer->measured)
            fprintf(out, " %10.4g", peer->timing.median_s * 1e3);
        else
            fprintf(out, " %10s", "-");
        if (peer->measured && peer->threads)
            fprintf(out, " %3zu", peer->threads);
        else
            fprintf(out, " %3s", peer->measured ? "?" : "-");
    }
    fputs(" |", out);
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k) {
        double speedup = bench_speedup_vs_peer(p, (bench_peer_kind)k);
        /* x*: the peer computed in another type (NumPy's float64); no blank at the end */
        const char *mark = bench_peer_promoted(p, (bench_peer_kind)k) ? "*"
                           : k + 1 < BENCH_PEER_KINDS                 ? " "
                                                                      : "";
        if (speedup > 0.0)
            fprintf(out, " %6.2fx%s", speedup, mark);
        else
            fprintf(out, " %7s%s", "-", mark);
    }
    if (p->config.shape.dropout > 0.0) { /* the cost over its twin at p = 0 */
        fprintf(out, " | p=%g", p->config.shape.dropout);
        const double costs[2] = {p->attn_dropout_cost, p->torch_dropout_cost};
        for (size_t i = 0; i < 2; ++i)
            if (costs[i] > 0.0)
                fprintf(out, " %s/p0 %.3f", i ? "torch" : "attn", costs[i]);
    }
    fputc('\n', out);
    fflush(out);
}
