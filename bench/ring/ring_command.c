#include "ring/ring_command.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/size_list.h"
#include "util/text.h"

enum { EXIT_RING_FAILED = 1, EXIT_BAD_ARGUMENTS = 2 };

typedef enum ring_option {
    RING_RANKS, RING_MODE, RING_T, RING_HS, RING_NH, RING_NH_KV, RING_B, RING_DTYPE,
    RING_REPS, RING_CSV, RING_MPIEXEC, RING_QUICK, RING_HELP, RING_COUNT
} ring_option;

static const bench_cli_option ring_specs[RING_COUNT] = {
    [RING_RANKS] = {"ranks", "LIST", "2,3,4", "1,2",
                    "rank counts P, one mpiexec run each (more ranks than\n"
                    "cores share them: --oversubscribe with Open MPI)"},
    [RING_MODE] = {"mode", "LIST", "full,causal,zigzag", NULL,
                   "full (not causal), causal (contiguous chunks), zigzag\n"
                   "(causal, ATTN_ZIGZAG's half-chunks r and 2P-1-r)"},
    [RING_T] = {"T", "N", "1024", "64", "tokens per rank (the sequence is P*T long)"},
    [RING_HS] = {"hs", "N", "64", "16", "head size"},
    [RING_NH] = {"NH", "N", "8", "2", "query heads"},
    [RING_NH_KV] = {"NH-kv", "N", "8", "2", "key/value heads (NH_kv divides NH)"},
    [RING_B] = {"B", "N", "1", NULL, "sequences"},
    [RING_DTYPE] = {"dtype", "NAME", "f32", NULL, "f32 or f64"},
    [RING_REPS] = {"reps", "N", "5", "2", "timed calls per op, after one warm-up call"},
    [RING_CSV] = {"csv", "PATH", "attn-bench-ring.csv", NULL,
                  "CSV output, one row per rank count, mode and op"},
    [RING_MPIEXEC] = {"mpiexec", "PATH", ATTN_BENCH_MPIEXEC, NULL, "the MPI launcher"},
    [RING_QUICK] = {"quick", NULL, NULL, NULL,
                    "tiny runs for tests: the --quick values above"},
    [RING_HELP] = BENCH_CLI_HELP_OPTION,
};

static const bench_cli_table ring_table = {ring_specs, RING_COUNT};

/* The worker's "row" fields after "row", in order: the CSV's columns. */
static const char *const csv_columns =
    "op,P,mode,dtype,B,NH,NH_kv,T_local,reps,ms_per_call,ms_per_call_max,compute_ms,"
    "progress_ms,wait_ms,sent_bytes,block_bytes,exchange_alone_ms,hidden,return_ms,gflops";

void bench_ring_print_help(FILE *out)
{
    fputs("attn-bench ring: ring attention over MPI (libattn_mpi, <attn/attn_mpi.h>)\n"
          "on this machine: time per call and per ring step, bytes sent per rank,\n"
          "and the share of the communication hidden behind the computation.\n"
          "\n"
          "Usage: attn-bench ring [OPTIONS]\n"
          "\n"
          "Options:\n",
          out);
    bench_cli_print_options(out, &ring_table);
    fputs("\n"
          "For each rank count P and mode, runs P ranks of attn-bench-ring-worker\n"
          "(next to attn-bench; built when MPI is found) under --mpiexec, one own\n"
          "thread per rank (ATTN_NUM_THREADS=1), and prints its report: per call the\n"
          "forward's and the backward's time; per ring step and rank the compute,\n"
          "the MPI progress calls between the pieces of a block, and the wait on the\n"
          "step's messages after its computation; the bytes sent per rank and call;\n"
          "one exchange of a K/V block alone (nothing to compute: on shared memory a\n"
          "copy); hidden = 1 - wait in the steps / their exchanges alone; the\n"
          "backward's wait for its own dK, dV after the last step; the block\n"
          "products' GFLOP/s. The CSV (--csv) has one row per P, mode and op with\n"
          "the columns\n  ",
          out);
    fputs(csv_columns, out);
    fputs("\n(times in ms: per call, or per step and rank, means over the ranks).\n"
          "The model these are checked against: docs/scaling-model.md.\n"
          "\n"
          "Exit status: 0 measured; 1 a run failed, or libattn_mpi was not built;\n"
          "2 bad arguments.\n",
          out);
}

/* The directory of this executable, where the worker is built and installed. */
static int own_directory(char *dir, size_t size)
{
    const ssize_t n = readlink("/proc/self/exe", dir, size - 1);
    if (n <= 0)
        return -1;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

/* text inside single quotes for /bin/sh ('\'' for a quote); -1 when it does not fit */
static int shell_quote(const char *text, char *out, size_t size)
{
    size_t n = 0;
    if (size < 3)
        return -1;
    out[n++] = '\'';
    for (const char *c = text; *c; c++) {
        const char *piece = *c == '\'' ? "'\\''" : NULL;
        const size_t len = piece ? 4 : 1;
        if (n + len + 2 > size)
            return -1;
        if (piece)
            memcpy(out + n, piece, len);
        else
            out[n] = *c;
        n += len;
    }
    out[n++] = '\'';
    out[n] = '\0';
    return 0;
}

typedef struct ring_settings {
    size_t T, hs, NH, NH_kv, B, reps;
    const char *dtype, *mpiexec;
} ring_settings;

/* One mpiexec run of P ranks in `mode`: its report to stdout, its rows to csv. */
static int run_one(const ring_settings *s, size_t P, const char *mode, const char *worker,
                   FILE *csv, size_t *rows)
{
    char launcher[4200], program[4200], command[9000];
    if (shell_quote(s->mpiexec, launcher, sizeof launcher) != 0 ||
        shell_quote(worker, program, sizeof program) != 0)
        return -1;
    const int written = snprintf(
        command, sizeof command,
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ATTN_NUM_THREADS=1 "
        "%s -n %zu %s %s T=%zu hs=%zu NH=%zu NH_kv=%zu B=%zu mode=%s dtype=%s reps=%zu 2>&1",
        launcher, P, ATTN_BENCH_MPIEXEC_OVERSUBSCRIBE, program, s->T, s->hs, s->NH, s->NH_kv,
        s->B, mode, s->dtype, s->reps);
    if (written < 0 || (size_t)written >= sizeof command)
        return -1;
    fflush(stdout);
    FILE *pipe = popen(command, "r");
    if (!pipe)
        return -1;
    char line[4096];
    size_t found = 0;
    while (fgets(line, sizeof line, pipe)) {
        if (strncmp(line, "row ", 4) == 0) {
            for (char *c = line + 4; *c; c++)
                if (*c == ' ')
                    *c = ',';
            fputs(line + 4, csv);
            found++;
        } else {
            fputs(line, stdout);
        }
    }
    const int status = pclose(pipe);
    *rows += found;
    return status == 0 && found == 2 ? 0 : -1;
}

static int parse_settings(const char *const *given, int quick, ring_settings *s,
                          bench_size_list *ranks, char *error, size_t size)
{
    size_t *counts[] = {&s->T, &s->hs, &s->NH, &s->NH_kv, &s->B, &s->reps};
    const ring_option ids[] = {RING_T, RING_HS, RING_NH, RING_NH_KV, RING_B, RING_REPS};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        const char *text = bench_cli_resolved(&ring_table, given, ids[i], quick);
        if (bench_cli_parse_count(text, 1, counts[i]) != 0) {
            snprintf(error, size, "--%s: '%s' is not a whole number >= 1",
                     ring_specs[ids[i]].name, text);
            return -1;
        }
    }
    if (s->NH % s->NH_kv != 0) {
        snprintf(error, size, "--NH-kv %zu does not divide --NH %zu", s->NH_kv, s->NH);
        return -1;
    }
    s->dtype = bench_cli_resolved(&ring_table, given, RING_DTYPE, quick);
    if (strcmp(s->dtype, "f32") != 0 && strcmp(s->dtype, "f64") != 0) {
        snprintf(error, size, "--dtype: '%s' is not f32 or f64", s->dtype);
        return -1;
    }
    s->mpiexec = bench_cli_resolved(&ring_table, given, RING_MPIEXEC, quick);
    const char *text = bench_cli_resolved(&ring_table, given, RING_RANKS, quick);
    char list_error[256];
    if (bench_size_list_parse(text, ranks, list_error, sizeof list_error) != 0) {
        snprintf(error, size, "--ranks: %s", list_error);
        return -1;
    }
    return 0;
}

int bench_ring_command(int argc, char **argv, int first)
{
    const char *given[RING_COUNT] = {0};
    char error[512];
    if (bench_cli_collect(&ring_table, argc, argv, first, given, NULL, 0, NULL, error,
                          sizeof error) != 0) {
        fprintf(stderr, "attn-bench ring: %s\nTry 'attn-bench ring --help'.\n", error);
        return EXIT_BAD_ARGUMENTS;
    }
    if (given[RING_HELP]) {
        bench_ring_print_help(stdout);
        return 0;
    }
    static const char *const mode_names[3] = {"full", "causal", "zigzag"};
    const int quick = given[RING_QUICK] != NULL;
    ring_settings s;
    bench_size_list ranks = {0};
    int modes[3];
    size_t mode_count = 0;
    const char *mode_text = bench_cli_resolved(&ring_table, given, RING_MODE, quick);
    if (parse_settings(given, quick, &s, &ranks, error, sizeof error) != 0 ||
        (bench_cli_parse_choices(mode_text, mode_names, 3, modes, &mode_count) != 0 &&
         snprintf(error, sizeof error, "--mode: '%s' is not a list of full, causal, zigzag",
                  mode_text) > 0)) {
        fprintf(stderr, "attn-bench ring: %s\nTry 'attn-bench ring --help'.\n", error);
        bench_size_list_free(&ranks);
        return EXIT_BAD_ARGUMENTS;
    }
    char worker[4096];
    if (!ATTN_BENCH_RING_BUILT || own_directory(worker, sizeof worker - 32) != 0) {
        fprintf(stderr, "attn-bench ring: libattn_mpi was not built (no MPI found at "
                        "configure time; ./attn.sh deps installs Open MPI)\n");
        bench_size_list_free(&ranks);
        return EXIT_RING_FAILED;
    }
    strcat(worker, "/attn-bench-ring-worker");
    const char *csv_path = bench_cli_resolved(&ring_table, given, RING_CSV, quick);
    FILE *csv = fopen(csv_path, "w");
    if (!csv) {
        fprintf(stderr, "attn-bench ring: cannot write %s\n", csv_path);
        bench_size_list_free(&ranks);
        return EXIT_RING_FAILED;
    }
    fprintf(csv, "%s\n", csv_columns);
    int failed = 0;
    size_t rows = 0;
    for (size_t r = 0; r < ranks.count; r++)
        for (size_t m = 0; m < mode_count; m++) {
            printf("# attn-bench ring: P = %zu, mode %s\n", ranks.values[r], mode_names[modes[m]]);
            if (run_one(&s, ranks.values[r], mode_names[modes[m]], worker, csv, &rows) != 0) {
                fprintf(stderr, "attn-bench ring: the run of P = %zu, mode %s failed\n",
                        ranks.values[r], mode_names[modes[m]]);
                failed = 1;
            }
        }
    bench_size_list_free(&ranks);
    if (fclose(csv) != 0)
        failed = 1;
    printf("# %zu rows; CSV: %s\n", rows, csv_path);
    return failed ? EXIT_RING_FAILED : 0;
}
