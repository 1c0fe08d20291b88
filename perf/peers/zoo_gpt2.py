"""The zoo's GPT-2s as nnbench's framework workers receive them, for the
plain loops and perf/generation_ab.py: the description (what `nnbench
models --export` writes, with the per-layer shapes the worker's compile
request adds) and seeded fp32 weights of the zoo's shapes and initial
distributions. Written as src/model/zoo/transformers.cpp builds the
model; numpy and frameworks/common/description.py only, so that every
framework's environment imports it.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "frameworks" / "common"))
from description import layer_inputs, layer_shape

# The zoo's GPT-2s (src/model/zoo/transformers.cpp): layers, width, heads,
# vocabulary, learned positions.
MODELS: Dict[str, Tuple[int, int, int, int, int]] = {
    "gpt2-small": (12, 768, 12, 50257, 1024),
    "gpt2-tiny": (2, 64, 4, 512, 64),
}

def gpt2(name: str, tokens: int) -> dict:
    """The zoo's description (what `nnbench models --export` writes, the
    layers in its order and with its names) with input length `tokens`,
    and the per-layer shapes nnbench's worker request adds."""
    n_layers, width, heads, vocab, positions = MODELS[name]
    layers: List[dict] = []
    counter = 0  # the zoo's Builder names unnamed layers op_k, one counter

    def add(layer: dict) -> int:
        layers.append(layer)
        return len(layers) - 1

    def auto(op: str) -> str:
        nonlocal counter
        counter += 1
        return f"{op}_{counter - 1}"

    wte = add({"name": "wte", "op": "embedding", "out": width, "vocab": vocab})
    x = add({"name": "wpe", "op": "positions", "vocab": positions})
    for i in range(n_layers):
        h = f"h{i}."
        add({"name": h + "ln_1", "op": "layer_norm", "eps": 1e-5})
        a = add({"name": h + "attn", "op": "attention", "heads": heads,
                 "causal": True, "bias": True})
        x = add({"name": auto("add"), "op": "add", "inputs": [x, a]})
        add({"name": h + "ln_2", "op": "layer_norm", "eps": 1e-5})
        add({"name": h + "mlp.c_fc", "op": "linear", "out": 4 * width, "bias": True})
        add({"name": auto("gelu"), "op": "gelu", "approximate": True})
        m = add({"name": h + "mlp.c_proj", "op": "linear", "out": width, "bias": True})
        x = add({"name": auto("add"), "op": "add", "inputs": [x, m]})
    add({"name": "ln_f", "op": "layer_norm", "eps": 1e-5})
    add({"name": "lm_head", "op": "tied_linear", "tied": wte})
    model = {"format_version": 1, "name": name, "loss": "softmax_cross_entropy",
             "input": {"dtype": "int64", "shape": [tokens], "vocab": vocab},
             "layers": layers}
    out: List[list] = []
    for i, layer in enumerate(layers):
        ins = [[tokens] if j < 0 else out[j] for j in layer_inputs(model, i)]
        if layer["op"] == "tied_linear":  # layer_shape has no case for it
            out.append(ins[0][:-1] + [layers[layer["tied"]]["vocab"]])
        else:
            out.append(layer_shape(layer, ins))
        layer["shape"] = out[-1]
    return model


def weights(model: dict, seed: int) -> Dict[str, np.ndarray]:
    """fp32 parameters of the zoo's layouts (src/model/params.h) and initial
    distributions: U(+-1/sqrt(fan in)) for projections, N(0, 0.02) for a
    transformer's tables, ones and zeros for layer norm."""
    rng = np.random.default_rng(seed)

    def uniform(shape: Tuple[int, ...], fan_in: int) -> np.ndarray:
        bound = np.float32(1 / np.sqrt(fan_in))
        return (rng.random(shape, dtype=np.float32) * 2 - 1) * bound

    p: Dict[str, np.ndarray] = {}
    layers = model["layers"]
    width = layers[0]["out"]
    for i, layer in enumerate(layers):
        name, op = layer["name"], layer["op"]
        if op in ("embedding", "positions"):
            p[f"{name}.weight"] = rng.standard_normal((layer["vocab"], width),
                                                      dtype=np.float32) * np.float32(0.02)
        elif op == "layer_norm":
            p[f"{name}.weight"] = np.ones(width, np.float32)
            p[f"{name}.bias"] = np.zeros(width, np.float32)
        elif op == "attention":
            p[f"{name}.in_weight"] = uniform((3 * width, width), width)
            p[f"{name}.in_bias"] = uniform((3 * width,), width)
            p[f"{name}.out_weight"] = uniform((width, width), width)
            p[f"{name}.out_bias"] = uniform((width,), width)
        elif op == "linear":
            fan_in = layers[layer_inputs(model, i)[0]]["shape"][-1]
            p[f"{name}.weight"] = uniform((layer["out"], fan_in), fan_in)
            p[f"{name}.bias"] = uniform((layer["out"],), fan_in)
    return p
