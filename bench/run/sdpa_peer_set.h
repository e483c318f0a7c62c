/*
 * The peers of an attn-bench sdpa run (peers/sdpa_peer.h: torch, python): their
 * processes for the current thread count, started when a configuration of a
 * new thread count needs them and announced in the header lines; and, for
 * the group of configurations measured together (sdpa_run.c: one shape in
 * its layouts and on its engines), one entry per shape the peers measure
 * (configurations that differ only in the engine share it), whose blocks of
 * each round run between attn's (bench_sdpa_between, measure/sdpa_measure.h).
 */
#ifndef ATTN_BENCH_SDPA_PEER_SET_H
#define ATTN_BENCH_SDPA_PEER_SET_H

#include "measure/sdpa_measure.h"
#include "peers/sdpa_peer.h"

#define BENCH_SDPA_GROUP_MAX (BENCH_SDPA_LAYOUT_COUNT * BENCH_ENGINE_COUNT * 2) /* 2: p, 0 */

struct bench_sdpa_peer_set;

typedef struct bench_sdpa_peer_entry {
    struct bench_sdpa_peer_set *set;
    bench_sdpa_shape shape;
    bench_peer_timing timings[BENCH_SDPA_PEER_COUNT];
} bench_sdpa_peer_entry;

typedef struct bench_sdpa_peer_set {
    const bench_sdpa_options *options;
    bench_peer_summary *summaries; /* [BENCH_SDPA_PEER_COUNT], the record's */
    size_t flush_mib;              /* the cold-cache read */
    bench_peer_process processes[BENCH_SDPA_PEER_COUNT];
    size_t threads; /* of the running processes; 0: none */
    bench_sdpa_peer_entry entries[BENCH_SDPA_GROUP_MAX]; /* of the current group */
    size_t entry_count;
} bench_sdpa_peer_set;

/* Starts the processes of the peers asked for at a thread count (announced
 * in the header lines); the configurations restart them when theirs differs. */
void bench_sdpa_peers_start(bench_sdpa_peer_set *set, size_t threads);

/* A new group of configurations: no entries. */
void bench_sdpa_peers_new_group(bench_sdpa_peer_set *set);

/* For a configuration of the group: the processes for its thread count, and
 * its shape's entry (a new one, whose blocks between gets; or the entry of
 * an earlier configuration of the group with the same shape, between->block
 * then NULL). Returns the entry's index. */
size_t bench_sdpa_peers_begin(bench_sdpa_peer_set *set, const bench_sdpa_shape *shape,
                              bench_sdpa_between *between);

/* The numbers of entry `entry` into point->peers. */
void bench_sdpa_peers_end(const bench_sdpa_peer_set *set, size_t entry,
                          bench_sdpa_point *point);

/* Ends the processes, their counts and notes into the summaries. */
void bench_sdpa_peers_stop(bench_sdpa_peer_set *set);

#endif /* ATTN_BENCH_SDPA_PEER_SET_H */
