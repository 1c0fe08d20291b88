"""The transformer ops' definitions in plain NumPy, in float64 (the
oracle's: src/engines/reference/ops/transformer.h), and the small model
descriptions the engines' tests build: what test_pytorch_transformer.py,
test_mxnet_transformer.py, test_keras_transformer.py and
test_onnx_transformer.py check each engine against. Only numpy and the
standard library: the mxnet environment (numpy below 1.24) and Debian's
python3 import it too."""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Tuple

import numpy as np

Params = Dict[str, np.ndarray]


# Model descriptions.

def model(layers: List[dict], shape: List[int], dtype: str = "float32",
          name: str = "t") -> dict:
    return {"name": name, "input": {"shape": shape, "dtype": dtype},
            "layers": layers, "loss": "softmax_cross_entropy"}


def identity(layers: List[dict], f: int) -> Tuple[List[dict], Params]:
    """The layers and an identity linear after them, with its parameters:
    the optimizer (MXNet's Trainer) wants a parameter, and x I + 0 is x
    exactly."""
    return (layers + [{"name": "id", "op": "linear", "out": f, "bias": True,
                       "shape": list(layers[-1]["shape"])}],
            {"id.weight": np.eye(f, dtype=np.float32), "id.bias": np.zeros(f, np.float32)})


def tied_model(v: int, f: int, t: int) -> dict:
    """Token ids -> an embedding of v rows of f -> the output tied to its
    table: logits over v."""
    return model([{"name": "wte", "op": "embedding", "vocab": v, "out": f, "shape": [t, f]},
                  {"name": "lm_head", "op": "tied_linear", "tied": 0, "shape": [t, v]}],
                 [t], "int64")


# Parameters.

def rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def attention_params(rng: np.random.Generator, f: int, bias: bool) -> Params:
    """Attention layer a's: in_weight [3F, F], out_weight [F, F] and, with
    bias, in_bias [3F] and out_bias [F]."""
    p = {"a.in_weight": rand(rng, 3 * f, f), "a.out_weight": rand(rng, f, f)}
    if bias:
        p.update({"a.in_bias": rand(rng, 3 * f), "a.out_bias": rand(rng, f)})
    return p


# The definitions.

def softmax(s: np.ndarray) -> np.ndarray:
    p = np.exp(s - s.max(-1, keepdims=True))
    out: np.ndarray = p / p.sum(-1, keepdims=True)
    return out


def cross_entropy(logits: np.ndarray, labels: np.ndarray) -> float:
    """Softmax cross entropy over the last axis, the mean over every
    position (nnbench's loss), in float64."""
    p = softmax(logits.astype(np.float64))
    return float(-np.log(np.take_along_axis(p, labels[..., None], -1)).mean())


def cross_entropy_gradient(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """cross_entropy's gradient in the logits: softmax less the labels'
    one-hot rows, over the number of positions."""
    z = logits.astype(np.float64)
    out: np.ndarray = (softmax(z) - np.eye(z.shape[-1])[labels]) / labels.size
    return out


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """Over the last axis, with the biased variance."""
    x = x.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)  # biased
    out: np.ndarray = (x - mean) / np.sqrt(var + eps) * g + b
    return out


def gelu(x: np.ndarray, approximate: bool) -> np.ndarray:
    """x Phi(x), or GPT-2's tanh approximation of it."""
    x = x.astype(np.float64)
    if approximate:
        c = math.sqrt(2 / math.pi)
        out: np.ndarray = 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x ** 3)))
    else:
        out = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    return out


def attention(x: np.ndarray, p: Params, heads: int, causal: bool,
              name: str = "a") -> np.ndarray:
    """Layer name's, head by head: q, k, v the row blocks of in_weight,
    head h columns h*D..(h+1)*D, scores masked above the diagonal when
    causal; the biases where p holds them."""
    n, t, f = x.shape
    d = f // heads
    qkv = x.astype(np.float64) @ p[f"{name}.in_weight"].T + p.get(f"{name}.in_bias", 0)
    q, k, v = qkv[..., :f], qkv[..., f:2 * f], qkv[..., 2 * f:]
    ctx = np.zeros((n, t, f))
    for h in range(heads):
        c = slice(h * d, (h + 1) * d)
        s = q[..., c] @ k[..., c].transpose(0, 2, 1) / math.sqrt(d)
        if causal:
            s = np.where(np.tril(np.ones((t, t), bool)), s, -np.inf)
        ctx[..., c] = softmax(s) @ v[..., c]
    out: np.ndarray = ctx @ p[f"{name}.out_weight"].T + p.get(f"{name}.out_bias", 0)
    return out


# Gradients by central differences.

def numeric_gradient(loss: Callable[[Params], float], p: Params, name: str,
                     h: float = 1e-6) -> np.ndarray:
    """Central differences of a float64 loss in each element of p[name]."""
    base = {k: v.astype(np.float64) for k, v in p.items()}
    g = np.zeros(base[name].shape)
    for i in np.ndindex(g.shape):
        up = {**base, name: base[name].copy()}
        down = {**base, name: base[name].copy()}
        up[name][i] += h
        down[name][i] -= h
        g[i] = (loss(up) - loss(down)) / (2 * h)
    return g


def numeric_gradients(loss: Callable[[Params], float], p: Params,
                      h: float = 1e-6) -> Params:
    """numeric_gradient of each of p's entries."""
    return {name: numeric_gradient(loss, p, name, h) for name in p}
