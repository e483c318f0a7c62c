/*
 * attn-memory: the extra memory of one inference forward without weights
 * (or, with --training 1, of a training plan's create, forward and
 * backward: issue 11's "training in O(T) memory" target, T = 16384, C = 768,
 * NH = 12, at most 512 MiB), measured two ways, for issue 5's "long
 * sequences" target (at T = 16384,
 * hs = 64, one head, the peak extra memory of a forward is <= 32 MiB).
 *
 * Each configuration runs in a fresh process (the program re-executes
 * itself with one configuration), so nothing one measurement freed can hide
 * in the heap of the next. In that process:
 *
 *   1. the caller's own arrays (X, Wq, Wk, Wv, out) are allocated and
 *      written, and the BLAS is warmed up at the thread count by one GEMM
 *      of n = 1024 (its thread pool and packing buffers exist before any
 *      measurement: they are the BLAS's fixed cost, not the forward's);
 *   2. heap in use before: mallinfo2() uordblks + hblkhd (every arena plus
 *      the mmap'ed chunks); the RSS high-water mark is reset (writing 5 to
 *      /proc/self/clear_refs) and VmRSS read;
 *   3. attn_plan_create(ATTN_INFERENCE [| ATTN_MATERIALIZED | ATTN_TILED]):
 *      plan_bytes = heap in use after - before (the plan allocates all it
 *      will ever use here);
 *   4. one forward with weights = NULL, timed: forward_heap_bytes = heap in
 *      use after it - after the create (0: the forward allocates nothing);
 *   5. peak_rss_extra_bytes = VmHWM after the forward - VmRSS before the
 *      create: every page the plan and the forward touched (heap, stacks,
 *      any allocation the BLAS would make), page-granular.
 *
 * extra_bytes = max(plan_bytes, peak_rss_extra_bytes) is what
 * check_targets.py compares with the target. Output: one CSV row per
 * configuration (header first) on stdout. Fields that cannot be measured
 * are empty: the heap fields without glibc's mallinfo2 or under
 * AddressSanitizer (its allocator is invisible to mallinfo2), the RSS field
 * without /proc/self/clear_refs.
 */
#include <attn/attn.h>

#include "machine/blas_info.h"

#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_MEMORY_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ATTN_MEMORY_ASAN 1
#endif

/* mallinfo2 (glibc >= 2.33); AddressSanitizer's allocator is invisible to it. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)) && \
    !defined(ATTN_MEMORY_ASAN)
#define HAVE_MALLINFO2 1
#else
#define HAVE_MALLINFO2 0
#endif

#define MAX_LIST 32

typedef struct options {
    size_t T[MAX_LIST], nT;
    int dtype[MAX_LIST], ndtype; /* ATTN_F32, ATTN_F64 */
    unsigned path[MAX_LIST];     /* 0 (auto), ATTN_MATERIALIZED, ATTN_TILED */
    int npath;
    size_t B, C, hs, NH, threads;
    int causal, header, training;
} options;

static const char usage[] =
    "Usage: attn-memory [OPTIONS]\n"
    "The extra memory of one attn inference forward without weights (one head).\n"
    "  --T LIST        sequence lengths (default 1024,4096,16384)\n"
    "  --dtype LIST    f32, f64 (default f32,f64)\n"
    "  --path LIST     auto, materialized, tiled (default auto)\n"
    "  --C N           model width (default 64)\n"
    "  --hs N          head size (default 64)\n"
    "  --NH N          heads of hs each (default 1)\n"
    "  --training 0|1  1: a training plan, forward and backward measured together\n"
    "                  (the caller's gradient arrays allocated before; default 0)\n"
    "  --B N           batch (default 1)\n"
    "  --causal 0|1    (default 0)\n"
    "  --threads N     BLAS threads (default 2)\n"
    "  --no-header     no CSV header line\n"
    "Prints CSV: dtype,B,T,C,NH,hs,causal,threads,path,ran_path,status,plan_bytes,\n"
    "forward_heap_bytes,peak_rss_extra_bytes,extra_bytes,forward_ms (path \"training\" with\n"
    "--training 1: forward_heap_bytes and forward_ms then cover forward and backward)\n";

static int parse_size(const char *text, size_t *value)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v == 0 || v > SIZE_MAX / 2)
        return -1;
    *value = (size_t)v;
    return 0;
}

/* Splits a comma-separated list in place; calls item() on each entry. */
static int parse_list(char *text, int (*item)(const char *, void *), void *target)
{
    for (char *save = NULL, *token = strtok_r(text, ",", &save); token != NULL;
         token = strtok_r(NULL, ",", &save))
        if (item(token, target) != 0)
            return -1;
    return 0;
}

static int item_T(const char *text, void *target)
{
    options *o = target;
    return o->nT < MAX_LIST ? parse_size(text, &o->T[o->nT++]) : -1;
}

static int item_dtype(const char *text, void *target)
{
    options *o = target;
    if (o->ndtype >= MAX_LIST)
        return -1;
    if (strcmp(text, "f32") == 0)
        o->dtype[o->ndtype++] = ATTN_F32;
    else if (strcmp(text, "f64") == 0)
        o->dtype[o->ndtype++] = ATTN_F64;
    else
        return -1;
    return 0;
}

static int item_path(const char *text, void *target)
{
    options *o = target;
    if (o->npath >= MAX_LIST)
        return -1;
    if (strcmp(text, "auto") == 0)
        o->path[o->npath++] = 0u;
    else if (strcmp(text, "materialized") == 0)
        o->path[o->npath++] = ATTN_MATERIALIZED;
    else if (strcmp(text, "tiled") == 0)
        o->path[o->npath++] = ATTN_TILED;
    else
        return -1;
    return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->B = 1;
    o->C = 64;
    o->hs = 64;
    o->NH = 1;
    o->threads = 2;
    o->header = 1;
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            fputs(usage, stdout);
            exit(0);
        }
        if (strcmp(name, "--no-header") == 0) {
            o->header = 0;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "attn-memory: %s needs a value\n", name);
            return -1;
        }
        char *value = argv[++i];
        int bad;
        if (strcmp(name, "--T") == 0)
            bad = parse_list(value, item_T, o);
        else if (strcmp(name, "--dtype") == 0)
            bad = parse_list(value, item_dtype, o);
        else if (strcmp(name, "--path") == 0)
            bad = parse_list(value, item_path, o);
        else if (strcmp(name, "--C") == 0)
            bad = parse_size(value, &o->C);
        else if (strcmp(name, "--hs") == 0)
            bad = parse_size(value, &o->hs);
        else if (strcmp(name, "--B") == 0)
            bad = parse_size(value, &o->B);
        else if (strcmp(name, "--threads") == 0)
            bad = parse_size(value, &o->threads);
        else if (strcmp(name, "--NH") == 0)
            bad = parse_size(value, &o->NH);
        else if (strcmp(name, "--causal") == 0) {
            bad = strcmp(value, "0") != 0 && strcmp(value, "1") != 0;
            o->causal = value[0] == '1';
        } else if (strcmp(name, "--training") == 0) {
            bad = strcmp(value, "0") != 0 && strcmp(value, "1") != 0;
            o->training = value[0] == '1';
        } else {
            fprintf(stderr, "attn-memory: unknown option %s\n%s", name, usage);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "attn-memory: bad value for %s: %s\n", name, value);
            return -1;
        }
    }
    if (o->nT == 0) {
        o->T[0] = 1024;
        o->T[1] = 4096;
        o->T[2] = 16384;
        o->nT = 3;
    }
    if (o->ndtype == 0) {
        o->dtype[0] = ATTN_F32;
        o->dtype[1] = ATTN_F64;
        o->ndtype = 2;
    }
    if (o->npath == 0)
        o->npath = 1; /* path[0] = 0: auto */
    return 0;
}

static const char *path_name(unsigned path)
{
    return path == ATTN_MATERIALIZED ? "materialized" : path == ATTN_TILED ? "tiled" : "auto";
}

/* Heap bytes in use (every arena and the mmap'ed chunks), or -1. */
static long long heap_in_use(void)
{
#if HAVE_MALLINFO2
    struct mallinfo2 info = mallinfo2();
    return (long long)(info.uordblks + info.hblkhd);
#else
    return -1;
#endif
}

/* A "VmRSS:" or "VmHWM:" line of /proc/self/status in bytes, or -1. */
static long long proc_status_bytes(const char *key)
{
    FILE *status = fopen("/proc/self/status", "r");
    if (status == NULL)
        return -1;
    char line[256];
    long long value = -1;
    size_t key_length = strlen(key);
    while (fgets(line, sizeof line, status) != NULL)
        if (strncmp(line, key, key_length) == 0) {
            long long kib = -1;
            if (sscanf(line + key_length, "%lld", &kib) == 1)
                value = kib * 1024;
            break;
        }
    fclose(status);
    return value;
}

/* Resets VmHWM to the current RSS (Linux >= 4.0); 0 on success. */
static int reset_peak_rss(void)
{
    FILE *refs = fopen("/proc/self/clear_refs", "w");
    if (refs == NULL)
        return -1;
    int bad = fputs("5", refs) == EOF;
    bad |= fclose(refs) != 0;
    return bad ? -1 : 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void print_header(void)
{
    puts("dtype,B,T,C,NH,hs,causal,threads,path,ran_path,status,plan_bytes,"
         "forward_heap_bytes,peak_rss_extra_bytes,extra_bytes,forward_ms");
}

static void print_field(long long value)
{
    if (value >= 0)
        printf(",%lld", value);
    else
        fputs(",", stdout);
}

/* Deterministic values in [-0.5, 0.5), scaled. */
static void fill(void *array, int dtype, size_t n, double scale, unsigned *state)
{
    for (size_t i = 0; i < n; i++) {
        *state = *state * 1664525u + 1013904223u;
        double v = scale * ((double)(*state >> 8) / 16777216.0 - 0.5);
        if (dtype == ATTN_F32)
            ((float *)array)[i] = (float)v;
        else
            ((double *)array)[i] = v;
    }
}

/* The BLAS's thread pool and buffers, set up before anything is measured. */
static int warm_blas(int dtype)
{
    enum { N = 1024 };
    size_t element = dtype == ATTN_F32 ? sizeof(float) : sizeof(double);
    void *a = calloc((size_t)N * N, element), *c = calloc((size_t)N * N, element);
    if (a == NULL || c == NULL) {
        free(a);
        free(c);
        return -1;
    }
    if (dtype == ATTN_F32)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, a, N, 0.0f,
                    c, N);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, a, N, 0.0, c,
                    N);
    free(a);
    free(c);
    return 0;
}

/* The caller's arrays of one configuration: X (B,T,C), Wq, Wk, Wv (C,D),
 * out (B,T,D); in training also dout (B,T,D), dX (B,T,C), dWq, dWk, dWv
 * (C,D). All allocated and written before anything is measured. */
enum { ARRAY_X, ARRAY_WQ, ARRAY_WK, ARRAY_WV, ARRAY_OUT, ARRAY_DOUT, ARRAY_DX, ARRAY_DWQ,
       ARRAY_DWK, ARRAY_DWV, ARRAY_COUNT };

static int allocate_arrays(const options *o, size_t T, size_t element, void *arrays[ARRAY_COUNT])
{
    const size_t D = o->NH * o->hs, rows = o->B * T;
    const size_t elements[ARRAY_COUNT] = {rows * o->C, o->C * D, o->C * D, o->C * D, rows * D,
                                          rows * D,    rows * o->C, o->C * D, o->C * D, o->C * D};
    const int count = o->training ? ARRAY_COUNT : ARRAY_DOUT;
    unsigned seed = 1;
    for (int i = 0; i < ARRAY_COUNT; i++)
        arrays[i] = NULL;
    for (int i = 0; i < count; i++) {
        if ((arrays[i] = malloc(elements[i] * element)) == NULL)
            return -1;
        fill(arrays[i], element == sizeof(float) ? ATTN_F32 : ATTN_F64, elements[i], 2.0, &seed);
    }
    return 0;
}

/* A forward (and in training the backward) on the plan. */
static attn_status run_plan(const options *o, attn_plan *plan, int dtype, void *const x[ARRAY_COUNT])
{
    attn_status status;
    if (dtype == ATTN_F32) {
        status = attn_forward_f32(plan, x[ARRAY_X], x[ARRAY_WQ], x[ARRAY_WK], x[ARRAY_WV], NULL,
                                  x[ARRAY_OUT], NULL);
        if (status == ATTN_OK && o->training)
            status = attn_backward_f32(plan, x[ARRAY_X], x[ARRAY_WQ], x[ARRAY_WK], x[ARRAY_WV],
                                       NULL, x[ARRAY_DOUT], x[ARRAY_DX], x[ARRAY_DWQ],
                                       x[ARRAY_DWK], x[ARRAY_DWV], NULL);
        return status;
    }
    status = attn_forward_f64(plan, x[ARRAY_X], x[ARRAY_WQ], x[ARRAY_WK], x[ARRAY_WV], NULL,
                              x[ARRAY_OUT], NULL);
    if (status == ATTN_OK && o->training)
        status = attn_backward_f64(plan, x[ARRAY_X], x[ARRAY_WQ], x[ARRAY_WK], x[ARRAY_WV], NULL,
                                   x[ARRAY_DOUT], x[ARRAY_DX], x[ARRAY_DWQ], x[ARRAY_DWK],
                                   x[ARRAY_DWV], NULL);
    return status;
}

/* One configuration, in this process. Returns 0, or 1 on a failure. */
static int measure(const options *o, size_t T, int dtype, unsigned path)
{
    const size_t B = o->B, C = o->C, hs = o->hs, NH = o->NH;
    const size_t element = dtype == ATTN_F32 ? sizeof(float) : sizeof(double);
    const char *ran_path =
        !o->training && (path == ATTN_MATERIALIZED || (path == 0u && T < ATTN_TILED_MIN_T))
            ? "materialized"
            : "tiled";
    printf("%s,%zu,%zu,%zu,%zu,%zu,%d,%zu,%s,%s", dtype == ATTN_F32 ? "f32" : "f64", B, T, C, NH,
           hs, o->causal, o->threads, o->training ? "training" : path_name(path), ran_path);

    bench_blas_set_threads(o->threads); /* none with the reference CBLAS */
    void *x[ARRAY_COUNT];
    attn_plan *plan = NULL;
    int failed = 1;
    if (allocate_arrays(o, T, element, x) != 0 || warm_blas(dtype) != 0) {
        puts(",out_of_memory,,,,,");
        goto done;
    }
    (void)attn_simd_name(); /* the kernel choice, made once per process */

    long long heap0 = heap_in_use();
    int have_hwm = reset_peak_rss() == 0;
    long long rss0 = have_hwm ? proc_status_bytes("VmRSS:") : -1;

    unsigned flags = (o->training ? 0u : ATTN_INFERENCE | path) | (o->causal ? ATTN_CAUSAL : 0u);
    attn_status status = attn_plan_create(&plan, dtype, B, T, C, NH, hs, 0.0, flags);
    long long heap1 = heap_in_use();
    if (status == ATTN_OK) {
        double start = now_ms();
        status = run_plan(o, plan, dtype, x);
        double elapsed = now_ms() - start;
        long long heap2 = heap_in_use();
        long long hwm = have_hwm ? proc_status_bytes("VmHWM:") : -1;
        if (status == ATTN_OK) {
            long long plan_bytes = heap0 >= 0 && heap1 >= 0 ? heap1 - heap0 : -1;
            long long forward_bytes = heap1 >= 0 && heap2 >= 0 ? heap2 - heap1 : -1;
            long long rss_extra = rss0 >= 0 && hwm >= 0 ? hwm - rss0 : -1;
            long long extra = plan_bytes > rss_extra ? plan_bytes : rss_extra;
            fputs(",ok", stdout);
            print_field(plan_bytes);
            print_field(forward_bytes);
            print_field(rss_extra);
            print_field(extra);
            printf(",%.3f\n", elapsed);
            failed = 0;
        }
    }
    if (failed)
        printf(",%s,,,,,\n", attn_status_string(status));
done:
    attn_plan_destroy(plan);
    for (int i = 0; i < ARRAY_COUNT; i++)
        free(x[i]);
    fflush(stdout);
    return failed;
}

/* Runs one configuration in a fresh process: this program, re-executed. */
static int run_child(char *self, const options *o, size_t T, int dtype, unsigned path)
{
    char T_text[32], C_text[32], hs_text[32], B_text[32], threads_text[32], causal_text[4];
    char NH_text[32], training_text[4];
    snprintf(NH_text, sizeof NH_text, "%zu", o->NH);
    snprintf(training_text, sizeof training_text, "%d", o->training);
    snprintf(T_text, sizeof T_text, "%zu", T);
    snprintf(C_text, sizeof C_text, "%zu", o->C);
    snprintf(hs_text, sizeof hs_text, "%zu", o->hs);
    snprintf(B_text, sizeof B_text, "%zu", o->B);
    snprintf(threads_text, sizeof threads_text, "%zu", o->threads);
    snprintf(causal_text, sizeof causal_text, "%d", o->causal);
    char dtype_text[] = "f32", path_text[16];
    if (dtype == ATTN_F64)
        memcpy(dtype_text, "f64", 4);
    snprintf(path_text, sizeof path_text, "%s", path_name(path));
    char opt_T[] = "--T", opt_dtype[] = "--dtype", opt_path[] = "--path", opt_C[] = "--C",
         opt_hs[] = "--hs", opt_B[] = "--B", opt_threads[] = "--threads",
         opt_causal[] = "--causal", opt_no_header[] = "--no-header", opt_NH[] = "--NH",
         opt_training[] = "--training";
    char *args[] = {self,      opt_T,     T_text,      opt_dtype,    dtype_text,  opt_path,
                    path_text, opt_C,     C_text,      opt_hs,       hs_text,     opt_B,
                    B_text,    opt_threads, threads_text, opt_causal, causal_text, opt_NH,
                    NH_text,   opt_training, training_text, opt_no_header, NULL};
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        execv("/proc/self/exe", args);
        execv(self, args);
        _exit(127);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child)
        return 1;
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    if (o.header)
        print_header();
    int failures = 0;
    if (o.nT == 1 && o.ndtype == 1 && o.npath == 1)
        return measure(&o, o.T[0], o.dtype[0], o.path[0]);
    for (int d = 0; d < o.ndtype; d++)
        for (size_t t = 0; t < o.nT; t++)
            for (int p = 0; p < o.npath; p++)
                failures += run_child(argv[0], &o, o.T[t], o.dtype[d], o.path[p]);
    return failures ? 1 : 0;
}
