/*
 * The peers of attn-bench sdpa: bench/peers/torch_sdpa_peer.py, run as the
 * run command's python peers are (peer_process.h: found next to the
 * installed executable or in the source tree, the first interpreter of a
 * list that gets it ready, one process per thread count with
 * OPENBLAS/OMP/MKL_NUM_THREADS and --threads set), speaking its own line
 * per configuration and round (the protocol is in the script's docstring).
 *   torch   --function torch: torch.nn.functional.scaled_dot_product_attention
 *   python  --function attn: attn.torch.scaled_dot_product_attention, attn's
 *           PyTorch drop-in (python/), on the library this attn-bench runs
 *           on (--attn-library), from the interpreter's installed attn
 *           package or else the source tree's python/src (--attn-source):
 *           the C call plus what the binding costs per call
 */
#ifndef ATTN_BENCH_SDPA_PEER_H
#define ATTN_BENCH_SDPA_PEER_H

#include <stddef.h>

#include "peers/peer_process.h"
#include "sdpa/sdpa_config.h"
#include "util/timing.h"

typedef enum bench_sdpa_peer_kind {
    BENCH_SDPA_PEER_TORCH = 0,
    BENCH_SDPA_PEER_PYTHON = 1
} bench_sdpa_peer_kind;
#define BENCH_SDPA_PEER_COUNT 2

extern const char *const bench_sdpa_peer_names[BENCH_SDPA_PEER_COUNT];

typedef struct bench_sdpa_peer_timing {
    int measured;
    bench_timing timing;
    char out_dtype[16];
    double check_error; /* the peer's own check of its out against its inputs; < 0: none */
    char mask[96];      /* what the function got: is_causal, none, bool(B,1,Tq,Tk), ... */
    char note[160];     /* why there are no numbers */
    int pending;        /* a round of this configuration is measured, more are to come */
} bench_sdpa_peer_timing;

typedef struct bench_sdpa_peer_setup {
    bench_sdpa_peer_kind kind;
    const char *script_override; /* --torch-script, or NULL */
    const char *pythons;         /* --torch-python or --attn-python */
    size_t threads;
    const bench_repeat_policy *policy;
    unsigned long long seed;
    size_t flush_mib; /* the cold-cache read */
} bench_sdpa_peer_setup;

/* Starts the peer; 0, or -1 with the reasons in peer->note. */
int bench_sdpa_peer_start(bench_peer_process *peer, const bench_sdpa_peer_setup *setup);

/* Times round `round` of `rounds` (0-based) of one configuration: the
 * peer's block of it (measure.h's block policy, applied by the peer). The
 * last round's answer has the numbers of every round (result->measured);
 * the earlier ones set result->pending, or give a note (no more rounds
 * then). */
void bench_sdpa_peer_time(bench_peer_process *peer, const bench_sdpa_shape *shape,
                          size_t round, size_t rounds, bench_sdpa_peer_timing *result);

#endif /* ATTN_BENCH_SDPA_PEER_H */
