/*
 * The peers of the run command: the naive C peer in process and the python
 * peers (numpy, numpy32, torch, python: peer_process.h), one process each
 * per thread count. A shape's peers are timed once, in the rounds of the
 * first configurations measured on it: each round's block right after
 * attn's blocks of that round (measure_together in run.c), as the sdpa
 * command times its peers (sdpa_peer_set.h); the naive peer after the
 * rounds. The configurations of one shape share the numbers.
 */
#ifndef ATTN_BENCH_RUN_PEERS_H
#define ATTN_BENCH_RUN_PEERS_H

#include <stddef.h>

#include "measure/measure.h"
#include "measure/options.h"
#include "peers/peer_process.h"
#include "pipeline/run_record.h"

/* --peers' bit of each peer kind (measure/peer_timing.h's order). */
extern const unsigned bench_run_peer_bits[BENCH_PEER_KINDS];

/* The shapes of one group of the sweep (a shape and its dropout twins). */
#define BENCH_RUN_PEER_ENTRIES 8

/* One shape's peers: measured (or being measured) once. */
typedef struct bench_run_peer_entry {
    bench_shape shape;
    int measuring;                    /* its rounds are under way */
    int done[BENCH_PEER_KINDS];       /* the peer answered its last round (or failed) */
    bench_peer_timing timings[BENCH_PEER_KINDS];
} bench_run_peer_entry;

typedef struct bench_run_peers {
    const bench_options *options;
    bench_run_record *record;                       /* the summaries */
    bench_peer_process processes[BENCH_PEER_KINDS]; /* the python peers' slots only */
    size_t threads;                                 /* of the running processes; 0: none */
    bench_run_peer_entry entries[BENCH_RUN_PEER_ENTRIES];
    size_t entry_count;
} bench_run_peers;

/* (Re)starts the python peers for a thread count, their header lines
 * printed (a failure that repeats is said once). */
void bench_run_peers_start(bench_run_peers *peers, size_t threads);

/* Stops the python peers; their counts and notes go to the record. */
void bench_run_peers_stop(bench_run_peers *peers);

/* A new group of the sweep: no shape measured yet. */
void bench_run_peers_new_group(bench_run_peers *peers);

/* The entry of a configuration's shape: the one of an earlier
 * configuration with that shape, or a new one whose rounds are to run
 * (*fresh set; the processes restarted for its thread count). */
size_t bench_run_peers_begin(bench_run_peers *peers, const bench_shape *shape, int *fresh);

/* Round `round` of `rounds` (0-based) of a fresh entry's python peers. */
void bench_run_peers_round(bench_run_peers *peers, size_t entry, size_t round, size_t rounds);

/* After the rounds: a fresh entry's naive peer on the problem (in
 * process, as it always was), then the entry's numbers into point->peers. */
void bench_run_peers_end(bench_run_peers *peers, size_t entry, const bench_problem *problem,
                         bench_point *point);

#endif /* ATTN_BENCH_RUN_PEERS_H */
