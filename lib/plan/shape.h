/* The dimensions of an attention problem (see the conventions in attn.h). */
#ifndef ATTN_SHAPE_H
#define ATTN_SHAPE_H

#include <stddef.h>

typedef struct attn_shape {
    size_t B, T, C, NH, hs;
} attn_shape;

#endif /* ATTN_SHAPE_H */
