/*
 * The problems both MPI correctness suites run (ring_support.h), on every
 * rank count: multi-head, grouped-query (NH_kv < NH) and multi-query heads;
 * B > 1; causal and not; contiguous (odd token counts, a single token per
 * rank) and zigzag; hs_v != hs; strided rows (gaps NaN in the inputs,
 * untouched in the outputs); a given scale; no lse (the forward); shapes
 * past one query block of attn's sdpa engine (128 queries); and blocks
 * computed in 2, 3 and 4 pieces of heads (lib/ring/ring.h); and every
 * layout of rt_layout: (B,NH,T,hs) arrays, with spare rows per head (a
 * cache's capacity), and Q, K, V (and dQ, dK, dV) fused in one buffer.
 */
#include "ring_support.h"

/*                  B  NH NHkv  T   hs hs_v causal zig pad no_lse scale seed layout */
const rt_problem rt_cases[] = {
    {2, 2, 2, 5, 8, 0, 0, 0, 0, 0, 0.0, 11, RT_ROWS},     /* mha, odd T, not causal */
    {2, 4, 2, 5, 8, 0, 1, 0, 0, 0, 0.0, 12, RT_ROWS},     /* GQA, odd T, causal */
    {2, 4, 1, 6, 8, 4, 1, 1, 0, 0, 0.0, 13, RT_ROWS},     /* MQA, hs_v != hs, causal zigzag */
    {1, 2, 1, 4, 4, 0, 0, 1, 0, 0, 0.0, 14, RT_ROWS},     /* zigzag, not causal */
    {2, 2, 1, 7, 16, 0, 1, 0, 3, 0, 0.0, 15, RT_ROWS},    /* strided, causal */
    {2, 4, 2, 6, 8, 0, 1, 1, 2, 0, 0.3, 16, RT_ROWS},     /* strided zigzag, given scale */
    {3, 2, 2, 1, 8, 0, 1, 0, 0, 0, 0.0, 17, RT_ROWS},     /* one token per rank, causal */
    {2, 4, 2, 6, 8, 0, 1, 1, 0, 1, 0.0, 18, RT_ROWS},     /* no lse (forward only) */
    {1, 2, 1, 130, 32, 0, 1, 1, 0, 0, 0.0, 19, RT_ROWS},  /* past a query block, zigzag */
    {1, 2, 2, 129, 24, 0, 1, 0, 2, 0, 0.0, 20, RT_ROWS},  /* past a query block, strided */
    {2, 8, 4, 6, 8, 0, 1, 1, 1, 0, 0.0, 21, RT_ROWS},     /* GQA 8/4: blocks in 4 pieces of heads */
    {1, 12, 6, 5, 8, 0, 0, 0, 0, 0, 0.0, 22, RT_ROWS},    /* GQA 12/6: 3 pieces, not causal */
    {2, 4, 2, 5, 8, 0, 1, 0, 0, 0, 0.0, 23, RT_HEADS},    /* (B,NH,T,hs), GQA, causal */
    {2, 8, 4, 6, 8, 4, 1, 1, 2, 0, 0.0, 24, RT_HEADS},    /* with spare rows, zigzag, 4 pieces */
    {2, 4, 1, 4, 8, 0, 0, 0, 1, 0, 0.3, 25, RT_HEADS},    /* MQA, not causal, given scale */
    {2, 4, 2, 3, 8, 0, 1, 0, 0, 1, 0.0, 26, RT_HEADS},    /* no lse (forward only) */
    {1, 2, 1, 130, 16, 0, 1, 1, 0, 0, 0.0, 27, RT_HEADS},  /* past a query block, zigzag */
    {2, 4, 2, 7, 8, 0, 1, 0, 3, 0, 0.0, 28, RT_FUSED},    /* fused QKV, GQA, causal, gaps */
    {2, 6, 3, 6, 8, 4, 1, 1, 0, 0, 0.0, 29, RT_FUSED},    /* fused, hs_v != hs, zigzag */
    {1, 2, 2, 5, 16, 0, 0, 0, 2, 0, 0.0, 30, RT_FUSED},   /* fused MHA, not causal */
};
const char *const rt_case_names[] = {
    "mha_odd",          "gqa_causal_odd",       "mqa_causal_zigzag", "zigzag_full",
    "strided_causal",   "strided_zigzag_scale", "one_token",         "no_lse",
    "large_zigzag",     "large_contiguous",     "gqa_4_pieces",      "gqa_3_pieces",
    "heads_gqa_causal", "heads_spare_zigzag",   "heads_mqa_full",    "heads_no_lse",
    "heads_large",      "fused_gqa_causal",     "fused_zigzag",      "fused_mha_full"};
_Static_assert(sizeof rt_cases / sizeof rt_cases[0] ==
                   sizeof rt_case_names / sizeof rt_case_names[0],
               "a name per case");
const size_t rt_case_count = sizeof rt_cases / sizeof rt_cases[0];
