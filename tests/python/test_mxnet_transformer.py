"""The mxnet engine's transformer ops (frameworks/mxnet/engine.py):
layer_norm, gelu, positions, attention, tied_linear and seq_first, each
run by the engine as the worker drives it (compile, load_batches, a step,
output, parameters, gradients) and compared with the op's definition
written in NumPy (transformer_numpy.py, the oracle's:
src/engines/reference/ops/transformer.h).
Needs mxnet, whose environment (scripts/setup mxnet) pins numpy below
1.24: `tests/python/run.sh pytest-mxnet` runs this file there; elsewhere
it skips itself."""
from __future__ import annotations

import math
import os
from typing import List

import numpy as np
import pytest

mx = pytest.importorskip("mxnet")

import worker
from conftest import ROOT
from transformer_numpy import (Params, attention, attention_params, cross_entropy,
                               cross_entropy_gradient, gelu, identity, layer_norm, model,
                               numeric_gradient, rand, tied_model)

ENGINE = worker.load_module(os.path.join(ROOT, "frameworks", "mxnet", "engine.py"))
RTOL, ATOL = 1e-5, 1e-5


def compiled(m: dict, params: Params, lr: float = 0.0):
    e = ENGINE.Engine()
    e.compile(m, params, {"precision": "fp32", "device": "cpu",
                          "threads": ENGINE.ASKED_THREADS, "seed": 1,
                          "optimizer": "sgd", "learning_rate": lr, "momentum": 0.0,
                          "nesterov": False, "weight_decay": 0.0, "beta1": 0.9,
                          "beta2": 0.999, "alpha": 0.99, "rho": 0.9, "eps": 1e-8},
              {"train_batch": 0, "infer_batches": [1]})
    return e


def infer(e, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    e.load_batches({"input.0": x, "labels.0": labels})
    e.infer_step(0)
    out: np.ndarray = e.output()["output"]
    return out


def test_layer_norm_normalises_the_last_dim_with_the_biased_variance() -> None:
    rng = np.random.default_rng(1)
    g, b = rand(rng, 4), rand(rng, 4)
    m = model([{"name": "ln", "op": "layer_norm", "eps": 1e-3, "shape": [3, 4]}], [3, 4])
    e = compiled(m, {"ln.weight": g, "ln.bias": b})
    assert sorted(e.parameters()) == ["ln.bias", "ln.weight"]
    x = rand(rng, 2, 3, 4)
    x[0, 0] = [1, 2, 3, 4]  # by hand: mean 2.5, variance 1.25
    want = layer_norm(x, g, b, 1e-3)
    np.testing.assert_allclose(want[0, 0], (np.array([-1.5, -0.5, 0.5, 1.5]) /
                                            math.sqrt(1.25 + 1e-3)) * g + b, rtol=1e-6)
    got = infer(e, x, np.zeros((2, 3), np.int64))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_layer_norm_keeps_its_eps_at_bert_size() -> None:
    """BERT's eps, 1e-12: a row of small spread is still normalised by its
    own variance, with no floor of eps's usual size."""
    x = np.array([[[1.0, 1.001, 1.002, 1.003]]], np.float32)
    m = model([{"name": "ln", "op": "layer_norm", "eps": 1e-12, "shape": [1, 4]}], [1, 4])
    e = compiled(m, {"ln.weight": np.ones(4, np.float32), "ln.bias": np.zeros(4, np.float32)})
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(-1, keepdims=True)) / x64.std(-1, keepdims=True)
    np.testing.assert_allclose(infer(e, x, np.zeros((1, 1), np.int64)), want, atol=2e-3)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_is_exact_or_the_tanh_approximation(approximate: bool) -> None:
    layers, p = identity([{"name": "g", "op": "gelu", "approximate": approximate,
                           "shape": [7]}], 7)
    e = compiled(model(layers, [7]), p)
    x = np.array([[-3, -1, -0.5, 0, 0.5, 1, 3]], np.float32)
    want = gelu(x, approximate)
    assert want[0, 5] == pytest.approx(0.8411919906 if approximate else 0.8413447461,
                                       abs=1e-7)
    got = infer(e, x, np.zeros(1, np.int64))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-6)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_gradient_is_the_derivative_of_its_form(approximate: bool) -> None:
    """The identity linear's weight gradient is x^T dY: with dY from the
    loss through GELU, it carries GELU's derivative (the oracle's
    gelu_derivative)."""
    layers, p = identity([{"name": "g", "op": "gelu", "approximate": approximate,
                           "shape": [5]}], 5)
    rng = np.random.default_rng(6)
    x = rand(rng, 3, 5)
    labels = np.array([0, 3, 4], np.int64)
    e = compiled(model(layers, [5]), p)
    e.load_batches({"input.0": x, "labels.0": labels})
    loss = e.train_step(0)
    y = gelu(x, approximate)
    assert loss == pytest.approx(cross_entropy(y, labels), rel=1e-5)
    dz = cross_entropy_gradient(y, labels)
    np.testing.assert_allclose(e.gradients()["id.weight"], dz.T @ y, rtol=1e-4, atol=1e-6)


def test_positions_add_the_first_rows_of_the_table() -> None:
    rng = np.random.default_rng(2)
    table = rand(rng, 6, 4)  # 6 positions learned, 3 used
    layers, p = identity([{"name": "wpe", "op": "positions", "vocab": 6,
                           "shape": [3, 4]}], 4)
    e = compiled(model(layers, [3, 4]), {"wpe.weight": table, **p})
    assert sorted(e.parameters()) == ["id.bias", "id.weight", "wpe.weight"]
    x = rand(rng, 2, 3, 4)
    labels = np.array([[0, 1, 2], [3, 2, 1]], np.int64)
    got = infer(e, x, labels)
    np.testing.assert_allclose(got, x + table[None, :3], rtol=RTOL, atol=ATOL)
    # The table's gradient: each used row the sum over the batch of the
    # output's gradient there, the unused rows zero.
    e.train_step(0)
    dz = cross_entropy_gradient(got, labels)
    want = np.zeros((6, 4))
    want[:3] = dz.sum(0)
    np.testing.assert_allclose(e.gradients()["wpe.weight"], want, rtol=1e-4, atol=1e-7)


def test_seq_first_takes_position_zero() -> None:
    layers, p = identity([{"name": "cls", "op": "seq_first", "shape": [4]}], 4)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = infer(compiled(model(layers, [3, 4]), p), x, np.zeros(2, np.int64))
    np.testing.assert_array_equal(got, [[0, 1, 2, 3], [12, 13, 14, 15]])


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_attention_with_two_heads(causal: bool, bias: bool) -> None:
    rng = np.random.default_rng(3)
    t, f = 5, 6
    p = attention_params(rng, f, bias)
    m = model([{"name": "a", "op": "attention", "heads": 2, "causal": causal,
                "bias": bias, "shape": [t, f]}], [t, f])
    e = compiled(m, p)
    assert sorted(e.parameters()) == sorted(p)
    x = rand(rng, 2, t, f)
    got = infer(e, x, np.zeros((2, t), np.int64))
    np.testing.assert_allclose(got, attention(x, p, 2, causal), rtol=1e-4, atol=1e-4)
    # One head of width F is another function: the heads are really split.
    assert not np.allclose(got, attention(x, p, 1, causal), rtol=1e-3, atol=1e-3)
    # Causal: changing the last position leaves the earlier ones as they were.
    x2 = x.copy()
    x2[:, -1] += 1
    got2 = infer(e, x2, np.zeros((2, t), np.int64))
    assert np.allclose(got2[:, :-1], got[:, :-1], rtol=1e-5, atol=1e-5) == causal


@pytest.mark.parametrize("causal", [False, True])
def test_attention_gradients_are_the_losss_derivatives(causal: bool) -> None:
    """Every projection's gradient against central differences of the
    loss computed in float64 from the definition; the causal mask's -inf
    leaves no NaN behind."""
    rng = np.random.default_rng(7)
    n, t, f = 2, 4, 6
    p = {k: v * 0.5 for k, v in attention_params(rng, f, True).items()}
    x = rand(rng, n, t, f)
    labels = rng.integers(0, f, (n, t)).astype(np.int64)
    m = model([{"name": "a", "op": "attention", "heads": 3, "causal": causal,
                "bias": True, "shape": [t, f]}], [t, f])
    e = compiled(m, p)
    e.load_batches({"input.0": x, "labels.0": labels})

    def loss(q: Params) -> float:
        return cross_entropy(attention(x, q, 3, causal), labels)

    assert e.train_step(0) == pytest.approx(loss(p), rel=1e-5)
    grads = e.gradients()
    assert sorted(grads) == sorted(p)
    for name in p:
        assert np.isfinite(grads[name]).all(), name
        np.testing.assert_allclose(grads[name], numeric_gradient(loss, p, name),
                                   rtol=1e-3, atol=1e-5, err_msg=name)


def test_tied_linear_maps_by_the_embedding_table_and_adds_its_gradient_there() -> None:
    rng = np.random.default_rng(4)
    v, f, n, t = 7, 3, 2, 4
    table = rand(rng, v, f)
    tokens = rng.integers(0, v, (n, t)).astype(np.int64)
    labels = rng.integers(0, v, (n, t)).astype(np.int64)
    e = compiled(tied_model(v, f, t), {"wte.weight": table})
    assert list(e.parameters()) == ["wte.weight"]  # no parameter of its own
    h = table[tokens].astype(np.float64)  # [N, T, F]
    logits = h @ table.T.astype(np.float64)  # [N, T, V]
    np.testing.assert_allclose(infer(e, tokens, labels), logits, rtol=RTOL, atol=ATOL)

    loss = e.train_step(0)
    assert loss == pytest.approx(cross_entropy(logits, labels), rel=1e-5)
    # Cross entropy's mean over the N*T positions; the gradient of the
    # table is the output layer's (dZ^T H) plus the embedding's (rows of
    # dZ E scattered to the tokens).
    dz2 = cross_entropy_gradient(logits, labels).reshape(-1, v)
    out_use = dz2.T @ h.reshape(-1, f)
    want = out_use.copy()
    np.add.at(want, tokens.reshape(-1), dz2 @ table)
    grads = e.gradients()
    assert list(grads) == ["wte.weight"]
    np.testing.assert_allclose(grads["wte.weight"], want, rtol=1e-4, atol=1e-6)
    # Both uses count: the output's alone is another gradient.
    assert not np.allclose(grads["wte.weight"], out_use, rtol=1e-3, atol=1e-4)


def test_tied_linear_trains_the_one_table() -> None:
    rng = np.random.default_rng(5)
    table = rand(rng, 5, 3)
    tokens = rng.integers(0, 5, (2, 4)).astype(np.int64)
    e = compiled(tied_model(5, 3, 4), {"wte.weight": table}, lr=0.5)
    e.load_batches({"input.0": tokens, "labels.0": tokens})
    e.train_step(0)
    g = e.gradients()["wte.weight"]
    np.testing.assert_allclose(e.parameters()["wte.weight"], table - 0.5 * g,
                               rtol=1e-5, atol=1e-6)
    trainable = [q for q in e.net.collect_params().values() if q.grad_req != "null"]
    assert len(trainable) == 1  # the Trainer steps the shared table once


def test_tied_linear_to_a_layer_that_is_not_an_embedding_is_refused() -> None:
    m = model([{"name": "x", "op": "linear", "out": 4, "shape": [3, 4]},
               {"name": "head", "op": "tied_linear", "tied": 0, "shape": [3, 4]}], [3, 4])
    with pytest.raises(ValueError, match="not an embedding"):
        ENGINE.Engine().check(m)


def test_a_small_gpt_trains_as_the_definition() -> None:
    """The ops in one hybridized graph (embedding, positions, layer norm,
    causal attention, residual, tanh GELU, tied head): the output, the
    loss and the gradients (the tied table's from both of its uses)
    against central differences of the whole model in float64."""
    rng = np.random.default_rng(8)
    v, f, t, n = 11, 4, 3, 2
    layers: List[dict] = [
        {"name": "wte", "op": "embedding", "vocab": v, "out": f, "shape": [t, f]},
        {"name": "wpe", "op": "positions", "vocab": 5, "shape": [t, f]},
        {"name": "ln", "op": "layer_norm", "eps": 1e-5, "shape": [t, f]},
        {"name": "a", "op": "attention", "heads": 2, "causal": True, "bias": True,
         "shape": [t, f]},
        {"name": "res", "op": "add", "inputs": [1, 3], "shape": [t, f]},
        {"name": "g", "op": "gelu", "approximate": True, "shape": [t, f]},
        {"name": "head", "op": "tied_linear", "tied": 0, "shape": [t, v]}]
    p = {"wte.weight": rand(rng, v, f), "wpe.weight": rand(rng, 5, f),
         "ln.weight": 1 + 0.1 * rand(rng, f), "ln.bias": 0.1 * rand(rng, f),
         **{k: 0.5 * w for k, w in attention_params(rng, f, True).items()}}
    tokens = rng.integers(0, v, (n, t)).astype(np.int64)
    labels = rng.integers(0, v, (n, t)).astype(np.int64)

    def forward(q: Params) -> np.ndarray:
        e0 = q["wte.weight"][tokens] + q["wpe.weight"][None, :t]
        ln = layer_norm(e0, q["ln.weight"], q["ln.bias"], 1e-5)
        r = e0 + attention(ln, q, 2, True)
        out: np.ndarray = gelu(r, True) @ q["wte.weight"].T
        return out

    def loss(q: Params) -> float:
        return cross_entropy(forward(q), labels)

    e = compiled(model(layers, [t], "int64"), p)
    p64 = {k: w.astype(np.float64) for k, w in p.items()}
    np.testing.assert_allclose(infer(e, tokens, labels), forward(p64), rtol=1e-4, atol=1e-5)
    assert e.train_step(0) == pytest.approx(loss(p64), rel=1e-5)
    grads = e.gradients()
    assert sorted(grads) == sorted(p)
    for name in ("wte.weight", "wpe.weight", "ln.weight", "a.in_weight"):
        np.testing.assert_allclose(grads[name], numeric_gradient(loss, p, name),
                                   rtol=1e-3, atol=1e-5, err_msg=name)


# Generation: prefill and decode on the KV cache.

GEN_V, GEN_F, GEN_HEADS, GEN_T = 23, 8, 2, 9  # GEN_T: the cache's capacity
GEN_BLOCKS = 2
GEN_SEED = 2  # both rows change token along the way (4 and 3 of 6 distinct)


def gpt_layers(v: int, f: int, heads: int, t: int) -> List[dict]:
    """A GPT-2 of two blocks (pre-norm attention and tanh-GELU MLP, each
    added back; a final norm, the head tied to the embedding): every op
    the cached forward runs. Two, so that the second block's keys and
    values come from the first's outputs at the earlier positions, which
    its causal mask shapes: with one, the mask could be wrong unseen."""
    layers: List[dict] = [
        {"name": "wte", "op": "embedding", "vocab": v, "out": f, "shape": [t, f]},
        {"name": "wpe", "op": "positions", "vocab": t, "shape": [t, f]}]
    for b in range(GEN_BLOCKS):
        x = len(layers) - 1  # the block's input, the residual stream
        layers += [
            {"name": f"h{b}.ln_1", "op": "layer_norm", "eps": 1e-5, "shape": [t, f]},
            {"name": f"h{b}.attn", "op": "attention", "heads": heads, "causal": True,
             "bias": True, "shape": [t, f]},
            {"name": f"h{b}.res_1", "op": "add", "inputs": [x, x + 2], "shape": [t, f]},
            {"name": f"h{b}.ln_2", "op": "layer_norm", "eps": 1e-5, "shape": [t, f]},
            {"name": f"h{b}.fc", "op": "linear", "out": 2 * f, "bias": True,
             "shape": [t, 2 * f]},
            {"name": f"h{b}.act", "op": "gelu", "approximate": True, "shape": [t, 2 * f]},
            {"name": f"h{b}.proj", "op": "linear", "out": f, "bias": True, "shape": [t, f]},
            {"name": f"h{b}.res_2", "op": "add", "inputs": [x + 3, x + 7],
             "shape": [t, f]}]
    return layers + [
        {"name": "ln_f", "op": "layer_norm", "eps": 1e-5, "shape": [t, f]},
        {"name": "head", "op": "tied_linear", "tied": 0, "shape": [t, v]}]


def gpt_params(rng: np.random.Generator, v: int, f: int, t: int) -> Params:
    """The tables scaled as GPT-2's (N(0, 0.02)) and the rest N(0, 1), so
    that the choice of token depends on every earlier position."""
    def small(*shape: int) -> np.ndarray:
        return (0.02 * rng.standard_normal(shape)).astype(np.float32)

    p = {"wte.weight": small(v, f), "wpe.weight": small(t, f),
         "ln_f.weight": np.ones(f, np.float32), "ln_f.bias": np.zeros(f, np.float32)}
    for b in range(GEN_BLOCKS):
        p.update({f"h{b}.ln_1.weight": 1 + 0.1 * rand(rng, f),
                  f"h{b}.ln_1.bias": 0.1 * rand(rng, f),
                  f"h{b}.attn.in_weight": rand(rng, 3 * f, f),
                  f"h{b}.attn.in_bias": rand(rng, 3 * f),
                  f"h{b}.attn.out_weight": rand(rng, f, f),
                  f"h{b}.attn.out_bias": rand(rng, f),
                  f"h{b}.ln_2.weight": 1 + 0.1 * rand(rng, f),
                  f"h{b}.ln_2.bias": 0.1 * rand(rng, f),
                  f"h{b}.fc.weight": rand(rng, 2 * f, f), f"h{b}.fc.bias": rand(rng, 2 * f),
                  f"h{b}.proj.weight": rand(rng, f, 2 * f), f"h{b}.proj.bias": rand(rng, f)})
    return p


def gpt_logits(p: Params, seqs: List[List[int]], heads: int) -> np.ndarray:
    """gpt_layers' logits [N, T, V] over whole sequences, by the NumPy
    definitions in float64."""
    q = {k: w.astype(np.float64) for k, w in p.items()}
    ids = np.array(seqs)
    x = q["wte.weight"][ids] + q["wpe.weight"][None, :ids.shape[1]]
    for b in range(GEN_BLOCKS):
        x = x + attention(layer_norm(x, q[f"h{b}.ln_1.weight"], q[f"h{b}.ln_1.bias"], 1e-5),
                          q, heads, True, name=f"h{b}.attn")
        h = layer_norm(x, q[f"h{b}.ln_2.weight"], q[f"h{b}.ln_2.bias"], 1e-5)
        h = gelu(h @ q[f"h{b}.fc.weight"].T + q[f"h{b}.fc.bias"], True)
        x = x + h @ q[f"h{b}.proj.weight"].T + q[f"h{b}.proj.bias"]
    out: np.ndarray = layer_norm(x, q["ln_f.weight"], q["ln_f.bias"], 1e-5) @ q["wte.weight"].T
    return out


def greedy(p: Params, rows: List[List[int]], steps: int) -> List[List[int]]:
    """Greedy generation by whole-sequence forwards (no cache): each step's
    tokens, the argmax of the last position's logits, by row. Each choice
    is clear of the runner-up by far more than float32's error, so that
    the engine's float32 must make the same one."""
    seqs = [list(r) for r in rows]
    got = []
    for _ in range(steps):
        last = gpt_logits(p, seqs, GEN_HEADS)[:, -1]
        top2 = np.sort(last, axis=-1)[:, -2:]
        assert (top2[:, 1] - top2[:, 0] > 1e-4).all(), "a near tie: another seed"
        step = [int(k) for k in last.argmax(-1)]
        got.append(step)
        for s, tok in zip(seqs, step):
            s.append(tok)
    return got


def generator(p: Params):
    return compiled(model(gpt_layers(GEN_V, GEN_F, GEN_HEADS, GEN_T), [GEN_T], "int64"),
                    p)


def generate(e, rows: List[List[int]], steps: int, capacity: int = GEN_T) -> List[List[int]]:
    got = [e.prefill(rows, capacity)]
    for _ in range(steps - 1):
        got.append(e.decode(got[-1]))
    return got


GEN_ROWS = [[3, 9, 1, 14], [20, 2, 2, 7]]


def test_generation_with_the_cache_gives_the_whole_sequences_logits() -> None:
    """prefill then decode on the KV cache: each step's next tokens are the
    argmax of the last position's logits of the whole sequence so far,
    computed from the definition."""
    p = gpt_params(np.random.default_rng(GEN_SEED), GEN_V, GEN_F, GEN_T)
    e = generator(p)
    assert e.hello()["generates"]
    # A prefill and 5 decodes: the 9 positions of the cache filled.
    want = greedy(p, GEN_ROWS, GEN_T - len(GEN_ROWS[0]) + 1)
    assert len({tuple(s) for s in want}) > 1  # the tokens change with the history
    assert generate(e, GEN_ROWS, len(want)) == want
    # The cache is kept for the same capacity and rows and a prefill starts
    # over: the same arrays, the same tokens.
    assert e.cache is not None
    keys = e.cache.k[3]  # layer 3: the first block's attention
    assert generate(e, GEN_ROWS, len(want)) == want
    assert e.cache.k[3] is keys


def test_a_chunk_after_cached_tokens_sees_the_cache_and_itself() -> None:
    """Several new tokens after cached ones (decode gives one at a time):
    new token j attends to the cache and the new ones up to itself, at
    positions offset by the cache's length; the last position's logits are
    the whole sequence's."""
    p = gpt_params(np.random.default_rng(GEN_SEED), GEN_V, GEN_F, GEN_T)
    e = generator(p)
    seqs = [[3, 9, 1, 14, 5, 6, 0], [20, 2, 2, 7, 11, 4, 17]]
    want = gpt_logits(p, seqs, GEN_HEADS)
    cache = ENGINE.Cache(GEN_T, len(seqs))
    with mx.autograd.pause(train_mode=False):
        for a, b in ((0, 4), (4, 7)):
            ids = mx.nd.array([s[a:b] for s in seqs], dtype="float32")
            got = e.net.cached(ids, cache).asnumpy()
            assert got.shape == (2, 1, GEN_V)  # the head on the last position only
            np.testing.assert_allclose(got[:, 0], want[:, b - 1], rtol=1e-4, atol=1e-6)
    assert cache.length == 7


def test_generation_decodes_the_rows_of_a_batch_apart() -> None:
    """A prompt alone and as the second row of a batch gives the same
    tokens: no row sees another's keys."""
    p = gpt_params(np.random.default_rng(GEN_SEED), GEN_V, GEN_F, GEN_T)
    e = generator(p)
    steps = GEN_T - len(GEN_ROWS[0]) + 1
    both = generate(e, GEN_ROWS, steps)
    alone = generate(e, GEN_ROWS[1:], steps)  # a new cache: one row
    assert [s[1] for s in both] == [s[0] for s in alone] == [s[1] for s in
                                                            greedy(p, GEN_ROWS, steps)]
    # The rows' tokens differ: the match is not one of equal rows.
    assert [s[0] for s in both] != [s[0] for s in alone]


def test_generation_refuses_a_token_past_the_caches_capacity() -> None:
    p = gpt_params(np.random.default_rng(GEN_SEED), GEN_V, GEN_F, GEN_T)
    e = generator(p)
    got = generate(e, GEN_ROWS, 3, capacity=6)  # 4 + 2 decoded: 6 of 6 held
    with pytest.raises(ValueError, match="7 tokens exceed the cache's 6"):
        e.decode(got[-1])
    with pytest.raises(ValueError, match="7 tokens exceed the cache's 6"):
        e.prefill([r + [1, 2, 3] for r in GEN_ROWS], 6)
    with pytest.raises(ValueError, match="3 tokens to decode for 2 rows"):
        e.decode([1, 2, 3])


def test_generation_at_bf16_is_amps_within_its_tolerance() -> None:
    """At bf16 each graph of the decoding loop is AMP's conversion (its
    FullyConnected layers bf16 on bf16 weights, the rest fp32): the
    logits of the whole sequences' definition to bf16's output tolerance,
    5e-2 of their largest (src/verify/tolerance), and more than 1e-4 off
    (a loop that ran fp32 is within 1e-5, the test above); the cache
    stays fp32; steps at bf16 are refused. Where MXNet's bf16 does not
    run, the hello names why and the compile refuses."""
    p = gpt_params(np.random.default_rng(GEN_SEED), GEN_V, GEN_F, GEN_T)
    m = model(gpt_layers(GEN_V, GEN_F, GEN_HEADS, GEN_T), [GEN_T], "int64")
    hello = ENGINE.Engine().hello()
    assert "int8" in hello["generation_gaps"]
    opts = {"precision": "bf16", "generation": True, "device": "cpu",
            "threads": ENGINE.ASKED_THREADS, "seed": 1, "optimizer": "sgd",
            "learning_rate": 0.0, "momentum": 0.0, "nesterov": False,
            "weight_decay": 0.0, "beta1": 0.9, "beta2": 0.999, "alpha": 0.99,
            "rho": 0.9, "eps": 1e-8}
    e = ENGINE.Engine()
    if ENGINE.bf16_problem():
        assert "bf16" not in hello["generation_precisions"]
        with pytest.raises(NotImplementedError, match="generation at bf16"):
            e.compile(m, p, opts, {"train_batch": 0, "infer_batches": [1]})
        return
    assert "bf16" in hello["generation_precisions"]
    eff = e.compile(m, p, opts, {"train_batch": 0, "infer_batches": [1]})
    assert eff["precision"] == "bf16" and eff["weights"].startswith("bf16")
    seqs = [list(r) for r in GEN_ROWS]
    tokens = e.prefill(seqs, GEN_T)
    worst = 0.0
    for _ in range(3):
        want = gpt_logits(p, seqs, GEN_HEADS)[:, -1]
        got = np.array(e.last_logits())
        worst = max(worst, float(np.abs(got - want).max() / np.abs(want).max()))
        for s, tok in zip(seqs, tokens):
            s.append(tok)
        tokens = e.decode(tokens)
    assert 1e-4 < worst < 5e-2
    assert e.cache is not None and e.cache.k[3].dtype == np.float32
    with pytest.raises(NotImplementedError, match="bf16 on the mxnet engine is inference only"):
        ENGINE.Engine().compile(m, p, {**opts, "generation": False},
                                {"train_batch": 2, "infer_batches": [1]})


def test_inference_steps_at_bf16_run_amps_conversion_of_the_model() -> None:
    """At bf16 an inference step runs AMP's conversion of the hybridized
    model (made on load_batches' first call, outside the clock): every
    position's logits to bf16's output tolerance of the NumPy definition
    (5e-2 of their largest) and more than 1e-4 off it (fp32 is within
    1e-5); hello lists bf16 as inference only; training at bf16 and int8
    are refused. Where MXNet's bf16 does not run, hello leaves bf16 out
    and the compile names why."""
    p = gpt_params(np.random.default_rng(GEN_SEED), GEN_V, GEN_F, GEN_T)
    m = model(gpt_layers(GEN_V, GEN_F, GEN_HEADS, GEN_T), [GEN_T], "int64")
    hello = ENGINE.Engine().hello()
    opts = {"precision": "bf16", "device": "cpu",
            "threads": ENGINE.ASKED_THREADS, "seed": 1, "optimizer": "sgd",
            "learning_rate": 0.0, "momentum": 0.0, "nesterov": False,
            "weight_decay": 0.0, "beta1": 0.9, "beta2": 0.999, "alpha": 0.99,
            "rho": 0.9, "eps": 1e-8}
    infer_only = {"train_batch": 0, "infer_batches": [2]}
    if ENGINE.bf16_problem():
        assert "bf16" not in hello["precisions"]
        with pytest.raises(NotImplementedError, match="bf16: MXNet's bf16"):
            ENGINE.Engine().compile(m, p, opts, infer_only)
        return
    assert "bf16" in hello["precisions"]
    assert hello["inference_only_precisions"] == ["bf16"]
    e = ENGINE.Engine()
    eff = e.compile(m, p, opts, infer_only)
    assert eff["precision"] == "bf16" and "the hybridized model" in eff["weights"]
    seqs = [[3, 9, 1, 14, 5, 8, 0, 2, 22], [20, 2, 2, 7, 11, 4, 6, 19, 1]]
    e.load_batches({"input.0": np.array(seqs, np.int64),
                    "labels.0": np.zeros((2, GEN_T), np.int64)})
    assert e.infer_net.converted is not None  # before any step: off the clock
    e.infer_step(0)
    got = e.output()["output"]
    assert got.dtype == np.float32
    want = gpt_logits(p, seqs, GEN_HEADS)
    error = float(np.abs(got - want).max() / np.abs(want).max())
    assert 1e-4 < error < 5e-2
    with pytest.raises(NotImplementedError, match="bf16 on the mxnet engine is inference only"):
        ENGINE.Engine().compile(m, p, opts, {"train_batch": 2, "infer_batches": [2]})
    with pytest.raises(NotImplementedError, match="int8: MXNet's int8"):
        ENGINE.Engine().compile(m, p, {**opts, "precision": "int8"}, infer_only)
