#include "peers/peer_process.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/text.h"

#ifndef ATTN_BENCH_SOURCE_PEER_DIR
#error "define ATTN_BENCH_SOURCE_PEER_DIR: the absolute path of bench/peers"
#endif
#ifndef ATTN_BENCH_PEER_DIR_FROM_BINDIR
#error "define ATTN_BENCH_PEER_DIR_FROM_BINDIR: the installed peer directory relative to bindir"
#endif

/* numpy32 is numpy_peer.py --float32: the lesson's code kept in float32 */
const bench_peer_kind_script bench_peer_kind_scripts[BENCH_PEER_KINDS] = {
    [BENCH_PEER_KIND_NAIVE] = {NULL, NULL, NULL, NULL},
    [BENCH_PEER_KIND_NUMPY] = {"numpy_peer.py", NULL, NULL, "it needs NumPy (--python)"},
    [BENCH_PEER_KIND_NUMPY32] = {"numpy_peer.py", "--float32", NULL, "it needs NumPy (--python)"},
    [BENCH_PEER_KIND_TORCH] = {"torch_peer.py", NULL, "torch_sdpa_peer.py",
                               "optional: ./attn.sh peers sets up PyTorch 2.x from PyPI where "
                               "attn-bench looks first"},
    [BENCH_PEER_KIND_PYTHON] = {"attn_python_peer.py", NULL, "torch_sdpa_peer.py",
                                "it needs attn's package (./attn.sh python installs it into "
                                ".venv-python, where attn-bench looks first; else the source "
                                "tree's python/src), and for the sdpa command torch >= 2"},
    [BENCH_PEER_KIND_ORT] = {"ort_peer.py", NULL, "ort_sdpa_peer.py",
                             "optional: ./attn.sh peers installs onnxruntime and onnx from PyPI"},
    [BENCH_PEER_KIND_OPENVINO] = {"openvino_peer.py", NULL, "openvino_sdpa_peer.py",
                                  "optional: ./attn.sh peers installs openvino from PyPI"},
    [BENCH_PEER_KIND_GGML] = {"ggml_peer.py", NULL, "ggml_sdpa_peer.py",
                              "optional: ./attn.sh peers builds ggml's CPU library from the "
                              "llama-cpp-python sdist"},
};

/* ---- finding the script ---------------------------------------------------- */

static int is_readable(const char *path)
{
    return access(path, R_OK) == 0;
}

/* <directory of this executable>/<relative>/<name>; "" when unknown */
static void path_next_to_executable(const char *relative, const char *name, char *path,
                                    size_t size)
{
    char executable[4096];
    ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    path[0] = '\0';
    if (length <= 0)
        return;
    executable[length] = '\0';
    char *last_slash = strrchr(executable, '/');
    if (!last_slash)
        return;
    *last_slash = '\0';
    int written = snprintf(path, size, "%s/%s/%s", executable, relative, name);
    if (written < 0 || (size_t)written >= size)
        path[0] = '\0';
}

static int find_script(bench_peer_process *peer, const bench_peer_process_setup *setup)
{
    if (setup->script_override) {
        bench_copy_text(peer->script, sizeof peer->script, setup->script_override);
        if (is_readable(peer->script))
            return 0;
        snprintf(peer->note, sizeof peer->note, "--%s-script %s is not readable", setup->name,
                 setup->script_override);
        return -1;
    }
    char installed[4096], source[4096];
    path_next_to_executable(ATTN_BENCH_PEER_DIR_FROM_BINDIR, setup->script_name, installed,
                            sizeof installed);
    snprintf(source, sizeof source, "%s/%s", ATTN_BENCH_SOURCE_PEER_DIR, setup->script_name);
    const char *found = installed[0] && is_readable(installed) ? installed
                        : is_readable(source)                  ? source
                                                               : NULL;
    if (found) {
        bench_copy_text(peer->script, sizeof peer->script, found);
        return 0;
    }
    snprintf(peer->note, sizeof peer->note, "%s not found (looked at %.400s and %.400s)",
             setup->script_name, installed[0] ? installed : "<executable path unknown>",
             source);
    return -1;
}

/* ---- the command line ------------------------------------------------------- */

/* THREADS=n ... 'PYTHON' 'SCRIPT' [OPTIONS] --threads n --warmup ... --seed N */
static int build_command(const bench_peer_process_setup *setup, const char *python,
                         const char *script, char *command, size_t size)
{
    const bench_repeat_policy *r = setup->policy;
    char environment[256], arguments[320];
    snprintf(environment, sizeof environment,
             "OPENBLAS_NUM_THREADS=%zu OMP_NUM_THREADS=%zu MKL_NUM_THREADS=%zu ",
             setup->threads, setup->threads, setup->threads);
    snprintf(arguments, sizeof arguments,
             " --threads %zu --warmup %zu --repeats %zu --min-time %.17g --max-repeats %zu"
             " --seed %llu",
             setup->threads, r->warmup, r->min_repeats, r->min_time_s, r->max_repeats,
             (unsigned long long)setup->seed);
    command[0] = '\0';
    return bench_append_text(command, size, environment) == 0 &&
                   bench_append_shell_quoted(command, size, python) == 0 &&
                   bench_append_text(command, size, " ") == 0 &&
                   bench_append_shell_quoted(command, size, script) == 0 &&
                   (!setup->script_options ||
                    (bench_append_text(command, size, " ") == 0 &&
                     bench_append_text(command, size, setup->script_options) == 0)) &&
                   bench_append_text(command, size, arguments) == 0
               ? 0
               : -1;
}

/* ---- the protocol ----------------------------------------------------------- */

/* The peer's output ended: reap it and say why in peer->ended. */
static void peer_ended(bench_peer_process *peer, const char *when)
{
    int status = bench_coprocess_finish(&peer->process);
    peer->running = 0;
    char exit_text[64] = "without an exit status";
    if (status != -1 && WIFEXITED(status))
        snprintf(exit_text, sizeof exit_text, "with status %d", WEXITSTATUS(status));
    else if (status != -1 && WIFSIGNALED(status))
        snprintf(exit_text, sizeof exit_text, "on signal %d", WTERMSIG(status));
    snprintf(peer->ended, sizeof peer->ended, "%.200s ended %s %s%s%.400s", peer->python, when,
             exit_text, peer->last_other_line[0] ? ": " : "", peer->last_other_line);
}

/* Handles a line every state accepts; returns 1 when it was one of them. */
/* The blas line, and the thread count it ends with ("threads=N", the last
 * such word: what the peer's library reports it runs on). */
static void take_blas_line(bench_peer_process *peer, const char *text)
{
    bench_copy_text(peer->blas, sizeof peer->blas, text);
    peer->reported_threads = 0;
    for (const char *at = strstr(text, "threads="); at; at = strstr(at + 1, "threads=")) {
        char *end = NULL;
        const unsigned long threads = strtoul(at + 8, &end, 10);
        peer->reported_threads = end != at + 8 ? (size_t)threads : 0;
    }
}

static int take_common_line(bench_peer_process *peer, const char *line, char *unavailable,
                            size_t unavailable_size)
{
    if (strncmp(line, "info ", 5) == 0)
        bench_copy_text(peer->info, sizeof peer->info, line + 5);
    else if (strncmp(line, "blas ", 5) == 0)
        take_blas_line(peer, line + 5);
    else if (strncmp(line, "impl ", 5) == 0)
        bench_copy_text(peer->impl, sizeof peer->impl, line + 5);
    else if (strncmp(line, "unavailable ", 12) == 0)
        bench_copy_text(unavailable, unavailable_size, line + 12);
    else
        return 0;
    return 1;
}

/* Starts the script with one interpreter; 0 when it says "ready", else -1
 * with the reason in reason. */
static int start_with(bench_peer_process *peer, const bench_peer_process_setup *setup,
                      const char *python, char *reason, size_t reason_size)
{
    bench_copy_text(peer->python, sizeof peer->python, python);
    peer->last_other_line[0] = peer->ended[0] = reason[0] = '\0';
    char command[16384];
    if (build_command(setup, python, peer->script, command, sizeof command) != 0) {
        snprintf(reason, reason_size, "the command line would be too long");
        return -1;
    }
    if (bench_coprocess_start(&peer->process, command) != 0) {
        snprintf(reason, reason_size, "cannot start a shell for %s", python);
        return -1;
    }
    peer->running = 1;
    char line[2048];
    while (bench_coprocess_read_line(&peer->process, line, sizeof line) == 0) {
        if (strcmp(line, "ready") == 0)
            return 0;
        if (!take_common_line(peer, line, reason, reason_size) && line[0])
            bench_copy_text(peer->last_other_line, sizeof peer->last_other_line, line);
    }
    peer_ended(peer, "before it was ready,");
    if (!reason[0]) /* an "unavailable" line says more than the exit */
        bench_copy_text(reason, reason_size, peer->ended);
    return -1;
}

int bench_peer_process_start(bench_peer_process *peer, const bench_peer_process_setup *setup)
{
    memset(peer, 0, sizeof *peer);
    peer->name = setup->name;
    peer->threads = setup->threads;
    if (find_script(peer, setup) != 0)
        return -1;
    char candidate[512];
    for (const char *cursor = setup->pythons; cursor;) {
        const char *comma = strchr(cursor, ',');
        size_t length = comma ? (size_t)(comma - cursor) : strlen(cursor);
        snprintf(candidate, sizeof candidate, "%.*s", (int)length, cursor);
        cursor = comma ? comma + 1 : NULL;
        if (!candidate[0])
            continue;
        char reason[512];
        if (start_with(peer, setup, candidate, reason, sizeof reason) == 0) {
            peer->note[0] = '\0';
            return 0;
        }
        char attempt[768];
        snprintf(attempt, sizeof attempt, "%s%.200s: %.500s", peer->note[0] ? "; " : "", candidate,
                 reason);
        bench_append_text(peer->note, sizeof peer->note, attempt);
    }
    if (!peer->note[0])
        snprintf(peer->note, sizeof peer->note, "no interpreter given");
    return -1;
}

/* The rest of `line` after "KEYWORD TEXT " (or "KEYWORD TEXT" at its end),
 * or NULL when the line is not that keyword's answer for that text. */
static const char *answer_for(const char *line, const char *keyword, const char *text)
{
    const size_t k = strlen(keyword), n = strlen(text);
    if (strncmp(line, keyword, k) != 0 || line[k] != ' ' || strncmp(line + k + 1, text, n) != 0)
        return NULL;
    const char *rest = line + k + 1 + n;
    return *rest == ' ' ? rest + 1 : *rest == '\0' ? rest : NULL;
}

/* The numbers of a result line after its text: MEDIAN_S MIN_S REPEATS
 * OUT_DTYPE, optionally CHECK_ERROR MASK, and then THREADS KERNEL. */
static void take_result(bench_peer_process *peer, const char *rest, bench_peer_timing *result)
{
    size_t threads = 0;
    const int fields = sscanf(rest, "%lf %lf %zu %15s %lf %95s %zu %95s",
                              &result->timing.median_s, &result->timing.min_s,
                              &result->timing.repeats, result->out_dtype, &result->check_error,
                              result->mask, &threads, result->kernel);
    if (fields != 4 && fields != 6 && fields != 8) {
        result->check_error = -1.0;
        snprintf(result->note, sizeof result->note, "unreadable result: %.120s", rest);
        return;
    }
    result->threads = fields == 8 ? threads : peer->reported_threads;
    result->measured = 1;
    peer->measured++;
}

void bench_peer_process_ask(bench_peer_process *peer, const char *text, bench_peer_timing *result)
{
    memset(result, 0, sizeof *result);
    result->check_error = -1.0;
    if (!peer->running)
        return;
    snprintf(result->version, sizeof result->version, "%.*s", (int)strcspn(peer->info, " "),
             peer->info);
    char line[8192], unused[8];
    if (bench_coprocess_send_line(&peer->process, text) != 0) {
        peer_ended(peer, "early,");
        bench_copy_text(result->note, sizeof result->note, peer->ended);
        return;
    }
    while (bench_coprocess_read_line(&peer->process, line, sizeof line) == 0) {
        const char *rest = answer_for(line, "result", text);
        if (rest) {
            take_result(peer, rest, result);
            return;
        }
        if (answer_for(line, "pending", text)) {
            result->pending = 1;
            return;
        }
        const char *unsupported = answer_for(line, "unsupported", text);
        const char *error = answer_for(line, "error", text);
        if (unsupported || error) {
            bench_copy_text(result->note, sizeof result->note, unsupported ? unsupported : error);
            if (error && !peer->note[0]) /* the first error is the telling one */
                snprintf(peer->note, sizeof peer->note, "%.300s: %.600s", text, error);
            return;
        }
        if (!take_common_line(peer, line, unused, sizeof unused) && line[0])
            bench_copy_text(peer->last_other_line, sizeof peer->last_other_line, line);
    }
    peer_ended(peer, "early,");
    bench_copy_text(result->note, sizeof result->note, peer->ended);
    if (!peer->note[0])
        bench_copy_text(peer->note, sizeof peer->note, peer->ended);
}

/* "DTYPE OP CAUSAL B T C NH HS WO ROUND/ROUNDS" (ROUND 1-based), the shape
 * as the protocol writes it, then " dropout=P" for a training row with
 * attention dropout (peer_common.py) */
static void format_shape(const bench_shape *s, size_t round, size_t rounds, char *text,
                         size_t size)
{
    const int written = snprintf(text, size, "%s %s %d %zu %zu %zu %zu %zu %d %zu/%zu",
                                 bench_dtype_name(s->dtype), bench_op_names[s->op], s->causal,
                                 s->B, s->T, s->C, s->NH, s->hs, s->wo, round + 1, rounds);
    if (s->dropout > 0.0 && written > 0 && (size_t)written < size)
        snprintf(text + written, size - (size_t)written, " dropout=%.17g", s->dropout);
}

void bench_peer_process_time(bench_peer_process *peer, const bench_shape *shape, size_t round,
                             size_t rounds, bench_peer_timing *result)
{
    char text[256];
    format_shape(shape, round, rounds, text, sizeof text);
    bench_peer_process_ask(peer, text, result);
}

void bench_peer_process_stop(bench_peer_process *peer)
{
    if (peer->running)
        bench_coprocess_finish(&peer->process);
    peer->running = 0;
}

void bench_peer_summary_take(bench_peer_summary *summary, const bench_peer_process *peer,
                             int started)
{
    if (started || !summary->status) {
        summary->status = started ? "ran" : "skipped";
        bench_copy_text(summary->python, sizeof summary->python, peer->python);
        bench_copy_text(summary->script, sizeof summary->script, peer->script);
        bench_copy_text(summary->info, sizeof summary->info, peer->info);
        bench_copy_text(summary->blas, sizeof summary->blas, peer->blas);
        bench_copy_text(summary->impl, sizeof summary->impl, peer->impl);
        bench_copy_text(summary->note, sizeof summary->note, peer->note);
    }
}

void bench_peer_summary_stop(bench_peer_summary *summary, bench_peer_process *peer)
{
    if (peer->running) {
        bench_peer_process_stop(peer);
        summary->measured += peer->measured;
    }
    if (peer->note[0] && !summary->note[0])
        bench_copy_text(summary->note, sizeof summary->note, peer->note);
}
