/*
 * attn-bench sdpa: attention on given Q, K, V (attn_sdpa_*) over a sweep
 * of configurations -- prefill and decode shapes, grouped heads, key
 * lengths, masks, windows -- each checked against a naive reference, timed,
 * and set against PyTorch's scaled_dot_product_attention, the GEMM ceiling
 * and the machine's measured memory read bandwidth.
 */
#ifndef ATTN_BENCH_SDPA_RUN_H
#define ATTN_BENCH_SDPA_RUN_H

#include <stdio.h>

/* argv[first..] are the options; returns the exit status. */
int bench_sdpa_command(int argc, char **argv, int first);

void bench_sdpa_print_help(FILE *out);

#endif /* ATTN_BENCH_SDPA_RUN_H */
