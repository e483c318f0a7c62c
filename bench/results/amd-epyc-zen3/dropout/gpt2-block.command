# run from bench/results/amd-epyc-zen3/dropout with the attn-bench of this
# commit; the run command has no --rounds: 7 runs, each measuring the block at
# p = 0 and p = 0.1 together (attn's calls interleaved in 8 blocks of
# --min-time / 8, then PyTorch's at each p)
for r in 1 2 3 4 5 6 7; do
  attn-bench --sweep ../../../sweeps/dropout/gpt2-block.sweep --min-time 3 \
    --csv gpt2-block-$r.csv --json gpt2-block-$r.json --progress none > gpt2-block-$r.txt
done
