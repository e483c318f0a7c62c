/* The bfloat16 sdpa calls and conversions (sdpa_half.inc.c). */
#include <attn/attn.h>

#define HALF attn_bf16
#define HALF_DTYPE ATTN_BF16
#define HALF_IS_BF16 1
#define HN(name) name##_bf16
#define HALF_CONVERT(op) attn_bf16_##op
#include "api/sdpa_half.inc.c"
