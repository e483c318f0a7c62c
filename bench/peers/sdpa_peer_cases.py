"""What torch_sdpa_peer.py times: one configuration of attn-bench sdpa as
PyTorch code runs it, for a function with the signature of
torch.nn.functional.scaled_dot_product_attention (PyTorch's own, or attn's
drop-in attn.torch.scaled_dot_product_attention).

Tensors in the configuration's layout. PyTorch's SDPA takes (B, NH, T, hs);
layout bhsd keeps every tensor so, contiguous; layout bshd keeps it as a
contiguous (B, T, NH, hs) tensor, attn's rows, passed as the transposed view
(storage.transpose(1, 2)). Both hold the same numbers (drawn as (B, NH, T,
hs) from numpy.random.default_rng((seed, B, NH, NH_KV, TQ, TK, HS, HS_V)),
uniform on [-sqrt 3, sqrt 3]: sdpa_peer_protocol.Inputs).

CallCase: one call. OP=forward under torch.inference_mode(); OP=backward
the forward and torch.autograd.grad(out, (Q, K, V), dout) with the storage
tensors as leaves (so the gradients come in the layout too); a row with
dropout (Config.dropout, P) passes dropout_p=P to the timed forward, and its
check runs an untimed forward at dropout_p=0 (the dropped output has no
reference).

LoopCase: the decode loop. Caches K, V of Tk + STEPS slots preallocated in
the layout ((B, NH_kv, S_max, hs) or (B, S_max, NH_kv, hs)), the first Tk
filled, the rest NaN; step s (S = Tk + s + 1) writes the step's token into
slot S - 1 (k_cache[:, :, S-1] = k, untimed) and times
fn(q, k_cache[:, :, :S], v_cache[:, :, :S], enable_gqa=...) (bshd: the slice
[:, :S] viewed transposed): no mask (the one query sees every key), the
whole pass under torch.inference_mode().

Each case's check: sdpa_peer_protocol.reference_error, max|out - ref| /
max|ref| over a few rows against float64 NumPy loops over each query's
visible keys, the visibility rule written out independently of the mask
tensors (Config.visible_range).

DTYPE bf16 and f16: torch.bfloat16 / torch.float16 tensors, drawn as float32
and rounded (Tensor.to); the additive masks (padding, full: the bias drawn and
rounded the same way) in that dtype too, as PyTorch takes a float mask of the
query's dtype; the check widens the tensors to float32 (exactly) for NumPy
and holds the error to attn.h's bound (sdpa_peer_protocol.reference_check):
beyond it the case fails (CheckFailed).
"""
import copy
import time

import peer_common
import sdpa_peer_protocol

np = torch = None  # set by bind()
TORCH_DTYPES = {"f32": "float32", "f64": "float64", "bf16": "bfloat16", "f16": "float16"}


def bind(numpy_module, torch_module):
    """The modules torch_sdpa_peer.py imported (it decides how to fail without them)."""
    global np, torch
    np, torch = numpy_module, torch_module


def visibility(c):
    """bool (B, 1, Tq or 1, Tk) tensor: True where the key is visible."""
    return torch.from_numpy(sdpa_peer_protocol.visibility(c))


def torch_mask(c, dtype, bias):
    """(attn_mask, is_causal, description) for the configuration."""
    if c.mask == "none":
        if c.full_lengths and c.window == 0:
            if not c.causal:
                return None, False, "none"
            if c.Tq == c.Tk:
                return None, True, "is_causal"
        seen = visibility(c)
        if bool(seen.all()):  # e.g. a causal decode step: every key visible
            return None, False, "none"
        return seen, False, "bool" + str(tuple(seen.shape)).replace(" ", "")
    seen = visibility(c)
    additive = torch.zeros(seen.shape, dtype=dtype).masked_fill(~seen, float("-inf"))
    if c.mask == "full":
        additive = bias + additive  # (B, NH, Tq, Tk)
    kind = str(dtype).replace("torch.", "")
    return additive, False, kind + str(tuple(additive.shape)).replace(" ", "")


class Inputs(sdpa_peer_protocol.Inputs):
    """The configuration's random (B, H, T, d) arrays as tensors, drawn in turn."""

    def __init__(self, c, seed):
        super().__init__(c, seed)
        self.dtype = getattr(torch, TORCH_DTYPES[c.dtype])

    def draw(self, *shape):
        """A tensor of the dtype (a half type's rounded from the float32 draw)."""
        return torch.from_numpy(super().draw(*shape)).to(self.dtype)

    def view(self, storage):
        """The (B, H, T, d) view of a tensor kept in the layout."""
        return storage if self.c.layout == "bhsd" else storage.transpose(1, 2)

    def placed(self, logical):
        """(storage, view): the (B, H, T, d) tensor in the layout, and its
        (B, H, T, d) view."""
        storage = logical if self.c.layout == "bhsd" else logical.transpose(1, 2).contiguous()
        return storage, self.view(storage)


def widened(tensor):
    """float32 of a half tensor (exact; NumPy reads no bfloat16), else the tensor."""
    if tensor is not None and tensor.dtype in (torch.bfloat16, torch.float16):
        return tensor.float()
    return tensor


def checked(c, Q, K, V, bias, out, times=None):
    """The error of reference_check on the widened tensors; CheckFailed
    beyond a half type's bound."""
    error, tolerance = sdpa_peer_protocol.reference_check(
        c, *(widened(t) for t in (Q, K, V, bias, out)), times=times)
    sdpa_peer_protocol.require_within(error, tolerance)
    return error


def gqa_options(c, fn_has_gqa):
    """(options, repeat): enable_gqa when the function has it, else how many
    times K and V are to be repeated (1: not at all)."""
    if c.NH_kv == c.NH:
        return {}, 1
    if fn_has_gqa:
        return {"enable_gqa": True}, 1
    return {}, c.NH // c.NH_kv


class CallCase:
    """One call on the configuration's tensors."""

    def __init__(self, c, fn, fn_has_gqa, seed, flush):
        inputs = Inputs(c, seed)
        self.c, self.flush = c, flush
        Q, K, V = (inputs.draw(c.B, c.NH, c.Tq, c.hs), inputs.draw(c.B, c.NH_kv, c.Tk, c.hs),
                   inputs.draw(c.B, c.NH_kv, c.Tk, c.hs_v))
        self.bias = inputs.draw(c.B, c.NH, c.Tq, c.Tk) if c.mask == "full" else None
        mask, is_causal, self.description = torch_mask(c, inputs.dtype, self.bias)
        options, repeat = gqa_options(c, fn_has_gqa)
        options.update(attn_mask=mask, is_causal=is_causal)
        self.Q, self.K, self.V = Q, K, V  # (B, H, T, d), for the check
        if repeat > 1:  # K and V repeated to NH heads, untimed
            K, V = (t.repeat_interleave(repeat, dim=1) for t in (K, V))
            self.description += ",KV-repeated"
        storages = [inputs.placed(t)[0] for t in (Q, K, V)]
        if c.op == "forward":
            views = [inputs.view(t) for t in storages]

            def call():
                with torch.inference_mode():
                    return fn(*views, **options)
        else:
            dout = inputs.placed(inputs.draw(c.B, c.NH, c.Tq, c.hs_v))[1]
            leaves = [t.requires_grad_() for t in storages]  # the gradients in the layout
            views = [inputs.view(t) for t in leaves]

            dropout = {"dropout_p": c.dropout} if c.dropout else {}

            def call():
                out = fn(*views, **options, **dropout)
                torch.autograd.grad(out, leaves, dout)
                return out
        self.undropped = (lambda: fn(*views, **options)) if c.dropout else None
        self.call = call
        self.out = None

    def block(self, policy, first):
        del first  # the policy has the warmup
        samples, self.out = peer_common.time_samples(self.call, policy, self.flush.before())
        return samples

    def check(self):
        """(the check's error, the output's dtype)."""
        with torch.no_grad():
            if self.undropped:
                self.out = self.undropped()
            error = checked(self.c, self.Q.detach(), self.K.detach(), self.V.detach(),
                            self.bias, self.out.detach())
        return error, str(self.out.dtype).replace("torch.", "")


class LoopCase:
    """The decode loop on caches preallocated in the layout."""

    def __init__(self, c, fn, fn_has_gqa, seed, flush):
        inputs = Inputs(c, seed)
        self.c, self.fn, self.flush = c, fn, flush
        self.capacity = c.Tk + c.steps
        self.caches = []
        for width in (c.hs, c.hs_v):
            logical = torch.full((c.B, c.NH_kv, self.capacity, width), float("nan"),
                                 dtype=inputs.dtype)
            logical[:, :, :c.Tk] = inputs.draw(c.B, c.NH_kv, c.Tk, width)
            self.caches.append(inputs.placed(logical))
        self.queries = [inputs.placed(inputs.draw(c.B, c.NH, 1, c.hs))[1]
                        for _ in range(c.steps)]
        self.tokens = [(inputs.draw(c.B, c.NH_kv, c.hs), inputs.draw(c.B, c.NH_kv, c.hs_v))
                       for _ in range(c.steps)]
        self.options, repeat = gqa_options(c, fn_has_gqa)
        if repeat > 1:
            raise peer_common.Unsupported("a decode loop needs enable_gqa (PyTorch >= 2.5)")
        self.description = "none"
        self.outs = {}

    def step_view(self, which, S):
        """The first S slots of the cache, as a (B, NH_kv, S, d) view."""
        storage = self.caches[which][0]
        return storage[:, :, :S] if self.c.layout == "bhsd" else storage[:, :S].transpose(1, 2)

    def append(self, step):
        slot = self.c.Tk + step
        for which in (0, 1):
            storage = self.caches[which][0]
            if self.c.layout == "bhsd":
                storage[:, :, slot] = self.tokens[step][which]
            else:
                storage[:, slot] = self.tokens[step][which]

    def one_pass(self, timed):
        samples = []
        before = self.flush.before()
        last = self.c.steps - 1
        with torch.inference_mode():
            for step in range(self.c.steps):
                self.append(step)
                S = self.c.Tk + step + 1
                k, v = self.step_view(0, S), self.step_view(1, S)
                if before:
                    before()
                start = time.perf_counter()
                out = self.fn(self.queries[step], k, v, **self.options)
                elapsed = time.perf_counter() - start
                if timed:
                    samples.append(elapsed)
                if step in (0, last):
                    self.outs[step] = out
        return samples

    def block(self, policy, first):
        """A pass (after --warmup untimed ones in the first round)."""
        for _ in range(policy.warmup if first else 0):
            self.one_pass(False)
        return self.one_pass(True)

    def check(self):
        """(the worst error of the first and the last step, the output's dtype)."""
        worst = 0.0
        for step, out in self.outs.items():
            S = self.c.Tk + step + 1
            view = copy.copy(self.c)
            view.Tq, view.Tk, view.lengths, view.full_lengths = 1, self.capacity, [S] * view.B, False
            error = checked(view, self.queries[step], self.step_view(0, self.capacity),
                            self.step_view(1, self.capacity), None, out, times=[0])
            worst = max(worst, error)
        return worst, str(out.dtype).replace("torch.", "")
