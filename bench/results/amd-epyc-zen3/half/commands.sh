#!/bin/sh
# Issue 25's cases in f32, bf16 and f16 beside PyTorch 2.x in the same dtype:
# 2 threads, interleaved rounds. Run from this folder on a quiet machine.
B=${ATTN_BENCH:-../../../../build/release/bench/attn-bench}
lscpu > lscpu.txt
COMMON="--threads 2 --peers torch --progress none --dtype f32,bf16,f16"
SHAPE="--B 1 --NH 32 --NH-kv 8 --hs 128 --causal 1"
$B sdpa $COMMON $SHAPE --rounds 9 --op forward --Tq 1 --Tk 8192 --cache warm,cold \
  --csv decode-8192.csv --json decode-8192.json > decode-8192.txt 2>&1
$B sdpa $COMMON $SHAPE --rounds 3 --op forward --Tq 2048 --Tk 2048 \
  --csv prefill-2048.csv --json prefill-2048.json > prefill-2048.txt 2>&1
$B sdpa $COMMON $SHAPE --rounds 3 --op backward --Tq 2048 --Tk 2048 \
  --csv prefill-2048-backward.csv --json prefill-2048-backward.json > prefill-2048-backward.txt 2>&1
