"""The pytorch engine's transformer ops (frameworks/pytorch/engine.py):
layer_norm, gelu, positions, attention, tied_linear and seq_first, each
run by the engine as the worker drives it (compile, load_batches, a step,
output, parameters, gradients) and compared with the op's definition
written in NumPy (transformer_numpy.py, the oracle's:
src/engines/reference/ops/transformer.h).
Needs torch: skipped in an environment without it (Debian's python3-torch
or the pytorch environment runs it)."""
from __future__ import annotations

import math
import os
from typing import List

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import worker
from conftest import ROOT
from transformer_numpy import (Params, attention, attention_params, cross_entropy,
                               cross_entropy_gradient, gelu, identity, layer_norm, model,
                               rand, tied_model)

ENGINE = worker.load_module(os.path.join(ROOT, "frameworks", "pytorch", "engine.py"))
RTOL, ATOL = 1e-5, 1e-5


def compiled(m: dict, params: Params, lr: float = 0.0, precision: str = "fp32",
             generation: bool = False, train_batch: int = 0):
    e = ENGINE.Engine()
    e.compile(m, params, {"precision": precision, "generation": generation,
                          "device": "cpu", "threads": 1, "seed": 1,
                          "optimizer": "sgd", "learning_rate": lr, "momentum": 0.0,
                          "nesterov": False, "weight_decay": 0.0, "beta1": 0.9,
                          "beta2": 0.999, "alpha": 0.99, "rho": 0.9, "eps": 1e-8},
              {"train_batch": train_batch, "infer_batches": [1]})
    return e


def infer(e, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    e.load_batches({"input.0": x, "labels.0": labels})
    e.begin("infer")
    e.infer_step(0)
    return e.output()["output"]


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
    assert sorted(e.parameters()) == ["wpe.weight"]
    x = rand(rng, 2, 3, 4)
    got = infer(e, x, np.zeros((2, 3), np.int64))
    np.testing.assert_allclose(got, x + table[None, :3], rtol=RTOL, atol=ATOL)


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

    e.begin("train")
    loss = e.train_step(0)
    assert loss == pytest.approx(cross_entropy(logits, labels), rel=1e-5)
    # Cross entropy's mean over the N*T positions; the gradient of the
    # table is the output layer's (dZ^T H) plus the embedding's (rows of
    # dZ E scattered to the tokens).
    dz2 = cross_entropy_gradient(logits, labels).reshape(-1, v)
    want = dz2.T @ h.reshape(-1, f)
    np.add.at(want, tokens.reshape(-1), dz2 @ table)
    grads = e.gradients()
    assert list(grads) == ["wte.weight"]
    np.testing.assert_allclose(grads["wte.weight"], want, rtol=1e-4, atol=1e-6)


def test_tied_linear_trains_the_one_table() -> None:
    rng = np.random.default_rng(5)
    table = rand(rng, 5, 3)
    tokens = rng.integers(0, 5, (2, 4)).astype(np.int64)
    e = compiled(tied_model(5, 3, 4), {"wte.weight": table}, lr=0.5)
    e.load_batches({"input.0": tokens, "labels.0": tokens})
    e.begin("train")
    e.train_step(0)
    g = e.gradients()["wte.weight"]
    np.testing.assert_allclose(e.parameters()["wte.weight"], table - 0.5 * g,
                               rtol=1e-5, atol=1e-6)
    trainable = [q for q in e.net.parameters() if q.requires_grad]
    assert len(trainable) == 1  # the optimizer steps the shared table once


def test_generation_with_the_cache_gives_the_whole_sequences_logits() -> None:
    """prefill then decode on the KV cache: each step's next token is the
    argmax of the last row of a full forward over the whole sequence so
    far, with the tables scaled as GPT-2's (N(0, 0.02)) so that the
    choice depends on every position."""
    e = compiled(*decoder())
    rows = [[3, 9, 1, 14], [20, 2, 2, 7]]
    got = [e.prefill(rows, capacity=9)]
    for _ in range(5):
        got.append(e.decode(got[-1]))
    seqs = [list(r) for r in rows]
    for step in got:
        with torch.no_grad():
            logits = e.net(torch.tensor(seqs, dtype=torch.int64))
        want = logits[:, -1].argmax(-1).tolist()
        assert step == want
        for s, tok in zip(seqs, step):
            s.append(tok)
    with pytest.raises(ValueError, match="exceed"):
        e.decode(got[-1])  # 9 of 9 positions held: a tenth is refused


def decoder() -> tuple:
    """A one-block decoder, its tables scaled as GPT-2's (N(0, 0.02)) so
    that the next token depends on every position: (model, params)."""
    rng = np.random.default_rng(3)
    v, f, heads, t = 23, 8, 2, 12
    layers = [{"name": "wte", "op": "embedding", "vocab": v, "out": f, "shape": [t, f]},
              {"name": "wpe", "op": "positions", "vocab": t, "shape": [t, f]},
              {"name": "attn", "op": "attention", "heads": heads, "causal": True,
               "shape": [t, f]},
              {"name": "ln", "op": "layer_norm", "eps": 1e-5, "shape": [t, f]},
              {"name": "head", "op": "tied_linear", "tied": 0, "shape": [t, v]}]
    params = {"wte.weight": (0.02 * rng.standard_normal((v, f))).astype(np.float32),
              "wpe.weight": (0.02 * rng.standard_normal((t, f))).astype(np.float32),
              "attn.in_weight": rng.standard_normal((3 * f, f)).astype(np.float32),
              "attn.in_bias": rng.standard_normal(3 * f).astype(np.float32),
              "attn.out_weight": rng.standard_normal((f, f)).astype(np.float32),
              "attn.out_bias": rng.standard_normal(f).astype(np.float32),
              "ln.weight": np.ones(f, np.float32), "ln.bias": np.zeros(f, np.float32)}
    return model(layers, [t], "int64"), params


def worst_against_fp32(fp32, other) -> float:
    """The largest relative error of `other`'s logits against fp32's over
    a prefill and four decodes, both fed fp32's tokens (teacher-forced)."""
    rows = [[3, 9, 1, 14], [20, 2, 2, 7]]
    tokens = fp32.prefill(rows, capacity=9)
    other.prefill(rows, capacity=9)
    worst = 0.0
    for _ in range(5):
        want, got = np.array(fp32.last_logits()), np.array(other.last_logits())
        worst = max(worst, float(np.abs(got - want).max() / np.abs(want).max()))
        other.decode(tokens)
        tokens = fp32.decode(tokens)
    return worst


def test_generation_at_bf16_runs_bf16_within_its_tolerance() -> None:
    """A compile for generation at bf16 converts the module: each step's
    logits are those of fp32 (the same prompts and tokens fed) to bf16's
    output tolerance, 5e-2 of their largest (src/verify/tolerance), and
    not equal to them (more than 1e-4 off: a step that ran fp32 would
    be); training at bf16 is refused. Where PyTorch's bf16 products fail
    (an AVX2 cap), the hello names the gap and the compile refuses."""
    m, params = decoder()
    hello = ENGINE.Engine().hello()
    if ENGINE.bf16_problem():  # e.g. under an ONEDNN_MAX_CPU_ISA=AVX2 cap
        assert "bf16" not in hello["generation_precisions"]
        assert "bf16 matrix products fail" in hello["generation_gaps"]["bf16"]
        with pytest.raises(NotImplementedError, match="bf16: PyTorch's bf16"):
            compiled(m, params, precision="bf16", generation=True)
        return
    assert "bf16" in hello["generation_precisions"]
    fp32 = compiled(m, params, generation=True)
    bf16 = compiled(m, params, precision="bf16", generation=True)
    assert bf16.effective()["precision"] == "bf16"
    assert all(p.dtype == torch.bfloat16 for p in bf16.net.parameters())
    assert 1e-4 < worst_against_fp32(fp32, bf16) < 5e-2
    with pytest.raises(NotImplementedError, match="inference only"):
        compiled(m, params, precision="bf16", train_batch=2)


def test_generation_at_int8_quantizes_every_linear_within_its_tolerance() -> None:
    """A compile for generation at int8 replaces every nn.Linear by a
    dynamically quantized one (PyTorch's own int8 for transformers), the
    attention's projections and the untied head included (three in this
    decoder); each step's logits are fp32's (the same tokens fed) to
    int8's generation tolerance, 5e-2 of their largest
    (src/verify/tolerance), and not equal to them (more than 1e-4 off: a
    step that ran fp32 would be). Training at int8 and int8 on a GPU are
    refused."""
    m, params = decoder()
    hello = ENGINE.Engine().hello()
    if ENGINE.int8_problem():
        assert "int8" not in hello["generation_precisions"]
        with pytest.raises(NotImplementedError, match="int8: PyTorch"):
            compiled(m, params, precision="int8", generation=True)
        return
    assert "int8" in hello["generation_precisions"]
    fp32 = compiled(m, params, generation=True)
    int8 = compiled(m, params, precision="int8", generation=True)
    quantized = [mod for mod in int8.net.modules()
                 if type(mod).__name__ == "Linear" and "quantized" in type(mod).__module__]
    assert len(quantized) == 3
    assert not any(type(mod) is torch.nn.Linear for mod in int8.net.modules())
    assert "quantize_dynamic" in int8.effective()["weights"]
    assert 1e-4 < worst_against_fp32(fp32, int8) < 5e-2
    with pytest.raises(NotImplementedError, match="inference only"):
        compiled(m, params, precision="int8", train_batch=2)
    e = ENGINE.Engine()
    with pytest.raises(NotImplementedError, match="CPU only"):
        e.compile(m, params, {"precision": "int8", "generation": True,
                              "device": "cuda:0", "threads": 1},
                  {"train_batch": 0, "infer_batches": [1]})


def recurrent() -> tuple:
    """Token ids -> embedding -> a bidirectional LSTM with both biases ->
    mean over the sequence -> linear: the layers PyTorch's dynamic
    quantization takes (the LSTM and the linear) beside one it leaves."""
    rng = np.random.default_rng(5)
    v, f, h, t = 13, 8, 6, 5
    layers: List[dict] = [{"name": "emb", "op": "embedding", "vocab": v, "out": f, "shape": [t, f]},
              {"name": "rnn", "op": "lstm", "out": h, "bidirectional": True,
               "lstm_biases": 2, "shape": [t, 2 * h]},
              {"name": "mean", "op": "seq_mean", "shape": [2 * h]},
              {"name": "head", "op": "linear", "out": 4, "shape": [4]}]
    params = {"emb.weight": rand(rng, v, f), "head.weight": rand(rng, 4, 2 * h),
              "head.bias": rand(rng, 4)}
    for d in ("", "_reverse"):
        params[f"rnn.l0{d}.w_ih"] = rand(rng, 4 * h, f)
        params[f"rnn.l0{d}.w_hh"] = rand(rng, 4 * h, h)
        params[f"rnn.l0{d}.b_ih"] = rand(rng, 4 * h)
        params[f"rnn.l0{d}.b_hh"] = rand(rng, 4 * h)
    ids = rng.integers(0, v, (3, t)).astype(np.int64)
    return model(layers, [t], "int64"), params, ids


def test_inference_steps_at_int8_quantize_linears_and_lstms_only() -> None:
    """Inference steps at int8 run PyTorch's dynamic quantization (its
    LSTM and BERT tutorials' int8): the LSTM and the linear replaced, the
    embedding left fp32; the output within int8's tolerance of fp32's
    (the conformance suite's 3.5e-1 of the largest, src/verify) and more
    than 1e-4 off it (a step left at fp32 would not be). A convolution,
    which dynamic quantization leaves fp32, is refused at int8 by name,
    in hello and at compile; training at int8 is refused."""
    m, params, ids = recurrent()
    hello = ENGINE.Engine().hello()
    if ENGINE.int8_problem():
        assert "int8" not in hello["precisions"]
        return
    assert "int8" in hello["precisions"] and "int8" in hello["inference_only_precisions"]
    assert {"op": "conv2d", "precision": "int8"}.items() <= hello["unsupported"][0].items()
    labels = np.zeros(3, np.int64)
    fp32 = infer(compiled(m, params), ids, labels)
    e = compiled(m, params, precision="int8")
    assert e.quantized == {"Linear": 1, "LSTM": 1}
    kinds = {type(mod).__module__ + "." + type(mod).__name__ for mod in e.net.modules()}
    assert "torch.nn.modules.sparse.Embedding" in kinds
    assert not kinds & {"torch.nn.modules.linear.Linear", "torch.nn.modules.rnn.LSTM"}
    eff = e.effective()
    assert eff["precision"] == "int8" and "1 Linear, 1 LSTM" in eff["weights"]
    assert eff["calibration"].startswith("none")
    worst = np.abs(infer(e, ids, labels) - fp32).max() / np.abs(fp32).max()
    assert 1e-4 < worst < 3.5e-1
    with pytest.raises(NotImplementedError, match="inference only"):
        compiled(m, params, precision="int8", train_batch=3)
    conv = model([{"name": "c", "op": "conv2d", "out": 2, "kernel": [3, 3],
                   "shape": [2, 2, 2]},
                  {"name": "f", "op": "flatten", "shape": [8]},
                  {"name": "head", "op": "linear", "out": 3, "shape": [3]}], [1, 4, 4])
    with pytest.raises(NotImplementedError, match="layer 'c' .conv2d.: PyTorch's dynamic"):
        compiled(conv, {}, precision="int8")


def test_inference_steps_at_bf16_convert_the_module() -> None:
    """Inference steps at bf16 run the module converted
    (model.to(torch.bfloat16)), float inputs cast: the LSTM model's output
    within bf16's 5e-2 of fp32's largest (src/verify) and more than 1e-4
    off it; the hello lists bf16 as inference only; a layer whose bf16
    kernel this PyTorch lacks is refused by name at compile."""
    m, params, ids = recurrent()
    hello = ENGINE.Engine().hello()
    if ENGINE.bf16_problem():
        assert "bf16" not in hello["precisions"]
        return
    assert "bf16" in hello["precisions"] and "bf16" in hello["inference_only_precisions"]
    labels = np.zeros(3, np.int64)
    fp32 = infer(compiled(m, params), ids, labels)
    e = compiled(m, params, precision="bf16")
    assert all(p.dtype == torch.bfloat16 for p in e.net.parameters())
    assert e.effective()["weights"].startswith("bf16")
    worst = np.abs(infer(e, ids, labels) - fp32).max() / np.abs(fp32).max()
    assert 1e-4 < worst < 5e-2
    for op, why in ENGINE.bf16_gaps().items():
        assert {"op": op, "precision": "bf16", "why": why} in hello["unsupported"]
        layer = {"name": "x", "op": op, "size": 3, "shape": [2, 4, 4]}
        with pytest.raises(NotImplementedError, match=f"bf16: layer 'x' .{op}."):
            compiled(model([layer], [2, 4, 4]), {}, precision="bf16")
