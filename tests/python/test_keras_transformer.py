"""The Keras engines' transformer ops (frameworks/common/keras_model.py):
layer_norm, gelu, positions, attention, tied_linear and seq_first, each
run by the jax engine as the worker drives it (compile, load_batches, a
step, output, parameters, gradients) and compared with the op's
definition written in NumPy (the oracle's:
src/engines/reference/ops/transformer.h). The tensorflow engine builds the
same Keras graph from the same file; `nnbench verify` checks it against the
C++ reference. Attention's parameters are split over several Keras
variables: their layouts are checked both ways, the gradients too (against
central differences of the NumPy definition)."""
from __future__ import annotations

import math
import os
from typing import Callable, Dict, List

import numpy as np
import pytest

import worker
from conftest import ROOT

ENGINE = worker.load_module(os.path.join(ROOT, "frameworks", "jax", "engine.py"))
RTOL, ATOL = 1e-5, 1e-5
Params = Dict[str, np.ndarray]


def model(layers: List[dict], shape: List[int], dtype: str = "float32") -> dict:
    return {"name": "t", "input": {"shape": shape, "dtype": dtype},
            "layers": layers, "loss": "softmax_cross_entropy"}


def compiled(m: dict, params: Params, lr: float = 0.0):
    e = ENGINE.Engine()
    # threads 0: the engine refuses a count other than the NNBENCH_THREADS
    # it started with; observe: gradients() reads the step's gradients.
    e.compile(m, params, {"precision": "fp32", "device": "cpu", "threads": 0, "seed": 1,
                          "optimizer": "sgd", "learning_rate": lr, "momentum": 0.0,
                          "nesterov": False, "weight_decay": 0.0, "beta1": 0.9,
                          "beta2": 0.999, "alpha": 0.99, "rho": 0.9, "eps": 1e-8,
                          "observe": True},
              {"train_batch": 0, "infer_batches": [1]})
    # nnbench's names and layouts come back as they went in.
    back = e.parameters()
    assert sorted(back) == sorted(params)
    for name, a in params.items():
        np.testing.assert_array_equal(back[name], a, err_msg=name)
    return e


def infer(e, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    e.load_batches({"input.0": x, "labels.0": labels})
    e.infer_step(0)
    out: np.ndarray = e.output()["output"]
    return out


def identity(layers: List[dict], f: int) -> tuple:
    """The layers and an identity linear after them: the optimizer wants a
    parameter, and x I + 0 is x exactly."""
    return (layers + [{"name": "id", "op": "linear", "out": f, "bias": True,
                       "shape": list(layers[-1]["shape"])}],
            {"id.weight": np.eye(f, dtype=np.float32), "id.bias": np.zeros(f, np.float32)})


def rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def softmax(s: np.ndarray) -> np.ndarray:
    p = np.exp(s - s.max(-1, keepdims=True))
    out: np.ndarray = p / p.sum(-1, keepdims=True)
    return out


def cross_entropy(logits: np.ndarray, labels: np.ndarray) -> float:
    """The mean over every position, as nnbench's softmax cross entropy."""
    p = softmax(logits.astype(np.float64))
    return float(-np.log(np.take_along_axis(p, labels[..., None], -1)).mean())


def numeric_gradients(loss: Callable[[Params], float], p: Params,
                      h: float = 1e-6) -> Params:
    """Central differences of loss in float64, entry by entry."""
    out: Params = {}
    for name, a in p.items():
        g = np.zeros(a.shape)
        for i in np.ndindex(*a.shape):
            q = {k: v.astype(np.float64) for k, v in p.items()}
            q[name][i] += h
            up = loss(q)
            q[name][i] -= 2 * h
            g[i] = (up - loss(q)) / (2 * h)
        out[name] = g
    return out


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)  # biased
    out: np.ndarray = (x - mean) / np.sqrt(var + eps) * g + b
    return out


def test_layer_norm_normalises_the_last_dim_with_the_biased_variance() -> None:
    rng = np.random.default_rng(1)
    g, b = rand(rng, 4), rand(rng, 4)
    m = model([{"name": "ln", "op": "layer_norm", "eps": 1e-3, "shape": [3, 4]}], [3, 4])
    e = compiled(m, {"ln.weight": g, "ln.bias": b})
    x = rand(rng, 2, 3, 4)
    x[0, 0] = [1, 2, 3, 4]  # by hand: mean 2.5, variance 1.25
    want = layer_norm(x.astype(np.float64), g, b, 1e-3)
    np.testing.assert_allclose(want[0, 0], (np.array([-1.5, -0.5, 0.5, 1.5]) /
                                            math.sqrt(1.25 + 1e-3)) * g + b, rtol=1e-6)
    got = infer(e, x, np.zeros((2, 3), np.int64))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_layer_norm_gradients_are_the_scale_and_shift_ones() -> None:
    rng = np.random.default_rng(6)
    t, f = 3, 4
    p = {"ln.weight": rand(rng, f), "ln.bias": rand(rng, f)}
    m = model([{"name": "ln", "op": "layer_norm", "eps": 1e-5, "shape": [t, f]}], [t, f])
    e = compiled(m, p)
    x = rand(rng, 2, t, f)
    labels = rng.integers(0, f, (2, t)).astype(np.int64)
    e.load_batches({"input.0": x, "labels.0": labels})
    e.train_step(0)
    # Cross entropy's gradient at the output dZ, then dg = sum dZ xhat and
    # db = sum dZ over the rows.
    xhat = layer_norm(x.astype(np.float64), np.ones(f), np.zeros(f), 1e-5)
    dz = (softmax(layer_norm(x.astype(np.float64), p["ln.weight"], p["ln.bias"], 1e-5))
          - np.eye(f)[labels]) / (2 * t)
    grads = e.gradients()
    np.testing.assert_allclose(grads["ln.weight"], (dz * xhat).sum((0, 1)),
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads["ln.bias"], dz.sum((0, 1)), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_is_exact_or_the_tanh_approximation(approximate: bool) -> None:
    layers, p = identity([{"name": "g", "op": "gelu", "approximate": approximate,
                           "shape": [7]}], 7)
    e = compiled(model(layers, [7]), p)
    x = np.array([[-3, -1, -0.5, 0, 0.5, 1, 3]], np.float32)
    xd = x.astype(np.float64)
    if approximate:
        c = math.sqrt(2 / math.pi)
        want = 0.5 * xd * (1 + np.tanh(c * (xd + 0.044715 * xd ** 3)))
        assert want[0, 5] == pytest.approx(0.8411919906, abs=1e-7)
    else:
        want = 0.5 * xd * (1 + np.vectorize(math.erf)(xd / math.sqrt(2)))
        assert want[0, 5] == pytest.approx(0.8413447461, abs=1e-7)
    got = infer(e, x, np.zeros(1, np.int64))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-6)


def test_positions_add_the_first_rows_of_the_table() -> None:
    rng = np.random.default_rng(2)
    table = rand(rng, 6, 4)  # 6 positions learned, 3 used
    m = model([{"name": "wpe", "op": "positions", "vocab": 6, "shape": [3, 4]}], [3, 4])
    e = compiled(m, {"wpe.weight": table})
    x = rand(rng, 2, 3, 4)
    labels = rng.integers(0, 4, (2, 3)).astype(np.int64)
    got = infer(e, x, labels)
    want = x + table[None, :3]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    # The table's gradient: the output's, summed over the batch, in the
    # rows used; the rows past T get none.
    e.train_step(0)
    dz = (softmax(want.astype(np.float64)) - np.eye(4)[labels]) / 6
    g = e.gradients()["wpe.weight"]
    np.testing.assert_allclose(g[:3], dz.sum(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(g[3:], 0)


def test_seq_first_takes_position_zero() -> None:
    layers, p = identity([{"name": "cls", "op": "seq_first", "shape": [4]}], 4)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = infer(compiled(model(layers, [3, 4]), p), x, np.zeros(2, np.int64))
    np.testing.assert_array_equal(got, [[0, 1, 2, 3], [12, 13, 14, 15]])


def attention(x: np.ndarray, p: Params, heads: int, causal: bool) -> np.ndarray:
    """The definition, head by head: q, k, v the row blocks of in_weight,
    head h columns h*D..(h+1)*D, scores masked above the diagonal."""
    n, t, f = x.shape
    d = f // heads
    qkv = x.astype(np.float64) @ p["a.in_weight"].T + p.get("a.in_bias", 0)
    q, k, v = qkv[..., :f], qkv[..., f:2 * f], qkv[..., 2 * f:]
    ctx = np.zeros((n, t, f))
    for h in range(heads):
        c = slice(h * d, (h + 1) * d)
        s = q[..., c] @ k[..., c].transpose(0, 2, 1) / math.sqrt(d)
        if causal:
            s = np.where(np.tril(np.ones((t, t), bool)), s, -np.inf)
        ctx[..., c] = softmax(s) @ v[..., c]
    out: np.ndarray = ctx @ p["a.out_weight"].T + p.get("a.out_bias", 0)
    return out


def attention_params(rng: np.random.Generator, f: int, bias: bool) -> Params:
    p = {"a.in_weight": rand(rng, 3 * f, f), "a.out_weight": rand(rng, f, f)}
    if bias:
        p.update({"a.in_bias": rand(rng, 3 * f), "a.out_bias": rand(rng, f)})
    return p


def attention_model(t: int, f: int, causal: bool, bias: bool) -> dict:
    return model([{"name": "a", "op": "attention", "heads": 2, "causal": causal,
                   "bias": bias, "shape": [t, f]}], [t, f])


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_attention_with_two_heads(causal: bool, bias: bool) -> None:
    rng = np.random.default_rng(3)
    t, f = 5, 6
    p = attention_params(rng, f, bias)
    e = compiled(attention_model(t, f, causal, bias), p)
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
def test_attention_gradients_come_back_in_nnbench_layouts(causal: bool) -> None:
    rng = np.random.default_rng(7)
    t, f = 4, 6
    p = {k: 0.5 * v for k, v in attention_params(rng, f, True).items()}
    e = compiled(attention_model(t, f, causal, True), p)
    x = rand(rng, 2, t, f)
    labels = rng.integers(0, f, (2, t)).astype(np.int64)
    e.load_batches({"input.0": x, "labels.0": labels})
    loss = e.train_step(0)
    assert loss == pytest.approx(cross_entropy(attention(x, p, 2, causal), labels),
                                 rel=1e-5)
    want = numeric_gradients(
        lambda q: cross_entropy(attention(x, q, 2, causal), labels), p)
    got = e.gradients()
    assert sorted(got) == sorted(p)
    for name in p:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-3, atol=1e-5,
                                   err_msg=name)


def tied_model(v: int, f: int, t: int) -> dict:
    return model([{"name": "wte", "op": "embedding", "vocab": v, "out": f, "shape": [t, f]},
                  {"name": "lm_head", "op": "tied_linear", "tied": 0, "shape": [t, v]}],
                 [t], "int64")


def test_tied_linear_maps_by_the_embedding_table_and_adds_its_gradient_there() -> None:
    rng = np.random.default_rng(4)
    v, f, n, t = 7, 3, 2, 4
    table = rand(rng, v, f)
    tokens = rng.integers(0, v, (n, t)).astype(np.int64)
    labels = rng.integers(0, v, (n, t)).astype(np.int64)
    e = compiled(tied_model(v, f, t), {"wte.weight": table})  # no parameter of its own
    h = table[tokens].astype(np.float64)  # [N, T, F]
    logits = h @ table.T.astype(np.float64)  # [N, T, V]
    np.testing.assert_allclose(infer(e, tokens, labels), logits, rtol=RTOL, atol=ATOL)

    loss = e.train_step(0)
    assert loss == pytest.approx(cross_entropy(logits, labels), rel=1e-5)
    # Cross entropy's mean over the N*T positions; the gradient of the
    # table is the output layer's (dZ^T H) plus the embedding's (rows of
    # dZ E scattered to the tokens).
    dz = (softmax(logits) - np.eye(v)[labels]) / (n * t)
    dz2 = dz.reshape(-1, v)
    head = dz2.T @ h.reshape(-1, f)
    want = head.copy()
    np.add.at(want, tokens.reshape(-1), dz2 @ table)
    grads = e.gradients()
    assert list(grads) == ["wte.weight"]
    np.testing.assert_allclose(grads["wte.weight"], want, rtol=1e-4, atol=1e-6)
    # Both uses count: either alone is another gradient.
    assert not np.allclose(grads["wte.weight"], head, rtol=1e-3, atol=1e-4)


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
    # The optimizer steps the shared table once.
    assert len(e.k.net.trainable_variables) == 1


def test_tied_linear_to_a_layer_that_is_no_embedding_is_refused() -> None:
    import keras_model as km

    m = model([{"name": "ln", "op": "layer_norm", "shape": [4, 3]},
               {"name": "head", "op": "tied_linear", "tied": 0, "shape": [4, 3]}], [4, 3])
    with pytest.raises(ValueError, match="not an embedding"):
        km.Builder(m).build()
