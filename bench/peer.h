/*
 * What any peer (an outside implementation timed on the same shapes) reports
 * for one configuration.
 */
#ifndef ATTN_BENCH_PEER_H
#define ATTN_BENCH_PEER_H

#include "timing.h"

typedef struct bench_peer_timing {
    int measured;          /* 0: no numbers for this configuration */
    bench_timing timing;   /* median, min, repeats as the peer measured them */
    char out_dtype[16];    /* element type of the peer's output, e.g. "float64" */
} bench_peer_timing;

#endif /* ATTN_BENCH_PEER_H */
