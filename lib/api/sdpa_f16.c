/* The float16 sdpa calls and conversions (sdpa_half.inc.c). */
#include <attn/attn.h>

#define HALF attn_f16
#define HALF_DTYPE ATTN_F16
#define HALF_IS_BF16 0
#define HN(name) name##_f16
#define HALF_CONVERT(op) attn_f16_##op
#include "api/sdpa_half.inc.c"
