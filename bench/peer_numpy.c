#include "peer_numpy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ATTN_BENCH_SOURCE_PEER_DIR
#error "define ATTN_BENCH_SOURCE_PEER_DIR: the absolute path of bench/peers"
#endif
#ifndef ATTN_BENCH_PEER_DIR_FROM_BINDIR
#error "define ATTN_BENCH_PEER_DIR_FROM_BINDIR: the installed peer directory relative to bindir"
#endif

#define NUMPY_PEER_SCRIPT_NAME "numpy_peer.py"

/* Copies text into destination, cut to fit. */
static void copy_text(char *destination, size_t size, const char *text)
{
    size_t length = strlen(text);
    if (length >= size)
        length = size - 1;
    memcpy(destination, text, length);
    destination[length] = '\0';
}

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

static int find_script(const char *override, char *path, size_t size, char *note,
                       size_t note_size)
{
    if (override) {
        copy_text(path, size, override);
        if (is_readable(path))
            return 0;
        snprintf(note, note_size, "--numpy-script %s is not readable", override);
        return -1;
    }
    char installed[4096];
    path_next_to_executable(ATTN_BENCH_PEER_DIR_FROM_BINDIR, NUMPY_PEER_SCRIPT_NAME, installed,
                            sizeof installed);
    const char *source = ATTN_BENCH_SOURCE_PEER_DIR "/" NUMPY_PEER_SCRIPT_NAME;
    if (installed[0] && is_readable(installed)) {
        copy_text(path, size, installed);
        return 0;
    }
    if (is_readable(source)) {
        copy_text(path, size, source);
        return 0;
    }
    snprintf(note, note_size, "%s not found (looked at %s and %s)", NUMPY_PEER_SCRIPT_NAME,
             installed[0] ? installed : "<executable path unknown>", source);
    return -1;
}

/* ---- the command line ------------------------------------------------------- */

/* Appends text to buffer in single quotes for sh; -1 when it does not fit. */
static int append_shell_quoted(char *buffer, size_t size, const char *text)
{
    size_t used = strlen(buffer);
    if (used + 3 > size)
        return -1;
    buffer[used++] = '\'';
    for (const char *c = text; *c; ++c) {
        const char *piece = *c == '\'' ? "'\\''" : NULL;
        size_t piece_length = piece ? 4 : 1;
        if (used + piece_length + 2 > size)
            return -1;
        if (piece)
            memcpy(buffer + used, piece, piece_length);
        else
            buffer[used] = *c;
        used += piece_length;
    }
    buffer[used++] = '\'';
    buffer[used] = '\0';
    return 0;
}

static int append_text(char *buffer, size_t size, const char *text)
{
    size_t used = strlen(buffer), length = strlen(text);
    if (used + length + 1 > size)
        return -1;
    memcpy(buffer + used, text, length + 1);
    return 0;
}

/* 'PYTHON' 'SCRIPT' --warmup ... --seed N */
static int build_command(const bench_options *options, const char *script, char *command,
                         size_t size)
{
    const bench_repeat_policy *r = &options->repeat;
    char policy[256];
    snprintf(policy, sizeof policy,
             " --warmup %zu --repeats %zu --min-time %.17g --max-repeats %zu --seed %llu",
             r->warmup, r->min_repeats, r->min_time_s, r->max_repeats,
             (unsigned long long)options->seed);
    command[0] = '\0';
    return append_shell_quoted(command, size, options->python) == 0 &&
                   append_text(command, size, " ") == 0 &&
                   append_shell_quoted(command, size, script) == 0 &&
                   append_text(command, size, policy) == 0
               ? 0
               : -1;
}

/* ---- the protocol ----------------------------------------------------------- */

/* The peer's output ended: reap it and say why in peer->ended. */
static void peer_ended(bench_numpy_peer *peer, const char *when)
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
static int take_common_line(bench_numpy_peer *peer, const char *line)
{
    if (strncmp(line, "info ", 5) == 0)
        copy_text(peer->numpy, sizeof peer->numpy, line + 5);
    else if (strncmp(line, "blas ", 5) == 0)
        copy_text(peer->blas, sizeof peer->blas, line + 5);
    else if (strncmp(line, "unavailable ", 12) == 0)
        copy_text(peer->note, sizeof peer->note, line + 12);
    else
        return 0;
    return 1;
}

int bench_numpy_peer_start(bench_numpy_peer *peer, const bench_options *options)
{
    memset(peer, 0, sizeof *peer);
    peer->python = options->python;
    if (find_script(options->numpy_script, peer->script, sizeof peer->script, peer->note,
                    sizeof peer->note) != 0)
        return -1;
    char command[16384];
    if (build_command(options, peer->script, command, sizeof command) != 0) {
        snprintf(peer->note, sizeof peer->note, "the command line would be too long");
        return -1;
    }
    if (bench_coprocess_start(&peer->process, command) != 0) {
        snprintf(peer->note, sizeof peer->note, "cannot start %s", options->python);
        return -1;
    }
    peer->running = 1;
    char line[2048];
    while (bench_coprocess_read_line(&peer->process, line, sizeof line) == 0) {
        if (strcmp(line, "ready") == 0)
            return 0;
        if (!take_common_line(peer, line) && line[0])
            copy_text(peer->last_other_line, sizeof peer->last_other_line, line);
    }
    peer_ended(peer, "before it was ready,");
    if (!peer->note[0]) /* an "unavailable" line says more than the exit */
        copy_text(peer->note, sizeof peer->note, peer->ended);
    return -1;
}

/* "result DTYPE CAUSAL B T C HS MEDIAN_S MIN_S REPEATS OUT_DTYPE" */
static int parse_result(const char *line, bench_shape *shape, bench_peer_timing *timing)
{
    char dtype[8];
    if (sscanf(line, "result %7s %d %zu %zu %zu %zu %lf %lf %zu %15s", dtype, &shape->causal,
               &shape->B, &shape->T, &shape->C, &shape->hs, &timing->timing.median_s,
               &timing->timing.min_s, &timing->timing.repeats, timing->out_dtype) != 10 ||
        bench_dtype_parse(dtype, &shape->dtype) != 0)
        return -1;
    timing->measured = 1;
    return 0;
}

static int same_shape(const bench_shape *a, const bench_shape *b)
{
    return a->dtype == b->dtype && a->causal == b->causal && a->B == b->B && a->T == b->T &&
           a->C == b->C && a->hs == b->hs;
}

void bench_numpy_peer_time(bench_numpy_peer *peer, const bench_shape *shape,
                           bench_peer_timing *result)
{
    memset(result, 0, sizeof *result);
    if (!peer->running)
        return;
    char line[2048];
    snprintf(line, sizeof line, "%s %d %zu %zu %zu %zu", bench_dtype_name(shape->dtype),
             shape->causal, shape->B, shape->T, shape->C, shape->hs);
    if (bench_coprocess_send_line(&peer->process, line) != 0) {
        peer_ended(peer, "early,");
        return;
    }
    while (bench_coprocess_read_line(&peer->process, line, sizeof line) == 0) {
        bench_shape reported;
        bench_peer_timing timing = {0};
        if (parse_result(line, &reported, &timing) == 0) {
            if (same_shape(&reported, shape)) {
                *result = timing;
                peer->measured++;
            } else if (!peer->note[0]) {
                snprintf(peer->note, sizeof peer->note, "answered for another shape: %.700s",
                         line);
            }
            return;
        }
        if (strncmp(line, "error ", 6) == 0) {
            if (!peer->note[0]) /* the first error is the telling one */
                copy_text(peer->note, sizeof peer->note, line + 6);
            return;
        }
        if (!take_common_line(peer, line) && line[0])
            copy_text(peer->last_other_line, sizeof peer->last_other_line, line);
    }
    peer_ended(peer, "early,");
}

void bench_numpy_peer_stop(bench_numpy_peer *peer)
{
    if (peer->running)
        bench_coprocess_finish(&peer->process);
    peer->running = 0;
}
