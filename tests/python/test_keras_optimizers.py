"""The Keras engines' optimizers (keras_model.make_optimizer, on JAX here as
the jax engine runs it; the tensorflow engine runs the same keras.ops)
apply nnbench's formulas: three steps against a float64 numpy transcription
of src/backend/optimizer.cpp, L2 weight decay added to the gradients as the
engines' step adds it, and a learning rate changed between steps as a
schedule changes it. The conformance suite checks the engines themselves
against the C++ reference; this names the formula that broke."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

BASE: Dict[str, Any] = {
    "learning_rate": 0.01, "momentum": 0.0, "nesterov": False, "weight_decay": 0.0,
    "beta1": 0.9, "beta2": 0.999, "alpha": 0.99, "rho": 0.9, "eps": 1e-8}

# The conformance suite's settings (tests/conformance/optimizer_test.cpp).
SETTINGS: Dict[str, Dict[str, Any]] = {
    "sgd_momentum": {"optimizer": "sgd", "learning_rate": 0.05, "momentum": 0.9},
    "sgd_nesterov_weight_decay": {"optimizer": "sgd", "learning_rate": 0.05,
                                  "momentum": 0.9, "nesterov": True,
                                  "weight_decay": 0.05},
    "adam_weight_decay": {"optimizer": "adam", "weight_decay": 0.01},
    "rmsprop_momentum": {"optimizer": "rmsprop", "momentum": 0.5},
    "rmsprop": {"optimizer": "rmsprop"},
    "adadelta": {"optimizer": "adadelta", "learning_rate": 1.0},
    # An epsilon near the gradients' scale, where its placement shows.
    "adam_large_eps": {"optimizer": "adam", "eps": 0.1},
    "rmsprop_momentum_large_eps": {"optimizer": "rmsprop", "momentum": 0.5, "eps": 0.1},
    "adadelta_large_eps": {"optimizer": "adadelta", "learning_rate": 1.0, "eps": 0.1},
}


def problem() -> tuple:
    rng = np.random.default_rng(11)
    p = rng.standard_normal((5, 7)).astype(np.float32)
    grads = [rng.standard_normal((5, 7)).astype(np.float32) for _ in range(3)]
    return p, grads


def reference(o: dict, p: np.ndarray, grads: List[np.ndarray],
              rates: List[float]) -> np.ndarray:
    """HostOptimizer's update rules, element-wise over whole arrays."""
    p = p.astype(np.float64)
    s1 = np.zeros_like(p)
    s2 = np.zeros_like(p)
    mu, wd, eps = o["momentum"], o["weight_decay"], o["eps"]
    for t, (g, lr) in enumerate(zip(grads, rates), start=1):
        d = g + wd * p
        if o["optimizer"] == "sgd":
            s1 = mu * s1 + d
            p = p - lr * (d + mu * s1 if o["nesterov"] else s1)
        elif o["optimizer"] == "adam":
            b1, b2 = o["beta1"], o["beta2"]
            s1 = b1 * s1 + (1 - b1) * d
            s2 = b2 * s2 + (1 - b2) * d * d
            p = p - lr / (1 - b1 ** t) * s1 / (np.sqrt(s2) / np.sqrt(1 - b2 ** t) + eps)
        elif o["optimizer"] == "rmsprop":
            s1 = o["alpha"] * s1 + (1 - o["alpha"]) * d * d
            step = d / (np.sqrt(s1) + eps)
            if mu > 0:
                s2 = mu * s2 + step
                step = s2
            p = p - lr * step
        else:
            rho = o["rho"]
            s1 = rho * s1 + (1 - rho) * d * d
            delta = np.sqrt(s2 + eps) / np.sqrt(s1 + eps) * d
            s2 = rho * s2 + (1 - rho) * delta * delta
            p = p - lr * delta
    return p


def keras_steps(o: dict, p: np.ndarray, grads: List[np.ndarray],
                rates: List[float]) -> np.ndarray:
    """The optimizer as the engines drive it: gradients with L2 added,
    km.rescale_ratio applied where a rate changes."""
    import keras
    import keras_model as km

    v = keras.Variable(p)
    opt = km.make_optimizer({**o, "learning_rate": rates[0]})
    opt.build([v])
    for g, lr in zip(grads, rates):
        old = float(np.asarray(opt.learning_rate))
        ratio = km.rescale_ratio(old, lr, o)
        for m in getattr(opt, "momentums", []) if ratio != 1.0 else []:
            m.assign(m * ratio)
        opt.learning_rate.assign(lr)
        applied = g + o["weight_decay"] * np.asarray(v.value)
        opt.apply([applied.astype(np.float32)], [v])
    out: np.ndarray = np.asarray(v.value, dtype=np.float64)
    return out


@pytest.mark.parametrize("name", sorted(SETTINGS))
@pytest.mark.parametrize("scheduled", [False, True])
def test_three_steps_follow_nnbench_formulas(name: str, scheduled: bool) -> None:
    o = {**BASE, **SETTINGS[name]}
    p, grads = problem()
    lr = o["learning_rate"]
    rates = [lr, lr / 5, lr * 1.6] if scheduled else [lr] * 3
    want = reference(o, p, grads, rates)
    got = keras_steps(o, p, grads, rates)
    err = np.linalg.norm(got - want) / np.linalg.norm(want - p)
    assert err < 1e-3, f"{name}: update error {err:.2e}"


def test_keras_own_adam_and_rmsprop_would_be_caught() -> None:
    """Keras's Adam and RMSprop place epsilon elsewhere: at the large
    epsilon above they are far from nnbench's formulas, so the check there
    tells ours from theirs."""
    import keras

    p, grads = problem()
    for name, own in (("adam_large_eps", keras.optimizers.Adam(0.01, epsilon=0.1)),
                      ("rmsprop_momentum_large_eps",
                       keras.optimizers.RMSprop(0.01, rho=0.99, momentum=0.5, epsilon=0.1))):
        v = keras.Variable(p)
        own.build([v])
        for g in grads:
            own.apply([g], [v])
        want = reference({**BASE, **SETTINGS[name]}, p, grads, [0.01] * 3)
        err = np.linalg.norm(np.asarray(v.value) - want) / np.linalg.norm(want - p)
        assert err > 0.05, f"{name}: Keras's own is {err:.2e} off"
