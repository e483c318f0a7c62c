#include "report.h"

static const char *const csv_columns[][2] = {
    {"dtype", "f32 or f64"},
    {"causal", "0 or 1"},
    {"B", "batch size"},
    {"T", "sequence length"},
    {"C", "model width"},
    {"hs", "head size"},
    {"weights", "1 when the measured call also wrote the weights"},
    {"flops", "FLOP count of one call (see above)"},
    {"status", "timed, check_failed, call_failed or setup_failed"},
    {"check_rows", "query rows compared with the reference"},
    {"check_error", "relative error of the check (max of out and weights)"},
    {"check_tolerance", "1e-4 (f32) or 1e-10 (f64)"},
    {"attn_repeats", "timed calls"},
    {"attn_median_ms", "median time of one call"},
    {"attn_min_ms", "fastest call"},
    {"attn_gflops", "flops / median time / 1e9"},
    {"numpy_repeats", "timed calls of the NumPy peer (empty: not measured)"},
    {"numpy_median_ms", "median time of one call of the NumPy peer"},
    {"numpy_min_ms", "its fastest call"},
    {"numpy_gflops", "flops / numpy median / 1e9"},
    {"numpy_out_dtype", "dtype of the peer's output (float64 for f32 with NumPy 2)"},
    {"speedup_vs_numpy", "numpy_median_ms / attn_median_ms"},
};

#define CSV_COLUMN_COUNT (sizeof csv_columns / sizeof csv_columns[0])

static const char *point_status_name(bench_point_status status)
{
    switch (status) {
    case BENCH_POINT_TIMED:
        return "timed";
    case BENCH_POINT_CHECK_FAILED:
        return "check_failed";
    case BENCH_POINT_CALL_FAILED:
        return "call_failed";
    case BENCH_POINT_SETUP_FAILED:
        break;
    }
    return "setup_failed";
}

double bench_speedup_vs_numpy(const bench_point *point)
{
    if (point->status != BENCH_POINT_TIMED || !point->numpy.measured ||
        point->attn.median_s <= 0.0)
        return 0.0;
    return point->numpy.timing.median_s / point->attn.median_s;
}

static double gflops(double flops, double seconds)
{
    return seconds > 0.0 ? flops / seconds * 1e-9 : 0.0;
}

/* ---- table ---------------------------------------------------------------- */

void bench_table_print_header(FILE *out)
{
    fprintf(out, "%-5s %6s %5s %6s %6s %5s %9s %6s %10s %10s %8s | %7s %10s %8s\n", "dtype",
            "causal", "B", "T", "C", "hs", "check", "reps", "median_ms", "min_ms", "GFLOP/s",
            "np_reps", "np_med_ms", "vs_numpy");
    fflush(out);
}

void bench_table_print_row(FILE *out, const bench_point *p)
{
    const bench_shape *s = &p->shape;
    fprintf(out, "%-5s %6d %5zu %6zu %6zu %5zu ", bench_dtype_name(s->dtype), s->causal, s->B,
            s->T, s->C, s->hs);
    if (p->status == BENCH_POINT_TIMED)
        fprintf(out, "%9.1e %6zu %10.4g %10.4g %8.2f", p->check.error, p->attn.repeats,
                p->attn.median_s * 1e3, p->attn.min_s * 1e3,
                gflops(p->flops, p->attn.median_s));
    else if (p->status == BENCH_POINT_CHECK_FAILED)
        fprintf(out, "%9s %6s %10s %10s %8s", "FAIL", "-", "-", "-", "-");
    else
        fprintf(out, "%9s %6s %10s %10s %8s", "ERROR", "-", "-", "-", "-");
    if (p->numpy.measured)
        fprintf(out, " | %7zu %10.4g", p->numpy.timing.repeats, p->numpy.timing.median_s * 1e3);
    else
        fprintf(out, " | %7s %10s", "-", "-");
    double speedup = bench_speedup_vs_numpy(p);
    if (speedup > 0.0)
        fprintf(out, " %7.2fx\n", speedup);
    else
        fprintf(out, " %8s\n", "-");
    fflush(out);
}

/* ---- CSV ------------------------------------------------------------------- */

void bench_csv_print_columns(FILE *out)
{
    for (size_t i = 0; i < CSV_COLUMN_COUNT; ++i)
        fprintf(out, "  %-18s %s\n", csv_columns[i][0], csv_columns[i][1]);
}

FILE *bench_csv_open(const char *path)
{
    FILE *csv = fopen(path, "w");
    if (!csv)
        return NULL;
    for (size_t i = 0; i < CSV_COLUMN_COUNT; ++i)
        fprintf(csv, "%s%s", i ? "," : "", csv_columns[i][0]);
    fputc('\n', csv);
    fflush(csv);
    return csv;
}

int bench_csv_write_row(FILE *csv, const bench_point *p)
{
    const bench_shape *s = &p->shape;
    int timed = p->status == BENCH_POINT_TIMED;
    int checked = timed || p->status == BENCH_POINT_CHECK_FAILED;
    fprintf(csv, "%s,%d,%zu,%zu,%zu,%zu,%d,%.0f,%s,", bench_dtype_name(s->dtype), s->causal,
            s->B, s->T, s->C, s->hs, p->with_weights, p->flops, point_status_name(p->status));
    if (checked)
        fprintf(csv, "%zu,%.3e,%.0e,", p->check.rows_checked, p->check.error,
                p->check.tolerance);
    else
        fputs(",,,", csv);
    if (timed)
        fprintf(csv, "%zu,%.6g,%.6g,%.4g,", p->attn.repeats, p->attn.median_s * 1e3,
                p->attn.min_s * 1e3, gflops(p->flops, p->attn.median_s));
    else
        fputs(",,,,", csv);
    const bench_peer_timing *np = &p->numpy;
    if (np->measured)
        fprintf(csv, "%zu,%.6g,%.6g,%.4g,%s,", np->timing.repeats, np->timing.median_s * 1e3,
                np->timing.min_s * 1e3, gflops(p->flops, np->timing.median_s), np->out_dtype);
    else
        fputs(",,,,,", csv);
    double speedup = bench_speedup_vs_numpy(p);
    if (speedup > 0.0)
        fprintf(csv, "%.4g", speedup);
    fputc('\n', csv);
    return fflush(csv) == 0 && !ferror(csv) ? 0 : -1;
}
