"""What a framework engine is to its worker (worker.py): the methods an
engine's `Engine` class has, with the types that travel, and the worker
contract (contract.json) they answer.

An engine builds the model and runs one step at a time; worker.py owns the
clock (it times each step around the engine's call, and `settle` for the
last one of a request), the loss's finiteness, the files and the failure
states. Tensors are numpy arrays by nnbench's names and layouts
(tensors.py); the model is nnbench's description (`nnbench models
--export`), with each layer's per-sample output shape under "shape" as
nnbench computed it.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Protocol, TypedDict

import numpy as np

Tensors = Dict[str, np.ndarray]
Model = Dict[str, Any]      # nnbench's model description
Effective = Dict[str, Any]  # what runs: threads, device, precision, optimizer, ...


class Options(TypedDict, total=False):
    """The run's settings as the worker reads them (engines/worker)."""

    device: str        # "cpu", "cuda:0"
    threads: int       # asked; 0 for every CPU the process may use
    seed: int
    precision: str     # "fp32", "bf16", "int8"
    calibration: str   # int8: a tensor file of calibration inputs
    observe: bool      # verify reads the training step's gradients
    generation: bool   # a compile for prefill and decode only
    optimizer: str     # "sgd", "adam", "rmsprop", "adadelta"
    learning_rate: float
    momentum: float
    nesterov: bool
    weight_decay: float
    beta1: float
    beta2: float
    alpha: float
    rho: float
    eps: float


class Shapes(TypedDict):
    train_batch: int          # 0: inference only
    infer_batches: List[int]


class Hello(TypedDict, total=False):
    framework: str
    version: str
    python: str
    devices: List[str]
    precisions: List[str]
    inference_only_precisions: List[str]  # of those: no training compile
    optimizers: List[str]
    exports: List[str]        # formats `export` writes
    checks_shapes: bool       # `check` names gaps that depend on shapes
    unsupported: List[Dict[str, str]]  # {"op", "attribute", "value", "precision", "why"}
    generates: bool           # prefill and decode (generation)
    generation_precisions: List[str]  # those it generates at (default fp32)
    generation_gaps: Dict[str, str]   # precision -> why it does not generate at it


class FitEpoch(TypedDict):
    """What one epoch of the framework's own loop gives back."""

    loss: Optional[float]      # mean over the epoch, as the framework counted
    accuracy: Optional[float]  # training accuracy, None when not counted
    loop: str                  # the idiom in words, for the record


class Engine(Protocol):
    """The methods every engine has. Optional ones, which worker.py calls
    only where they exist: check, export, set_learning_rate, effective,
    running_stats, begin(mode) (before a request's timed steps, outside
    the clock), settle() (waits for work a step left running; inside
    the last step's time of each request) and fit(tensors), which prepares
    an epoch of batches for the framework's own training loop outside the
    clock and returns the loop: a call worker.py times whole, giving a
    FitEpoch. Generation, where the engine has it: prefill(rows, capacity)
    (the prompts through the compiled model, a KV cache sized for
    `capacity` tokens; each row's next token, greedy) and decode(tokens)
    (one token per row; each row's next), each done when it returns;
    hello's `generates` says the engine has them; last_logits() and, on a
    GPU, device_bandwidth() (its memory's read bandwidth, the ceiling of a
    generation there: frameworks/common/bandwidth.py)."""

    def hello(self) -> Hello: ...

    def compile(self, model: Model, params: Tensors, options: Options,
                shapes: Shapes) -> Effective: ...

    def load_batches(self, tensors: Tensors) -> None:
        """input.I and labels.I for I = 0, 1, ... before any clock."""

    def train_step(self, batch: int) -> Optional[float]:
        """One training step on batch `batch`, its loss read to the host
        (the step is done when it returns)."""

    def infer_step(self, batch: int) -> None:
        """One inference step on batch `batch`, done when it returns."""

    def output(self) -> Tensors:
        """{"output": the last step's output}."""

    def parameters(self) -> Tensors: ...

    def gradients(self) -> Tensors: ...


def load_contract() -> Dict[str, Any]:
    """contract.json beside this file: the ops, their fields and the states."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "contract.json"), encoding="utf-8") as f:
        contract: Dict[str, Any] = json.load(f)
    return contract
