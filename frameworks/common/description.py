"""nnbench's model description (the JSON of `nnbench models --export`) as
every engine reads it: a layer's inputs, its attributes with their
defaults, and the per-sample output shapes (NCHW) that nnbench sends with
each layer ("shape", from model/analysis.cpp). The pooling arithmetic here
is for the windows an engine must adjust (PyTorch's ceil mode)."""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np


def layer_inputs(model: dict, i: int) -> List[int]:
    ins = model["layers"][i].get("inputs") or []
    return list(ins) if ins else [i - 1]


def attr(layer: dict, key: str, default):
    return layer.get(key, default)


def refuse_precision(precision: str, shapes: dict, engine: str, int8: str,
                     offered: Tuple[str, ...] = ("fp32", "bf16", "int8")) -> None:
    """What a worker that trains at fp32 and infers at the other precisions
    it offers refuses: another precision, and training below fp32 (`int8`
    says how it quantizes, for the message)."""
    if precision not in offered:
        raise NotImplementedError(f"precision {precision} (the {engine} engine "
                                  f"runs {', '.join(offered)})")
    if precision != "fp32" and shapes.get("train_batch", 0) > 0:
        raise NotImplementedError(
            f"precision {precision} on the {engine} engine is inference only "
            + (f"({int8}; nothing trains in int8)" if precision == "int8"
               else "(its training runs fp32)"))


def first_gap(model: dict, gaps: Dict[str, str]) -> str:
    """The first layer whose op `gaps` names, with why ("" when none)."""
    return next((f"layer '{l['name']}' ({l['op']}): {gaps[l['op']]}"
                 for l in model["layers"] if l["op"] in gaps), "")


def pool_dim(n: int, k: int, s: int, p: int, ceil: bool) -> int:
    """PyTorch's output size: a ceil-mode window that would start in the
    right padding is dropped."""
    span = n + 2 * p - k
    if not ceil:
        return span // s + 1
    o = -(-span // s) + 1
    return o - 1 if (o - 1) * s >= n + p else o


def layer_shape(l: dict, ins: List[list]) -> list:
    """One layer's per-sample output shape from its inputs' shapes."""
    s, op = list(ins[0]), l["op"]
    k = attr(l, "kernel", [1, 1])
    st = attr(l, "stride", [1, 1])
    p = attr(l, "pad", [0, 0])
    if op == "linear":
        return s[:-1] + [l["out"]]
    if op in ("conv2d", "max_pool2d", "avg_pool2d"):
        ceil = op != "conv2d" and attr(l, "ceil_mode", False)
        return [l["out"] if op == "conv2d" else s[0],
                pool_dim(s[1], k[0], st[0], p[0], ceil),
                pool_dim(s[2], k[1], st[1], p[1], ceil)]
    if op == "global_avg_pool":
        return [s[0]]
    if op == "seq_mean":
        return [s[1]]
    if op == "flatten":
        return [int(np.prod(s))]
    if op == "concat":
        return [sum(x[0] for x in ins)] + s[1:]
    if op == "zero_pad_shortcut":
        return [l["out"], -(-s[1] // st[0]), -(-s[2] // st[1])]
    if op == "embedding":
        return s + [l["out"]]
    if op == "one_hot":
        return s + [l["vocab"]]
    if op == "lstm":
        width = l["out"] * (2 if attr(l, "bidirectional", False) else 1)
        return [s[0], width] if attr(l, "sequences", True) else [width]
    return s


def shapes(model: dict) -> List[list]:
    """Every layer's per-sample output shape, in order, as nnbench sent them."""
    try:
        return [list(l["shape"]) for l in model["layers"]]
    except KeyError as e:
        raise ValueError("the model has no per-layer 'shape': nnbench's "
                         "worker request sends them") from e


def window_overhang(l: dict, s: list) -> int:
    """How far a pooling layer's last window reaches past the padding of
    its input (shape s), in either direction; 0 when it does not."""
    k = attr(l, "kernel", [1, 1])
    st = attr(l, "stride", [1, 1])
    p = attr(l, "pad", [0, 0])
    o = layer_shape(l, [s])
    return max(0, (o[1] - 1) * st[0] + k[0] - (s[1] + 2 * p[0]),
               (o[2] - 1) * st[1] + k[1] - (s[2] + 2 * p[1]))


def optimizer_settings(o: dict) -> str:
    """nnbench's optimizer options as the records say them, e.g. "adam lr
    0.01 betas 0.9 0.999 eps 1e-08 weight_decay 0.01": one wording for
    every engine's `effective` optimizer."""
    name = o["optimizer"]
    settings = {"sgd": f"momentum {o['momentum']:g}" + (" nesterov" if o["nesterov"] else ""),
                "adam": f"betas {o['beta1']:g} {o['beta2']:g} eps {o['eps']:g}",
                "rmsprop": f"alpha {o['alpha']:g} eps {o['eps']:g} "
                           f"momentum {o['momentum']:g}",
                "adadelta": f"rho {o['rho']:g} eps {o['eps']:g}"}[name]
    wd = f" weight_decay {o['weight_decay']:g}" if o["weight_decay"] else ""
    return f"{name} lr {o['learning_rate']:g} {settings}{wd}"


# The ops that work on each position alone (model/generation.cpp's list):
# with causal attention, the only ones a model that generates may hold.
PER_POSITION = frozenset((
    "embedding", "one_hot", "linear", "layer_norm", "gelu", "relu", "sigmoid",
    "tanh", "softmax", "dropout", "add", "tied_linear", "positions"))


def generation_problem(model: dict) -> str:
    """Why the model does not generate token by token, naming the layer
    (as model/generation.cpp's generation_problem says it); empty when it
    does."""
    if model["input"]["dtype"] != "int64" or len(model["input"]["shape"]) != 1:
        return f"model '{model.get('name', 'model')}' does not read token ids [T]"
    for l in model["layers"]:
        named = f"layer '{l['name']}' ({l['op']})"
        if l["op"] == "attention":
            if not attr(l, "causal", False):
                return f"{named} attends to later positions (not causal)"
        elif l["op"] not in PER_POSITION:
            return f"{named} mixes positions other than by causal attention"
    out = model["layers"][-1].get("shape") if model["layers"] else None
    if out is None:
        return f"model '{model.get('name', 'model')}' has no per-layer shapes"
    if len(out) != 2 or out[0] != model["input"]["shape"][0]:
        return (f"model '{model.get('name', 'model')}' gives {out}, not one row "
                "of logits per token [T, vocab]")
    return ""
