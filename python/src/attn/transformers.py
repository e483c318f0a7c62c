"""Hugging Face transformers: attn as an attention implementation.

    import attn.transformers                      # registers "attn"
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="attn")

Importing this module registers ``attention_forward`` under the name "attn"
with transformers' AttentionInterface (transformers >= 4.48), and
transformers' own SDPA mask builder (``sdpa_mask``: a boolean (B, 1, L, S)
mask, or None where is_causal says it all) under the same name with its
AttentionMaskInterface, so that models built with
``attn_implementation="attn"`` compute every attention of prefill, padded
batches, generation with a cache and training with libattn, exactly where
"sdpa" would call torch.nn.functional.scaled_dot_product_attention.

What each call does, against transformers' integrations/sdpa_attention.py:
  - query (B, NH, L, E), key and value (B, NH_kv, S, E) go to C in place:
    the models' transposed projections, fused-projection views (GPT-2) and
    the cache's (B, NH_kv, S, E) tensors (DynamicCache, StaticCache slices)
    are not copied;
  - grouped-query heads are attn's own (never repeat_kv);
  - the output is written straight into a (B, L, NH, E) tensor, the layout
    the model reads next (sdpa's transpose(1, 2).contiguous() is a copy
    there, a no-op here);
  - is_causal as sdpa decides it (a prompt of more than one token without a
    mask); the mask, boolean or additive, as PyTorch's SDPA reads it;
    position_bias (T5-like models) through transformers' own helper;
  - autograd through attn's backward (training), with the attention
    dropout the model passes (transformers passes 0 in eval): attn's
    Philox-4x32-10 masks, seeded from PyTorch's default generator
    (attn.torch.scaled_dot_product_attention).
Not supported, each raising NotImplementedError: softcap, attention sinks
(s_aux).
"""

try:
    import transformers as _transformers
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
except ImportError as _exc:  # pragma: no cover - exercised only without transformers
    raise ImportError("attn.transformers needs Hugging Face transformers >= 4.48 "
                      "(pip install transformers)") from _exc

from .torch import attention

__all__ = ["attention_forward", "NAME"]

#: The name to pass as attn_implementation.
NAME = "attn"


def attention_forward(module, query, key, value, attention_mask, dropout=0.0, scaling=None,
                      is_causal=None, **kwargs):
    """transformers' attention function signature: query (B, NH, L, E), key
    and value (B, NH_kv, S, E), attention_mask None or (B, 1|NH, L, S) bool
    (True: attend) or additive -> (attn_output (B, L, NH, E), None)."""
    if kwargs.get("softcap") is not None:
        raise NotImplementedError("attn does not support attention logit softcapping")
    if kwargs.get("s_aux") is not None:
        raise NotImplementedError("attn does not support attention sinks (s_aux)")
    L = query.shape[2]
    is_causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
    is_causal = bool(L > 1 and attention_mask is None and is_causal)
    position_bias = kwargs.get("position_bias")
    if position_bias is not None:
        from transformers.integrations.sdpa_attention import create_position_bias_mask
        attention_mask = create_position_bias_mask(position_bias, attention_mask, is_causal,
                                                   query, key)
        is_causal = False
    out = attention(query, key, value, attention_mask, dropout, is_causal, scaling,
                    query.shape[1] != key.shape[1], True)
    return out, None


AttentionInterface.register(NAME, attention_forward)
AttentionMaskInterface.register(NAME, sdpa_mask)
transformers_version = _transformers.__version__
