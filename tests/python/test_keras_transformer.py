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


# Generation: prefill and decode on the KV cache (keras_model.py's cached
# forward), against the NumPy definition of the whole sequence's forward.

V, F, HEADS, P = 23, 8, 2, 16  # vocabulary, width, heads, learned positions


def decoder(t: int) -> dict:
    """A GPT-2 block at test size: token and position embeddings, layer
    norm, causal attention, residual, layer norm, MLP with the tanh GELU,
    residual, the final layer norm and the output tied to the tokens."""
    s, wide = [t, F], [t, 2 * F]
    return model([{"name": "wte", "op": "embedding", "vocab": V, "out": F, "shape": s},
                  {"name": "wpe", "op": "positions", "vocab": P, "shape": s},
                  {"name": "ln_1", "op": "layer_norm", "eps": 1e-5, "shape": s},
                  {"name": "a", "op": "attention", "heads": HEADS, "causal": True,
                   "bias": True, "shape": s},
                  {"name": "add_1", "op": "add", "inputs": [1, 3], "shape": s},
                  {"name": "ln_2", "op": "layer_norm", "eps": 1e-5, "shape": s},
                  {"name": "fc", "op": "linear", "out": 2 * F, "shape": wide},
                  {"name": "gelu", "op": "gelu", "approximate": True, "shape": wide},
                  {"name": "proj", "op": "linear", "out": F, "shape": s},
                  {"name": "add_2", "op": "add", "inputs": [4, 8], "shape": s},
                  {"name": "ln_f", "op": "layer_norm", "eps": 1e-5, "shape": s},
                  {"name": "head", "op": "tied_linear", "tied": 0, "shape": [t, V]}],
                 [t], "int64")


def decoder_params(rng: np.random.Generator) -> Params:
    """Scaled so that the greedy tokens vary with the position and the
    sequence (a random model's greedy choice tends to repeat one token):
    positions twice the tokens' scale, the MLP's weights small, the layer
    norms near the identity."""
    p = attention_params(rng, F, True)
    p.update({"wte.weight": rand(rng, V, F), "wpe.weight": 2 * rand(rng, P, F),
              "fc.weight": 0.3 * rand(rng, 2 * F, F), "fc.bias": 0.3 * rand(rng, 2 * F),
              "proj.weight": 0.3 * rand(rng, F, 2 * F), "proj.bias": 0.3 * rand(rng, F)})
    for ln in ("ln_1", "ln_2", "ln_f"):
        p.update({f"{ln}.weight": 1 + 0.1 * rand(rng, F),
                  f"{ln}.bias": 0.1 * rand(rng, F)})
    return p


def decoder_logits(tokens: np.ndarray, p: Params) -> np.ndarray:
    """decoder()'s forward over whole sequences [N, T], in NumPy: [N, T, V]."""
    t = tokens.shape[1]
    h = p["wte.weight"][tokens].astype(np.float64) + p["wpe.weight"][:t]
    h = h + attention(layer_norm(h, p["ln_1.weight"], p["ln_1.bias"], 1e-5), p,
                      HEADS, True)
    up = layer_norm(h, p["ln_2.weight"], p["ln_2.bias"], 1e-5) @ p["fc.weight"].T
    h = h + gelu(up + p["fc.bias"], True) @ p["proj.weight"].T + p["proj.bias"]
    out: np.ndarray = (layer_norm(h, p["ln_f.weight"], p["ln_f.bias"], 1e-5) @
                       p["wte.weight"].T.astype(np.float64))
    return out


def generate(e, rows: list, capacity: int, steps: int) -> list:
    """Each row's tokens: the prefill's, then `steps` decodes'."""
    got = [e.prefill(rows, capacity)]
    for _ in range(steps):
        got.append(e.decode(got[-1]))
    return [list(r) for r in zip(*got)]


def greedy_numpy(rows: list, p: Params, count: int) -> list:
    """Each row's next `count` tokens, each the argmax of the last position
    of a forward over the whole sequence so far (no cache)."""
    seqs = np.array(rows, np.int64)
    for _ in range(count):
        nxt = decoder_logits(seqs, p)[:, -1].argmax(-1)
        seqs = np.concatenate([seqs, nxt[:, None]], 1)
    return seqs[:, len(rows[0]):].tolist()


ROWS = [[3, 9, 1, 14], [20, 2, 2, 7]]


def test_generation_with_the_cache_gives_the_whole_sequences_argmax() -> None:
    """prefill then decode: every step's token is the NumPy definition's
    for the whole sequence so far; the rows of a batch are decoded apart
    (the second prompt alone gives its tokens), and a second generation
    on the kept cache starts over."""
    p = decoder_params(np.random.default_rng(10))
    e = compiled(decoder(12), p)
    want = greedy_numpy(ROWS, p, 8)
    # Tokens that vary: the check depends on positions and the cache.
    assert all(len(set(w)) > 2 for w in want)
    assert generate(e, ROWS, 12, 7) == want
    assert generate(e, ROWS, 12, 7) == want  # the same cache, from 0 again
    assert generate(e, ROWS[1:], 12, 7) == want[1:]


def test_generation_reads_the_trained_weights() -> None:
    """After a training step the engine's state holds other weights than
    the Keras variables were given: generation uses the state's."""
    p = decoder_params(np.random.default_rng(12))
    e = compiled(decoder(4), p, lr=0.5)
    tokens = np.array(ROWS, np.int64)
    e.load_batches({"input.0": tokens, "labels.0": np.roll(tokens, -1, 1)})
    e.train_step(0)
    trained = e.parameters()
    want = greedy_numpy(ROWS, trained, 4)
    assert want != greedy_numpy(ROWS, p, 4)
    assert generate(e, ROWS, 8, 3) == want


def test_the_cache_refuses_a_token_past_its_capacity() -> None:
    e = compiled(decoder(6), decoder_params(np.random.default_rng(13)))
    got = generate(e, ROWS, 6, 2)  # 4 + 2 of 6 positions held
    with pytest.raises(ValueError, match="exceed"):
        e.decode([r[-1] for r in got])
    with pytest.raises(ValueError, match="exceed"):
        e.prefill([list(range(7))] * 2, 6)  # a prompt longer than the cache
    with pytest.raises(ValueError, match="positions"):
        e.prefill(ROWS, P + 1)  # more positions than the table has
    assert generate(e, ROWS, 6, 2) == got  # refused, the cache still serves


def options(precision: str, generation: bool) -> dict:
    return {"precision": precision, "generation": generation, "device": "cpu",
            "threads": 0, "seed": 1, "optimizer": "sgd", "learning_rate": 0.0,
            "momentum": 0.0, "nesterov": False, "weight_decay": 0.0, "beta1": 0.9,
            "beta2": 0.999, "alpha": 0.99, "rho": 0.9, "eps": 1e-8}


def test_generation_gives_the_last_positions_logits() -> None:
    """The step's logits, left on the device, read on request: the NumPy
    definition's at the last position, after the prefill and a decode."""
    p = decoder_params(np.random.default_rng(14))
    e = compiled(decoder(12), p)
    assert e.last_logits() is None  # no generation yet
    first = e.prefill(ROWS, 12)
    rows = np.array(ROWS)
    np.testing.assert_allclose(e.last_logits(), decoder_logits(rows, p)[:, -1],
                               rtol=1e-4, atol=1e-4)
    e.decode(first)
    seq = np.concatenate([rows, np.array(first)[:, None]], 1)
    np.testing.assert_allclose(e.last_logits(), decoder_logits(seq, p)[:, -1],
                               rtol=1e-4, atol=1e-4)


def test_generation_at_bf16_runs_bf16_within_its_tolerance() -> None:
    """Weights, activations and cache bf16 (KerasHub's dtype="bfloat16"):
    the logits move by bf16's rounding (8 significant bits), more than
    fp32's and within bf16's 5e-2; training stays fp32 only."""
    p = decoder_params(np.random.default_rng(15))
    e = ENGINE.Engine()
    e.compile(decoder(12), p, options("bf16", True), {"train_batch": 0, "infer_batches": []})
    eff = e.effective()
    assert eff["precision"] == "bf16" and eff["weights"].startswith("bf16")
    e.prefill(ROWS, 12)
    assert {str(c.dtype) for c in e.generation.cache} == {"bfloat16"}
    got = np.array(e.last_logits())
    want = decoder_logits(np.array(ROWS), p)[:, -1]
    error = np.abs(got - want).max() / np.abs(want).max()
    assert 1e-4 < error < 5e-2
    with pytest.raises(NotImplementedError, match="inference only"):
        ENGINE.Engine().compile(decoder(4), p, options("bf16", False),
                                {"train_batch": 2, "infer_batches": [1]})


def test_generation_at_int8_quantizes_every_dense_layer_within_its_tolerance() -> None:
    """int8 as Keras makes it (model.quantize("int8")): the attention's
    four projections, the MLP's two Dense layers and the tied embedding
    quantized, nothing else; the logits after a prefill and a decode move
    by the rounding of weights and inputs, more than fp32's and within
    int8 generation's 5e-2 (src/verify/tolerance); the cache stays
    fp32; training at int8 is refused."""
    p = decoder_params(np.random.default_rng(16))
    e = ENGINE.Engine()
    e.compile(decoder(12), p, options("int8", True), {"train_batch": 0, "infer_batches": []})
    eff = e.effective()
    assert eff["precision"] == "int8" and eff["weights"].startswith("int8")
    modes = {type(l).__name__: getattr(l, "quantization_mode", None)
             for l in e.k.net._flatten_layers() if getattr(l, "quantization_mode", None)}
    assert modes == {"EinsumDense": "int8", "Dense": "int8",
                     "ReversibleEmbedding": "int8"}
    quantized = [l for l in e.k.net._flatten_layers()
                 if getattr(l, "quantization_mode", None) == "int8"]
    assert len(quantized) == 4 + 2 + 1
    assert e.k.quantized == {"EinsumDense": 4, "Dense": 2, "ReversibleEmbedding": 1}
    first = e.prefill(ROWS, 12)
    assert {str(c.dtype) for c in e.generation.cache} == {"float32"}
    rows = np.array(ROWS)
    seq = np.concatenate([rows, np.array(first)[:, None]], 1)
    for i, want in enumerate((decoder_logits(rows, p)[:, -1],
                              decoder_logits(seq, p)[:, -1])):
        if i:
            e.decode(first)
        error = np.abs(np.array(e.last_logits()) - want).max() / np.abs(want).max()
        assert 1e-4 < error < 5e-2
    with pytest.raises(NotImplementedError, match="inference only"):
        ENGINE.Engine().compile(decoder(4), p, options("int8", False),
                                {"train_batch": 2, "infer_batches": [1]})


def test_inference_steps_at_int8_quantize_the_dense_layers_only() -> None:
    """Inference steps at int8 (Keras's quantize("int8") after the weights
    load, as for generation): every position's logits within 5e-2 of the
    NumPy definition's largest and more than 1e-4 off it (a step left at
    fp32 would be within 1e-5); the record counts the quantized layers and
    says no calibration ran. A convolution or an LSTM, which Keras's
    quantization leaves fp32, is refused at int8, in hello and at compile."""
    p = decoder_params(np.random.default_rng(17))
    e = ENGINE.Engine()
    hello = e.hello()
    assert "int8" in hello["precisions"] and "int8" in hello["inference_only_precisions"]
    assert {(g["op"], g.get("precision")) for g in hello["unsupported"]} >= \
        {("conv2d", "int8"), ("lstm", "int8")}
    e.compile(decoder(4), p, options("int8", False), {"train_batch": 0, "infer_batches": [2]})
    eff = e.effective()
    assert "1 Dense" not in eff["weights"] and "2 Dense, 4 EinsumDense" in eff["weights"]
    assert eff["calibration"].startswith("none") and "kv_cache" not in eff
    rows = np.array(ROWS)
    got = infer(e, rows, np.zeros((2, 4), np.int64))
    want = decoder_logits(rows, p)
    error = np.abs(got - want).max() / np.abs(want).max()
    assert 1e-4 < error < 5e-2
    rnn = model([{"name": "emb", "op": "embedding", "vocab": V, "out": F, "shape": [4, F]},
                 {"name": "r", "op": "lstm", "out": 3, "sequences": False, "shape": [3]},
                 {"name": "head", "op": "linear", "out": 2, "shape": [2]}], [4], "int64")
    with pytest.raises(NotImplementedError, match="layer 'r' .lstm.: Keras's"):
        ENGINE.Engine().compile(rnn, {}, options("int8", False),
                                {"train_batch": 0, "infer_batches": [1]})


def test_inference_steps_at_bf16_run_the_bfloat16_policy() -> None:
    """Inference steps at bf16 build the model under Keras's 'bfloat16'
    dtype policy (as for generation): every position's logits within bf16's
    5e-2 of the NumPy definition's largest and more than 1e-4 off it; the
    hello lists bf16 as inference only where the framework's bf16 products
    run."""
    hello = ENGINE.Engine().hello()
    if ENGINE.bf16_problem():
        assert "bf16" not in hello["precisions"]
        return
    assert "bf16" in hello["precisions"] and "bf16" in hello["inference_only_precisions"]
    p = decoder_params(np.random.default_rng(18))
    e = ENGINE.Engine()
    e.compile(decoder(4), p, options("bf16", False), {"train_batch": 0, "infer_batches": [2]})
    assert e.effective()["weights"].startswith("bf16") and "kv_cache" not in e.effective()
    assert {str(v.dtype) for v in e.k.net.weights} == {"bfloat16"}
    rows = np.array(ROWS)
    got = infer(e, rows, np.zeros((2, 4), np.int64))
    want = decoder_logits(rows, p)
    error = np.abs(got - want).max() / np.abs(want).max()
    assert 1e-4 < error < 5e-2
