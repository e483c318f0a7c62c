/*
 * The peers of an attn-bench sdpa run (sdpa_peer.h: torch, python): their
 * processes for the current thread count, started when a configuration of a
 * new thread count needs them and announced in the header lines; the
 * numbers of the last shape they measured, which the configurations that
 * differ only in the engine share; and their blocks of each round, run
 * between attn's (bench_sdpa_between, sdpa_measure.h).
 */
#ifndef ATTN_BENCH_SDPA_PEER_SET_H
#define ATTN_BENCH_SDPA_PEER_SET_H

#include "sdpa/sdpa_measure.h"

typedef struct bench_sdpa_peer_set {
    const bench_sdpa_options *options;
    bench_peer_summary *summaries; /* [BENCH_SDPA_PEER_COUNT], the record's */
    size_t flush_mib;              /* the cold-cache read */
    bench_peer_process processes[BENCH_SDPA_PEER_COUNT];
    size_t threads; /* of the running processes; 0: none */
    int have_shape, measuring;
    bench_sdpa_shape shape; /* the last shape measured (or being measured) */
    bench_sdpa_peer_timing timings[BENCH_SDPA_PEER_COUNT];
} bench_sdpa_peer_set;

/* Starts the processes of the peers asked for at a thread count (announced
 * in the header lines); the configurations restart them when theirs differs. */
void bench_sdpa_peers_start(bench_sdpa_peer_set *set, size_t threads);

/* For a configuration: whether the peers measure its shape (a new one) and
 * the processes for its thread count. between gets the block function. */
void bench_sdpa_peers_begin(bench_sdpa_peer_set *set, const bench_sdpa_shape *shape,
                            bench_sdpa_between *between);

/* The peers' numbers of the configuration into point->peers. */
void bench_sdpa_peers_end(bench_sdpa_peer_set *set, bench_sdpa_point *point);

/* Ends the processes, their counts and notes into the summaries. */
void bench_sdpa_peers_stop(bench_sdpa_peer_set *set);

#endif /* ATTN_BENCH_SDPA_PEER_SET_H */
