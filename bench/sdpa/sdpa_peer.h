/*
 * The PyTorch peer of attn-bench sdpa: bench/peers/torch_sdpa_peer.py, run
 * as the run command's python peers are (peer_process.h: found next to the
 * installed executable or in the source tree, the first interpreter of
 * --torch-python that gets it ready, one process per thread count with
 * OPENBLAS/OMP/MKL_NUM_THREADS and --threads set), speaking its own line
 * per configuration (the protocol is in the script's docstring).
 */
#ifndef ATTN_BENCH_SDPA_PEER_H
#define ATTN_BENCH_SDPA_PEER_H

#include <stddef.h>

#include "peers/peer_process.h"
#include "sdpa/sdpa_config.h"
#include "util/timing.h"

typedef struct bench_sdpa_peer_timing {
    int measured;
    bench_timing timing;
    char out_dtype[16];
    double check_error; /* the peer's own check of its out against its inputs; < 0: none */
    char mask[96];      /* what torch got: is_causal, none, bool(B,1,Tq,Tk), ... */
    char note[160];     /* why there are no numbers */
} bench_sdpa_peer_timing;

typedef struct bench_sdpa_peer_setup {
    const char *script_override; /* --torch-script, or NULL */
    const char *pythons;         /* --torch-python */
    size_t threads;
    const bench_repeat_policy *policy;
    unsigned long long seed;
    size_t flush_mib; /* the cold-cache read */
} bench_sdpa_peer_setup;

/* Starts the peer; 0, or -1 with the reasons in peer->note. */
int bench_sdpa_peer_start(bench_peer_process *peer, const bench_sdpa_peer_setup *setup);

/* Times one configuration (result->measured 0: no numbers, note says why). */
void bench_sdpa_peer_time(bench_peer_process *peer, const bench_sdpa_shape *shape,
                          bench_sdpa_peer_timing *result);

#endif /* ATTN_BENCH_SDPA_PEER_H */
