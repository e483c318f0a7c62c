#!/bin/bash
# The runs of split-c529b11.csv: decode steps in attn's rows (bshd) and
# PyTorch's heads-first cache layout (bhsd), warm and cold, the library
# before (OLD: 7e9552a) and after (NEW: c529b11) the split order, one after
# the other, shape by shape, REPS times, with the same attn-bench.
# usage: OLD=dir NEW=dir split-commands.sh OUTDIR REPS   (dirs holding libattn.so)
out=$1; reps=$2; mkdir -p "$out"
shapes=("32 32 2048 128" "32 8 8192 128" "16 4 4096 64" "12 12 1024 64")
for rep in $(seq 1 "$reps"); do
  for sh in "${shapes[@]}"; do
    read -r nh kv tk hs <<<"$sh"
    for lib in old new; do
      dir=$OLD; [[ $lib == new ]] && dir=$NEW
      LD_LIBRARY_PATH=$dir build/ci/bench/attn-bench sdpa --Tq 1 --NH "$nh" --NH-kv "$kv" \
        --Tk "$tk" --hs "$hs" --layout bshd,bhsd --cache warm,cold --peers none --threads 2 \
        --csv "$out/$lib-$nh-$kv-$tk-$hs-$rep.csv" --json none > "$out/$lib-$nh-$kv-$tk-$hs-$rep.txt" 2>&1
    done
  done
done
