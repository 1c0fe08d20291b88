"""A small CNN in nnbench's description and its forward pass in plain numpy
(NCHW, PyTorch's layouts): the expectation the model builders are checked
against, computed without any framework."""
from __future__ import annotations

from typing import Dict

import numpy as np

CNN = {
    "name": "tiny-cnn", "loss": "softmax_cross_entropy",
    "input": {"dtype": "float32", "shape": [2, 6, 6]},
    "layers": [
        {"name": "c", "op": "conv2d", "out": 3, "kernel": [3, 3], "stride": [1, 1],
         "pad": [1, 1], "bias": True, "shape": [3, 6, 6]},
        {"name": "r", "op": "relu", "shape": [3, 6, 6]},
        {"name": "f", "op": "flatten", "shape": [108]},
        {"name": "d", "op": "linear", "out": 4, "bias": True, "shape": [4]},
    ],
}


def params(seed: int = 3) -> Dict[str, np.ndarray]:
    g = np.random.default_rng(seed)
    return {"c.weight": g.standard_normal((3, 2, 3, 3)).astype(np.float32) * 0.3,
            "c.bias": g.standard_normal(3).astype(np.float32) * 0.1,
            "d.weight": g.standard_normal((4, 108)).astype(np.float32) * 0.1,
            "d.bias": g.standard_normal(4).astype(np.float32) * 0.1}


def batch(n: int = 2, seed: int = 5) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 2, 6, 6)).astype(np.float32)


def forward(p: Dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """conv 3x3 pad 1 (cross-correlation, as PyTorch), relu, flatten in C, H,
    W order, linear."""
    n, _, h, w = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, 3, h, w))
    for o in range(3):
        for i in range(h):
            for j in range(w):
                y[:, o, i, j] = (xp[:, :, i:i + 3, j:j + 3] * p["c.weight"][o]).sum(
                    axis=(1, 2, 3)) + p["c.bias"][o]
    flat = np.maximum(y, 0).reshape(n, -1)
    out: np.ndarray = flat @ p["d.weight"].T.astype(np.float64) + p["d.bias"]
    return out
