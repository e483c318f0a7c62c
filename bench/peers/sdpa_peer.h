/*
 * The peers of attn-bench sdpa: python scripts in bench/peers/, run as the
 * run command's python peers are (peer_process.h: found next to the
 * installed executable or in the source tree, the first interpreter of a
 * list that gets it ready, one process per thread count with
 * OPENBLAS/OMP/MKL_NUM_THREADS and --threads set), speaking one line per
 * configuration and round (the protocol: sdpa_peer_protocol.py).
 *   torch     torch_sdpa_peer.py --function torch:
 *             torch.nn.functional.scaled_dot_product_attention
 *   python    torch_sdpa_peer.py --function attn:
 *             attn.torch.scaled_dot_product_attention, attn's PyTorch drop-in
 *             (python/), on the library this attn-bench runs on
 *             (--attn-library), from the interpreter's installed attn package
 *             or else the source tree's python/src (--attn-source): the C
 *             call plus what the binding costs per call
 *   ort       ort_sdpa_peer.py: ONNX Runtime's attention operators
 *             (com.microsoft GroupQueryAttention / MultiHeadAttention, ONNX
 *             Attention of opset 23), the fastest that expresses the case
 *   openvino  openvino_sdpa_peer.py: OpenVINO's ScaledDotProductAttention
 *   ggml      ggml_sdpa_peer.py: ggml_flash_attn_ext, F32 and F16 K/V, on
 *             ggml's CPU backend built from source (bench/peers/ggml/)
 */
#ifndef ATTN_BENCH_SDPA_PEER_H
#define ATTN_BENCH_SDPA_PEER_H

#include <stddef.h>

#include "measure/peer_timing.h"
#include "peers/peer_process.h"
#include "measure/sdpa_config.h"
#include "util/timing.h"


typedef struct bench_sdpa_peer_setup {
    size_t kind; /* BENCH_SDPA_PEER_*: the peer kind BENCH_SDPA_PEER_FIRST + kind */
    const char *script_override; /* --torch-script (torch, python), or NULL */
    const char *script_dir;      /* --peer-dir: looked in first for the script, or NULL */
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
                          size_t round, size_t rounds, bench_peer_timing *result);

#endif /* ATTN_BENCH_SDPA_PEER_H */
