/*
 * A peer that runs as a python process for a whole thread count of the
 * sweep: bench/peers/numpy_peer.py (the numpy peer, and with --float32 the
 * numpy32 peer), bench/peers/torch_peer.py and attn_python_peer.py, which
 * share bench/peers/peer_common.py, and attn-bench sdpa's peers
 * (sdpa_peer.h). attn-bench sends it one shape at a time, in rounds
 * between its own blocks of calls on the same shape, so both are measured
 * side by side (this machine's speed drifts too much to compare numbers
 * taken minutes apart). The line protocol is described in peer_common.py.
 *
 * The process gets the thread count in its environment (OPENBLAS_NUM_THREADS,
 * OMP_NUM_THREADS, MKL_NUM_THREADS) and as --threads, before NumPy or
 * PyTorch is imported.
 *
 * Script location, first readable wins: the override (--numpy-script,
 * --torch-script); then <directory of the executable>/<bindir-to-datadir>/
 * attn/<script> (the installed copy); then the source tree's bench/peers/
 * <script>, whose absolute path is compiled in.
 *
 * Interpreters: the first of a comma-separated list that gets the script
 * ready; attn-bench's defaults (--python, --torch-python) begin with
 * <source dir>/.venv-peers/bin/python, the venv ./attn.sh peers sets up.
 */
#ifndef ATTN_BENCH_PEER_PROCESS_H
#define ATTN_BENCH_PEER_PROCESS_H

#include <stddef.h>
#include <stdint.h>

#include "measure/config.h"
#include "peers/coprocess.h"
#include "measure/peer_timing.h"
#include "util/timing.h"

typedef struct bench_peer_process_setup {
    const char *name;            /* "numpy", "numpy32" or "torch" */
    const char *script_name;     /* "numpy_peer.py" */
    const char *script_options;  /* the script's own options ("--float32"), or NULL */
    const char *script_override; /* NULL: the default places */
    const char *pythons;         /* interpreters to try in order, comma-separated */
    size_t threads;
    const bench_repeat_policy *policy;
    uint64_t seed;
} bench_peer_process_setup;

typedef struct bench_peer_process {
    const char *name;
    bench_coprocess process;
    int running;
    size_t threads;            /* asked for (--threads and the environment) */
    size_t reported_threads;   /* its blas line's last threads=N: what it runs on; 0 */
    size_t measured;           /* shapes with numbers so far */
    char note[1024];           /* why it did not start, or the first error it reported */
    char ended[768];           /* why it stopped before the end; "" if it did not */
    char info[256];            /* what the peer said about itself: versions */
    char blas[512];            /* ... its BLAS and thread count */
    char impl[256];            /* ... how it computes attention */
    char script[4096];         /* the script that runs */
    char python[512];          /* the interpreter that runs it */
    char last_other_line[512]; /* last line outside the protocol (a traceback's end) */
} bench_peer_process;

/* Starts the peer with the first interpreter that gets it ready. Returns 0,
 * or -1 with the reasons in peer->note. */
/* How each peer kind (measure/peer_timing.h) is run, the one table of
 * both commands: its script for the run command (NULL: the naive peer, in
 * process) with the script's own options, its script for the sdpa command
 * (NULL: not one of its peers), and what to do when it cannot start. */
typedef struct bench_peer_kind_script {
    const char *run;
    const char *run_options;
    const char *sdpa;
    const char *missing;
} bench_peer_kind_script;

extern const bench_peer_kind_script bench_peer_kind_scripts[BENCH_PEER_KINDS];

int bench_peer_process_start(bench_peer_process *peer, const bench_peer_process_setup *setup);

/* Sends one line of the protocol (a shape, or an sdpa configuration and
 * its round) and reads the peer's answer for it: a result (its numbers and
 * whatever optional fields it gives: check, mask, threads, kernel), pending
 * (result->pending), unsupported or error (result->note says why; the first
 * error is kept in peer->note too), or the end of its output (the peer
 * stopped: peer->ended, and result->note says so). result->measured is 1
 * only with numbers; result->threads is the result's THREADS, else the
 * peer's reported_threads. Header lines on the way are taken as at start. */
void bench_peer_process_ask(bench_peer_process *peer, const char *text, bench_peer_timing *result);

/* Times round `round` of `rounds` (0-based) of one shape of the run
 * command: its protocol line, then ask (the last round's result has every
 * round's samples; the earlier ones are pending). */
void bench_peer_process_time(bench_peer_process *peer, const bench_shape *shape, size_t round,
                             size_t rounds, bench_peer_timing *result);

/* Ends the process (a no-op when it is not running). */
void bench_peer_process_stop(bench_peer_process *peer);

/* What the record (the JSON's "peers") keeps of a peer over a run. */
typedef struct bench_peer_summary {
    const char *name;
    const char *status; /* "ran", "skipped" or "not asked for" */
    char python[512];
    char script[1024];
    char info[256];
    char blas[512];
    char impl[256];
    size_t measured; /* shapes with numbers */
    char note[1024];
} bench_peer_summary;

/* After a start: status "ran" or "skipped" and the process's interpreter,
 * script, header lines and note; a start that failed leaves a summary that
 * already has a status as it was. */
void bench_peer_summary_take(bench_peer_summary *summary, const bench_peer_process *peer,
                             int started);

/* Stops the peer (when it runs), adds its measured shapes to the summary and
 * keeps its note when the summary has none yet. */
void bench_peer_summary_stop(bench_peer_summary *summary, bench_peer_process *peer);

#endif /* ATTN_BENCH_PEER_PROCESS_H */
