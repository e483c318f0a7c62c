"""PyTorch's attention to compare with: its own SDPA (torch >= 2) or, before it
existed, the composed math softmax(q k^T * scale + mask) v that SDPA computes."""

import math

import torch
import torch.nn.functional as F

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
TORCH_MAJOR = int(torch.__version__.split(".")[0])


def composed(query, key, value, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
    """PyTorch's documented reference implementation of SDPA (no dropout)."""
    L, S = query.size(-2), key.size(-2)
    scale = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    bias = torch.zeros(L, S, dtype=query.dtype)
    if is_causal:
        bias = bias.masked_fill(torch.ones(L, S, dtype=torch.bool).tril().logical_not(),
                                float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = bias.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            bias = attn_mask + bias
    if enable_gqa:
        key = key.repeat_interleave(query.size(-3) // key.size(-3), -3)
        value = value.repeat_interleave(query.size(-3) // value.size(-3), -3)
    weights = torch.softmax(query @ key.transpose(-2, -1) * scale + bias, dim=-1)
    return weights @ value


def pytorch_sdpa(query, key, value, attn_mask=None, is_causal=False, scale=None,
                 enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention where it exists (with its
    arguments as far as that version has them), else `composed`."""
    if not HAS_SDPA:
        return composed(query, key, value, attn_mask, is_causal, scale, enable_gqa)
    kwargs = {}
    if scale is not None:
        kwargs["scale"] = scale
    if enable_gqa and query.size(-3) != key.size(-3):
        try:
            return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask,
                                                  is_causal=is_causal, enable_gqa=True,
                                                  **kwargs)
        except TypeError:  # a torch 2.x before enable_gqa
            return composed(query, key, value, attn_mask, is_causal, scale, enable_gqa)
    try:
        return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask,
                                              is_causal=is_causal, **kwargs)
    except TypeError:  # a torch 2.0 without scale
        return composed(query, key, value, attn_mask, is_causal, scale, enable_gqa)
