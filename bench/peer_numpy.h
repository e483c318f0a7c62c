/*
 * The NumPy peer: bench/peers/numpy_peer.py runs as one python process for
 * the whole sweep. attn-bench sends it one configuration at a time, right
 * after timing attn on it, so both are measured side by side (this machine's
 * speed drifts too much to compare numbers taken minutes apart). The
 * line protocol is described at the top of the script.
 *
 * Script location, first readable wins: --numpy-script PATH; then
 * <directory of the executable>/<bindir-to-datadir>/attn/numpy_peer.py (the
 * installed copy); then the source tree's bench/peers/numpy_peer.py, whose
 * absolute path is compiled in.
 */
#ifndef ATTN_BENCH_PEER_NUMPY_H
#define ATTN_BENCH_PEER_NUMPY_H

#include <stddef.h>

#include "coprocess.h"
#include "options.h"
#include "peer.h"
#include "problem.h"

typedef struct bench_numpy_peer {
    bench_coprocess process;
    int running;
    size_t measured;   /* configurations with numbers so far */
    char note[768];    /* why it did not start, or the first shape it reported an error for */
    char ended[768];   /* why it stopped before the end of the sweep; "" if it did not */
    char numpy[256];   /* what the peer said about itself: numpy and python versions */
    char blas[512];    /* ... and about NumPy's BLAS and its thread count */
    char script[4096]; /* the script that runs */
    char last_other_line[512]; /* last line outside the protocol (a traceback's end) */
    const char *python;
} bench_numpy_peer;

/* Starts the peer and waits until it is ready. Returns 0, or -1 with the
 * reason in peer->note (python or numpy missing, script not found, ...). */
int bench_numpy_peer_start(bench_numpy_peer *peer, const bench_options *options);

/* Times one configuration. result->measured is 0 when the peer gave no
 * numbers (it reported an error, see peer->note, or it is not running, see
 * peer->ended). */
void bench_numpy_peer_time(bench_numpy_peer *peer, const bench_shape *shape,
                           bench_peer_timing *result);

/* Ends the peer process (a no-op when it is not running). */
void bench_numpy_peer_stop(bench_numpy_peer *peer);

#endif /* ATTN_BENCH_PEER_NUMPY_H */
