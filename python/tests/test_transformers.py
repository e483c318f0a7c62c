"""attn as a Hugging Face transformers attention implementation, against "sdpa".

Small models built from configs with random weights (nothing downloaded): a
GPT-2 (2 layers, width 64, 4 heads, every dropout 0; its q, k, v are views of
one fused projection) and a Llama with grouped-query heads (2 layers, width
64, 4 query heads, 2 key/value heads), each built twice with the same
weights, with attn_implementation="attn" and "sdpa" (PyTorch's SDPA), in
float32 and float64.

Checked, for a batch of two prompts, the second left-padded:
  - logits at every real (unpadded) position equal to sdpa's within 1e-5
    (float32) and 1e-12 (float64) of the largest |logit|. attn and PyTorch
    sum the attention's products in different orders, so float32 outputs
    differ in the last bits (a few 1e-7 here, measured); two layers of
    normalisation and MLP carry that to the logits without growing it by
    orders of magnitude: 1e-5 leaves a 50x margin and still catches a wrong
    mask, scale or head mapping (those change logits at 1e-2 and more).
    float64 alike at 1e-12 (measured below 1e-15);
  - greedy generation of 24 new tokens (a DynamicCache: prefill, then one
    token per step) identical;
  - float64 gradients of a training step (model(..., labels=...).loss
    backward) equal per parameter within 1e-12 of that parameter's largest
    gradient;
  - that attn did the work, with nothing copied: every attention call's
    query, key and value (the models' views and the cache's tensors) are
    the addresses C received, and key/value keep their NH_kv heads (GQA
    without repeat_kv).
Half precision: the Llama loaded in bfloat16 and float16, attn against
"sdpa" in that dtype: logits within 8 u of the largest (u the dtype's unit
roundoff), attn's logit error against float64 at most 1.5x sdpa's, greedy
tokens identical up to a near tie (see test_half_llama_logits_and_greedy_
generation for why).
Attention dropout: a GPT-2 from GPT2Config()'s default dropouts (0.1; two
small layers) trains with attn_implementation="attn" (six AdamW steps: the
loss finite and down, the run repeated bit for bit from the same
torch.manual_seed), and the model's attn_pdrop reaches attn (train: masks
differ per call, repeat per seed; eval: none).
Skipped when transformers is not installed.
"""

import copy
import math

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import attn.transformers as at_tf  # noqa: E402
from attn import _lib, _plans  # noqa: E402

from transformers import AutoModelForCausalLM, GPT2Config, LlamaConfig  # noqa: E402

VOCAB = 101
TOL = {torch.float32: 1e-5, torch.float64: 1e-12}


def configs():
    return {
        "gpt2": GPT2Config(n_layer=2, n_embd=64, n_head=4, attn_pdrop=0.0, resid_pdrop=0.0,
                           embd_pdrop=0.0, vocab_size=VOCAB, n_positions=128,
                           bos_token_id=1, eos_token_id=2),
        "llama": LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, vocab_size=VOCAB,
                             max_position_embeddings=128, bos_token_id=1, eos_token_id=2),
    }


def models(name, dtype):
    """(attn model, sdpa model) with the same random weights."""
    cfg = configs()[name]
    torch.manual_seed(0)
    ours = AutoModelForCausalLM.from_config(copy.deepcopy(cfg), attn_implementation="attn")
    theirs = AutoModelForCausalLM.from_config(copy.deepcopy(cfg), attn_implementation="sdpa")
    theirs.load_state_dict(ours.state_dict())
    assert ours.config._attn_implementation == "attn"
    assert theirs.config._attn_implementation == "sdpa"
    return ours.to(dtype).eval(), theirs.to(dtype).eval()


def batch():
    """Two prompts of 12 tokens, the second left-padded by 4 (pad id 0)."""
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(3, VOCAB, (2, 12), generator=g)
    mask = torch.ones_like(ids)
    ids[1, :4], mask[1, :4] = 0, 0
    return ids, mask


@pytest.fixture
def spy(monkeypatch):
    """Records, per attention call, the addresses of query, key, value and their
    head counts (attn.transformers' call into attn.torch), and the Q, K, V
    addresses of the C forwards and backwards."""
    calls, c_seen = [], []
    real_attention = at_tf.attention

    def attention(query, key, value, *args):
        calls.append((query.data_ptr(), key.data_ptr(), value.data_ptr(), query.shape[1],
                      key.shape[1]))
        return real_attention(query, key, value, *args)

    monkeypatch.setattr(at_tf, "attention", attention)
    for fn in ("_forward_f32", "_forward_f64", "_backward_f32", "_backward_f64",
               "_forward_bf16", "_forward_f16", "_backward_bf16", "_backward_f16"):
        real = getattr(_plans, fn)

        def c_call(plan, args, *rest, real=real):
            a = _lib.SdpaArgs.from_address(args)
            status = real(plan, args, *rest)
            if not status:
                c_seen.append((a.Q, a.K, a.V))
            return status
        monkeypatch.setattr(_plans, fn, c_call)
    return calls, c_seen


def assert_in_place(calls, c_seen, backward=False):
    assert calls, "attn was not called"
    forwards = c_seen[:len(calls)]
    assert [c[:3] for c in calls] == forwards
    if backward:
        assert sorted(c_seen[len(calls):]) == sorted(forwards)
    for _, _, _, nh, nh_kv in calls:
        assert nh_kv <= nh


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_logits_and_greedy_generation(spy, name, dtype):
    ours, theirs = models(name, dtype)
    ids, mask = batch()
    with torch.no_grad():
        got = ours(ids, attention_mask=mask).logits
        assert_in_place(*spy)
        want = theirs(ids, attention_mask=mask).logits
        real = mask.bool()
        err = (got - want)[real].abs().max().item()
        assert err <= TOL[dtype] * want[real].abs().max().item(), err
        spy[0].clear()
        spy[1].clear()
        out = ours.generate(ids, attention_mask=mask, max_new_tokens=24, min_new_tokens=24,
                            do_sample=False, pad_token_id=0)
        assert_in_place(*spy)
        expected = theirs.generate(ids, attention_mask=mask, max_new_tokens=24,
                                   min_new_tokens=24, do_sample=False, pad_token_id=0)
    assert out.shape == (2, 12 + 24)
    assert torch.equal(out, expected)
    # prefill, then 23 single-token steps reading the cache, in every layer
    layers = ours.config.num_hidden_layers
    assert len(spy[0]) == 24 * layers


# Half precision: unit roundoff u of the models' dtype (bfloat16: 8
# significant bits, float16: 11).
HALF_U = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}


def half_llamas(dtype):
    """(attn model, sdpa model, float64 sdpa model) of one grouped-query
    Llama's random weights, the first two in dtype (the float64 one from the
    same weights rounded to dtype). initializer_range 0.2 (not 0.02) gives
    scores of a few units, so the attention weights are far from uniform: at
    0.02, q.k/sqrt(hs) is about 0.1 and every key gets nearly the same
    weight, which would hide a wrong mask or alignment."""
    cfg = configs()["llama"]
    cfg.initializer_range = 0.2
    torch.manual_seed(0)
    ours = AutoModelForCausalLM.from_config(copy.deepcopy(cfg), attn_implementation="attn")
    theirs = AutoModelForCausalLM.from_config(copy.deepcopy(cfg), attn_implementation="sdpa")
    exact = AutoModelForCausalLM.from_config(copy.deepcopy(cfg), attn_implementation="sdpa")
    theirs.load_state_dict(ours.state_dict())
    exact.load_state_dict(ours.state_dict())
    return (ours.to(dtype).eval(), theirs.to(dtype).eval(),
            exact.to(dtype).to(torch.float64).eval())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_half_llama_logits_and_greedy_generation(spy, dtype):
    """A Llama loaded in bfloat16 / float16 with attn against "sdpa" in that
    dtype (its whole network in it: every projection, norm and MLP rounds
    to the dtype, attn only the attention).

    Logits at the real positions: within 8 u of the largest |logit| of
    sdpa's. attn and PyTorch each round the attention's output once from
    float, but where their float results straddle a rounding boundary they
    round to neighbours (one ulp apart); the rest of the half-precision
    network carries that to the logits: measured up to 4 u over 4 seeds and
    2 weight scales (2.7 u here). 8 u is 3% of the largest logit for
    bfloat16, 0.4% for float16; errors move them much more (measured on
    this model: no causal mask 110%, a scale 10% off 9-11%).
    Also, as the issue asks of the attention itself: attn's model's largest
    logit error against the same weights run in float64 at most 1.5 times
    sdpa's (measured 0.73-1.22).

    Greedy generation (24 tokens, prompt left-padded): identical, or, where
    the two first differ in a row, the two tokens are a near tie for sdpa's
    model itself: its logits for them (teacher-forced on the shared
    prefix) within the same 8 u. Greedy decoding in bfloat16 flips at such
    ties whatever computes the attention (its logits are bfloat16 values:
    equal ones are common); after the first flip the contexts differ and
    nothing more is compared. (Here float16 comes out identical; bfloat16
    diverges at one near tie.)"""
    ours, theirs, exact = half_llamas(dtype)
    u = HALF_U[dtype]
    ids, mask = batch()
    real = mask.bool()
    with torch.no_grad():
        got = ours(ids, attention_mask=mask).logits
        assert got.dtype == dtype
        assert_in_place(*spy)
        want = theirs(ids, attention_mask=mask).logits
        x = exact(ids, attention_mask=mask).logits
        tol = 8 * u * want[real].abs().max().item()
        assert (got - want)[real].abs().max().item() <= tol
        ours_err = (got.double() - x)[real].abs().max().item()
        theirs_err = (want.double() - x)[real].abs().max().item()
        assert ours_err <= 1.5 * theirs_err, (ours_err, theirs_err)
        spy[0].clear()
        spy[1].clear()
        out = ours.generate(ids, attention_mask=mask, max_new_tokens=24, min_new_tokens=24,
                            do_sample=False, pad_token_id=0)
        assert_in_place(*spy)
        expected = theirs.generate(ids, attention_mask=mask, max_new_tokens=24,
                                   min_new_tokens=24, do_sample=False, pad_token_id=0)
        assert out.shape == expected.shape == (2, 12 + 24)
        assert torch.equal(out[:, :12], ids)
        full = torch.cat([mask, torch.ones(2, 24, dtype=mask.dtype)], 1)
        forced = theirs(expected, attention_mask=full).logits
        for row in range(2):
            differ = (out[row] != expected[row]).nonzero()
            if len(differ):
                p = differ[0].item()
                a, b = int(out[row, p]), int(expected[row, p])
                gap = abs(forced[row, p - 1, a] - forced[row, p - 1, b]).item()
                assert gap <= tol, "row %d, token %d: %d vs %d, gap %.3g" % (row, p, a, b, gap)
    assert len(spy[0]) == 24 * ours.config.num_hidden_layers


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_training_step_gradients_float64(spy, name):
    ours, theirs = models(name, torch.float64)
    ours.train()
    theirs.train()
    ids, mask = batch()
    labels = ids.masked_fill(mask == 0, -100)
    loss = ours(ids, attention_mask=mask, labels=labels).loss
    loss.backward()
    assert_in_place(*spy, backward=True)
    expected = theirs(ids, attention_mask=mask, labels=labels).loss
    expected.backward()
    assert abs(loss.item() - expected.item()) <= 1e-12 * abs(expected.item())
    for (pname, p), q in zip(ours.named_parameters(), theirs.parameters()):
        assert (p.grad is None) == (q.grad is None), pname
        if q.grad is None:
            continue
        scale = max(q.grad.abs().max().item(), 1e-300)
        assert (p.grad - q.grad).abs().max().item() <= 1e-12 * scale, pname


def train_default_gpt2(steps=6):
    """Losses of a few AdamW steps of a GPT-2 from GPT2Config()'s defaults
    (attn_pdrop = resid_pdrop = embd_pdrop = 0.1; smaller width and depth)
    with attn_implementation="attn", from torch.manual_seed(0)."""
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=VOCAB, n_positions=128)
    assert cfg.attn_pdrop == 0.1
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="attn").train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    ids = torch.randint(3, VOCAB, (4, 32))
    losses = []
    for _ in range(steps):
        loss = model(ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_default_gpt2_trains_with_attention_dropout():
    losses = train_default_gpt2()
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < losses[0] - 0.1
    assert train_default_gpt2() == losses  # torch.manual_seed repeats the run


def test_attention_dropout_reaches_attn():
    cfg = copy.deepcopy(configs()["gpt2"])
    cfg.attn_pdrop = 0.5
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="attn").train()
    ids, mask = batch()
    torch.manual_seed(1)
    a = model(ids, attention_mask=mask).logits
    b = model(ids, attention_mask=mask).logits
    torch.manual_seed(1)
    c = model(ids, attention_mask=mask).logits
    assert torch.equal(a, c) and not torch.equal(a, b)
    model.eval()  # no dropout at inference: the same logits every time
    with torch.no_grad():
        assert torch.equal(model(ids, attention_mask=mask).logits,
                           model(ids, attention_mask=mask).logits)


def test_registered():
    assert "attn" in transformers.AttentionInterface()
    assert transformers.AttentionInterface()["attn"] is at_tf.attention_forward
