#!/bin/sh
# The four cases of issue 27: f32, 2 threads, 3 interleaved rounds, every peer.
B=${ATTN_BENCH:-../../../../../build/ci/bench/attn-bench}
lscpu > lscpu.txt
COMMON="--threads 2 --rounds 7 --peers torch,ort,openvino,ggml --progress none --dtype f32 --op forward"
$B sdpa $COMMON --B 1 --Tq 2048 --Tk 2048 --NH 32 --NH-kv 8 --hs 128 --causal 1 --csv prefill-2048-gqa.csv --json prefill-2048-gqa.json > prefill-2048-gqa.txt 2>&1
$B sdpa $COMMON --B 1 --Tq 1024 --Tk 1024 --NH 12 --NH-kv 12 --hs 64 --causal 1 --csv prefill-1024-mha.csv --json prefill-1024-mha.json > prefill-1024-mha.txt 2>&1
$B sdpa $COMMON --B 1 --Tq 1 --Tk 8192 --NH 32 --NH-kv 8 --hs 128 --causal 1 --csv decode-8192.csv --json decode-8192.json > decode-8192.txt 2>&1
$B sdpa $COMMON --B 1 --Tq 4096 --Tk 4096 --NH 8 --NH-kv 8 --hs 64 --causal 1 --csv prefill-4096.csv --json prefill-4096.json > prefill-4096.txt 2>&1
