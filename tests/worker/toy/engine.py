"""A toy engine: nnbench's multi-layer perceptrons (linear, relu, dropout,
flatten; softmax cross-entropy; SGD as PyTorch applies it) in numpy.

It exists to show what a framework folder needs (framework.toml and this
file, protocol.py's methods); tests/cli/frameworks_test.cpp adds it and
runs and verifies it against nnbench's oracle.
"""
from __future__ import annotations

import os
import platform

THREADS = int(os.environ.get("NNBENCH_THREADS", "0") or 0)
if THREADS > 0:  # OpenBLAS reads it when numpy loads it
    os.environ["OPENBLAS_NUM_THREADS"] = str(THREADS)

import numpy as np

OPS = ("linear", "relu", "dropout", "flatten")


class Engine:
    def hello(self) -> dict:
        return {"framework": "Toy", "version": f"numpy {np.__version__}",
                "python": platform.python_version(), "devices": ["cpu"],
                "precisions": ["fp32"], "optimizers": ["sgd"],
                "unsupported": [{"op": op, "why": "the toy has MLP layers only"}
                                for op in ("conv2d", "lstm", "embedding",
                                           "batch_norm", "max_pool2d")]}

    def compile(self, model: dict, params: dict, options: dict, shapes: dict) -> dict:
        for l in model["layers"]:
            if l["op"] not in OPS or l.get("inputs"):
                raise NotImplementedError(f"layer '{l['name']}' ({l['op']}): "
                                          "the toy runs a chain of " + ", ".join(OPS))
        if model["loss"] != "softmax_cross_entropy" or options["optimizer"] != "sgd":
            raise NotImplementedError("the toy trains softmax cross-entropy with SGD")
        if options["precision"] != "fp32" or options["device"] != "cpu":
            raise NotImplementedError("the toy runs fp32 on the CPU")
        self.layers = model["layers"]
        self.o = options
        self.w = {k: v.astype(np.float32) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.w.items()}
        self.g: dict = {}
        self.rng = np.random.default_rng(int(options["seed"]))
        return self.effective()

    def effective(self) -> dict:
        o = self.o
        return {"threads": THREADS or len(os.sched_getaffinity(0)),
                "device": "cpu", "precision": "fp32",
                "optimizer": (f"SGD lr {o['learning_rate']} momentum {o['momentum']}"
                              + (" nesterov" if o["nesterov"] else "")
                              + (f" weight_decay {o['weight_decay']}"
                                 if o["weight_decay"] else "")),
                "thread_setting": f"OPENBLAS_NUM_THREADS={THREADS or 'unset'}"}

    def set_learning_rate(self, lr: float) -> None:
        self.o["learning_rate"] = lr

    def load_batches(self, t: dict) -> None:
        n = sum(1 for k in t if k.startswith("input."))
        self.batches = [(t[f"input.{i}"].reshape(len(t[f"input.{i}"]), -1)
                         .astype(np.float32), t[f"labels.{i}"]) for i in range(n)]

    def forward(self, x: np.ndarray, train: bool) -> list:
        """Each layer's input and what its backward needs."""
        saved = []
        for l in self.layers:
            op, keep = l["op"], None
            if op == "linear":
                keep = x
                x = x @ self.w[l["name"] + ".weight"].T
                if l.get("bias", True):
                    x = x + self.w[l["name"] + ".bias"]
            elif op == "relu":
                keep = x > 0
                x = x * keep
            elif op == "dropout" and train and l.get("p", 0) > 0:
                keep = (self.rng.random(x.shape) >= l["p"]) / np.float32(1 - l["p"])
                x = x * keep.astype(np.float32)
            saved.append(keep)
        self.out = x
        return saved

    def train_step(self, batch: int) -> float:
        x, y = self.batches[batch]
        saved = self.forward(x, True)
        z = self.out - self.out.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        n = len(y)
        loss = float(-np.log(p[np.arange(n), y]).mean())
        d = p
        d[np.arange(n), y] -= 1
        d /= n
        for l, keep in zip(reversed(self.layers), reversed(saved)):
            if l["op"] == "linear":
                name = l["name"]
                self.g[name + ".weight"] = d.T @ keep
                if l.get("bias", True):
                    self.g[name + ".bias"] = d.sum(axis=0)
                d = d @ self.w[name + ".weight"]
            elif keep is not None:
                d = d * keep
        self.update()
        return loss

    def update(self) -> None:
        """PyTorch's SGD: decay added to the gradient, momentum without
        dampening, Nesterov's look-ahead when asked."""
        o = self.o
        for k, w in self.w.items():
            d = self.g[k] + np.float32(o["weight_decay"]) * w
            if o["momentum"]:
                self.v[k] = np.float32(o["momentum"]) * self.v[k] + d
                d = d + np.float32(o["momentum"]) * self.v[k] if o["nesterov"] else self.v[k]
            w -= np.float32(o["learning_rate"]) * d

    def infer_step(self, batch: int) -> None:
        self.forward(self.batches[batch][0], False)

    def output(self) -> dict:
        return {"output": self.out}

    def parameters(self) -> dict:
        return self.w

    def gradients(self) -> dict:
        return self.g
