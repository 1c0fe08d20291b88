"""The Keras engines' transformer ops (frameworks/common/keras_model.py):
layer_norm, gelu, positions, attention, tied_linear and seq_first, each
run by the jax engine as the worker drives it (compile, load_batches, a
step, output, parameters, gradients) and compared with the op's
definition written in NumPy (transformer_numpy.py, the oracle's:
src/engines/reference/ops/transformer.h). The tensorflow engine builds the
same Keras graph from the same file; `nnbench verify` checks it against the
C++ reference. Attention's parameters are split over several Keras
variables: their layouts are checked both ways, the gradients too (against
central differences of the NumPy definition)."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

import worker
from conftest import ROOT
from transformer_numpy import (Params, attention, attention_params, cross_entropy,
                               cross_entropy_gradient, gelu, identity, layer_norm, model,
                               numeric_gradients, rand, tied_model)

ENGINE = worker.load_module(os.path.join(ROOT, "frameworks", "jax", "engine.py"))
RTOL, ATOL = 1e-5, 1e-5


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


def test_layer_norm_normalises_the_last_dim_with_the_biased_variance() -> None:
    rng = np.random.default_rng(1)
    g, b = rand(rng, 4), rand(rng, 4)
    m = model([{"name": "ln", "op": "layer_norm", "eps": 1e-3, "shape": [3, 4]}], [3, 4])
    e = compiled(m, {"ln.weight": g, "ln.bias": b})
    x = rand(rng, 2, 3, 4)
    x[0, 0] = [1, 2, 3, 4]  # by hand: mean 2.5, variance 1.25
    want = layer_norm(x, g, b, 1e-3)
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
    xhat = layer_norm(x, np.ones(f), np.zeros(f), 1e-5)
    dz = cross_entropy_gradient(layer_norm(x, p["ln.weight"], p["ln.bias"], 1e-5), labels)
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
    want = gelu(x, approximate)
    assert want[0, 5] == pytest.approx(0.8411919906 if approximate else 0.8413447461,
                                       abs=1e-7)
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
    dz = cross_entropy_gradient(want, labels)
    g = e.gradients()["wpe.weight"]
    np.testing.assert_allclose(g[:3], dz.sum(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(g[3:], 0)


def test_seq_first_takes_position_zero() -> None:
    layers, p = identity([{"name": "cls", "op": "seq_first", "shape": [4]}], 4)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = infer(compiled(model(layers, [3, 4]), p), x, np.zeros(2, np.int64))
    np.testing.assert_array_equal(got, [[0, 1, 2, 3], [12, 13, 14, 15]])


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
    dz2 = cross_entropy_gradient(logits, labels).reshape(-1, v)
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
