/*
 * attn-bench: the benchmark of the attn library. See --help (help.c) for
 * what it measures and how to read its output. The concerns live in their
 * own files: options.c (command line), sweep.c (configurations), problem.c
 * (inputs and the measured call), reference.c (correctness check),
 * timing.c / measure.c (timing), flops.c (FLOP count), report.c (table and
 * CSV), peer_numpy.c + coprocess.c + peers/numpy_peer.py (the NumPy peer),
 * sysinfo.c (header lines, machine load).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "options.h"
#include "peer_numpy.h"
#include "report.h"
#include "sweep.h"
#include "sysinfo.h"

enum { EXIT_BENCH_FAILED = 1, EXIT_BAD_ARGUMENTS = 2 };

static void print_sweep_header(FILE *out, const bench_options *o, size_t count)
{
    const bench_repeat_policy *r = &o->repeat;
    char check_rows[32] = "all";
    if (o->check_rows)
        snprintf(check_rows, sizeof check_rows, "%zu", o->check_rows);
    fprintf(out,
            "# sweep: %zu configurations; warmup %zu, then >= %zu calls and >= %g s (at most "
            "%zu calls); weights %s; check: %s rows of the first and last batch; seed %llu\n",
            count, r->warmup, r->min_repeats, r->min_time_s, r->max_repeats,
            o->with_weights ? "requested" : "NULL", check_rows, (unsigned long long)o->seed);
}

/* Starts the peers asked for and says which run; returns whether the NumPy
 * peer runs. */
static int start_peers(FILE *out, const bench_options *o, bench_numpy_peer *numpy)
{
    if (!(o->peers & BENCH_PEER_NUMPY)) {
        fprintf(out, "# peers: none\n");
        return 0;
    }
    if (bench_numpy_peer_start(numpy, o) != 0) {
        fprintf(out, "# numpy peer skipped: %s\n", numpy->note);
        return 0;
    }
    fprintf(out, "# numpy peer: %s; BLAS: %s\n", numpy->numpy, numpy->blas);
    fprintf(out, "# numpy peer script: %s\n", numpy->script);
    return 1;
}

static void report_failure(const bench_point *p, const char *error)
{
    const bench_shape *s = &p->shape;
    fprintf(stderr, "attn-bench: %s causal=%d B=%zu T=%zu C=%zu hs=%zu: %s\n",
            bench_dtype_name(s->dtype), s->causal, s->B, s->T, s->C, s->hs, error);
}

static int run(const bench_options *o, const bench_sweep *sweep)
{
    bench_cpu_snapshot start;
    bench_cpu_snapshot_take(&start);
    FILE *csv = bench_csv_open(o->csv_path);
    if (!csv) {
        perror(o->csv_path);
        return EXIT_BENCH_FAILED;
    }

    bench_print_system_header(stdout);
    bench_print_load_average(stdout);
    print_sweep_header(stdout, o, sweep->count);
    bench_numpy_peer numpy;
    int numpy_started = start_peers(stdout, o, &numpy);
    bench_table_print_header(stdout);

    size_t failures = 0;
    int csv_failed = 0;
    for (size_t i = 0; i < sweep->count; ++i) {
        bench_point point;
        char error[512] = "";
        bench_measure_point(&sweep->shapes[i], o, &point, error, sizeof error);
        memset(&point.numpy, 0, sizeof point.numpy);
        if (numpy_started) /* right after attn: a side-by-side pair */
            bench_numpy_peer_time(&numpy, &sweep->shapes[i], &point.numpy);
        bench_table_print_row(stdout, &point);
        if (point.status != BENCH_POINT_TIMED) {
            report_failure(&point, error);
            failures++;
        }
        if (!csv_failed && bench_csv_write_row(csv, &point) != 0) {
            perror(o->csv_path);
            csv_failed = 1;
        }
    }
    if (fclose(csv) != 0 && !csv_failed) {
        perror(o->csv_path);
        csv_failed = 1;
    }
    if (numpy_started) {
        bench_numpy_peer_stop(&numpy);
        if (numpy.measured < sweep->count)
            printf("# numpy peer measured %zu of %zu configurations%s%s%s%s\n",
                   numpy.measured, sweep->count, numpy.note[0] ? "; first error: " : "",
                   numpy.note, numpy.ended[0] ? "; " : "", numpy.ended);
    }

    bench_cpu_snapshot end;
    bench_cpu_snapshot_take(&end);
    bench_print_other_load(stdout, &start, &end);
    printf("# %zu configurations in %.1f s wall time (checks and peers included); CSV: %s\n",
           sweep->count, end.wall_s - start.wall_s, o->csv_path);
    if (failures)
        fprintf(stderr, "attn-bench: %zu of %zu configurations failed\n", failures,
                sweep->count);
    return failures || csv_failed ? EXIT_BENCH_FAILED : EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
    char error[512];
    bench_options options;
    switch (bench_options_parse(argc, argv, &options, error, sizeof error)) {
    case BENCH_OPTIONS_HELP:
        bench_print_help(stdout);
        return EXIT_SUCCESS;
    case BENCH_OPTIONS_BAD:
        fprintf(stderr, "attn-bench: %s\nTry 'attn-bench --help'.\n", error);
        return EXIT_BAD_ARGUMENTS;
    case BENCH_OPTIONS_RUN:
        break;
    }

    bench_sweep sweep;
    if (bench_sweep_build(&options, &sweep, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench: %s\n", error);
        bench_options_free(&options);
        return EXIT_BAD_ARGUMENTS;
    }
    int status = run(&options, &sweep);
    bench_sweep_free(&sweep);
    bench_options_free(&options);
    return status;
}
