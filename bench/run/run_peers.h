/*
 * The peers of the run command: the naive C peer in process and the python
 * peers (numpy, numpy32, torch, python: peer_process.h), one process each
 * per thread count, timed after attn on the same problem, once per shape
 * (the configurations of one shape share their numbers).
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

typedef struct bench_run_peers {
    const bench_options *options;
    bench_run_record *record;                       /* the summaries */
    bench_peer_process processes[BENCH_PEER_KINDS]; /* the python peers' slots only */
    size_t threads;                                 /* of the running processes; 0: none */
    int have_shape;
    bench_shape shape; /* of the last numbers */
    bench_peer_timing timings[BENCH_PEER_KINDS];
} bench_run_peers;

/* (Re)starts the python peers for a thread count, their header lines
 * printed (a failure that repeats is said once). */
void bench_run_peers_start(bench_run_peers *peers, size_t threads);

/* Stops the python peers; their counts and notes go to the record. */
void bench_run_peers_stop(bench_run_peers *peers);

/* The peers' numbers for the point's shape into point->peers: measured now
 * (right after attn, on its problem) unless the previous call was for the
 * same shape. */
void bench_run_peers_time(bench_run_peers *peers, const bench_problem *problem,
                          bench_point *point);

#endif /* ATTN_BENCH_RUN_PEERS_H */
