"""Keras 3 on JAX: nnbench's `jax` engine.

The model is built by frameworks/common/keras_model.py (the same Keras
graph and optimizers as the tensorflow engine: channels-last, nnbench's
weights moved into Keras's layouts; Keras's SGD and Adadelta, Adam and
RMSprop with nnbench's formulas in keras.ops, here jax.numpy inside the
jitted step; L2 weight decay added to the gradients PyTorch's way). The step
is Keras's JAX training loop as its guide writes it: one jax.jit function
of the state (trainable, non-trainable and optimizer variables) that runs
stateless_call, value_and_grad and the optimizer's stateless_apply, the
state's buffers donated; each step ends with the loss read to the host.

Generation (prefill, decode) is keras_model.py's cached forward, greedy,
as KerasHub's CausalLM generates under JAX: one jax.jit function of the
model's state and the KV cache (the layers' variables mapped to the
state by a StatelessScope), the cache donated and given back updated; it
compiles once for the prompt's length and once for one token.

Threads: XLA's CPU client sizes its thread pools by the CPUs the process
may run on, and has no setting after it starts; so --threads N is the
process's CPU affinity, set from NNBENCH_THREADS before jax is imported.
"""
from __future__ import annotations

import os
import platform

os.environ.setdefault("KERAS_BACKEND", "jax")
ASKED_THREADS = int(os.environ.get("NNBENCH_THREADS", "0") or 0)
if ASKED_THREADS > 0:
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cpus[:ASKED_THREADS])

import numpy as np
import jax
import jax.numpy as jnp
import keras

import bandwidth
import keras_model as km


def bf16_problem() -> str:
    """Why XLA's bf16 products do not run here ("": they do), tried on the
    CPU."""
    with jax.default_device(jax.devices("cpu")[0]):
        return km.bf16_problem()


class Engine(km.Generates):
    def __init__(self):
        self.batches = []
        self.out = None
        self.grads = None

    def hello(self) -> dict:
        return {"framework": "JAX",
                "version": f"{jax.__version__} (Keras {keras.__version__})",
                "python": platform.python_version(),
                "devices": ["cpu"] + [f"cuda:{i}" for i, _ in enumerate(
                    jax.devices("gpu") if jax.default_backend() == "gpu" else [])],
                "optimizers": km.OPTIMIZERS,
                "generates": True, **km.hello_gaps(bf16_problem())}

    def check(self, model: dict) -> None:
        """Builds the model without weights: NotImplementedError names a gap."""
        km.Builder(model).build()

    def compile(self, model: dict, params: dict, options: dict, shapes: dict) -> dict:
        km.refuse(options, shapes, model, "jax", bf16_problem())
        if options["threads"] != ASKED_THREADS:
            raise ValueError(f"threads {options['threads']} asked, the worker "
                             f"started with NNBENCH_THREADS={ASKED_THREADS}")
        self.options = options
        dev = options["device"]
        self.device = (jax.devices("gpu")[int(dev.split(":")[1])]
                       if dev.startswith("cuda") else jax.devices("cpu")[0])
        if dev.startswith("cuda"):
            # fp32 is fp32: XLA's GPU dots and convolutions otherwise run
            # TF32 (10-bit mantissas) on Ampere and later.
            jax.config.update("jax_default_matmul_precision", "highest")
        with jax.default_device(self.device):
            self.k = km.KerasModel(model, params, options)
        net, loss_fn, opt = self.k.net, self.k.loss_fn, self.k.opt
        wd = float(options["weight_decay"])

        def forward_loss(tv, ntv, x, y):
            out, ntv = net.stateless_call(tv, ntv, x, training=True)
            return loss_fn(y, out), (out, ntv)

        grad_fn = jax.value_and_grad(forward_loss, has_aux=True)

        # Keras's guide returns the loss and the state; the outputs too (the
        # trainer's accuracy, as fit's metrics), the gradients only when
        # nnbench verify reads them: XLA compiled a ResNet-56 step
        # returning them 30 % faster on the CPU (1.0 against 1.43 s, batch
        # 128, 2 threads; the outputs changed nothing), which Keras's users
        # do not get (docs/performance.md).
        observe = bool(options.get("observe"))

        def train(state, x, y):
            tv, ntv, ov = state
            (loss, (out, ntv)), grads = grad_fn(tv, ntv, x, y)
            applied = [g + wd * v for g, v in zip(grads, tv)] if wd else grads
            tv, ov = opt.stateless_apply(ov, applied, tv)
            if observe:
                return loss, (tv, ntv, ov), out, grads
            return loss, (tv, ntv, ov), out

        def infer(tv, ntv, x):
            return net.stateless_call(tv, ntv, x, training=False)[0]

        def greedy(tv, ntv, ids, cache, length):
            mapping = list(zip(net.trainable_variables, tv)) + \
                list(zip(net.non_trainable_variables, ntv))
            with keras.StatelessScope(state_mapping=mapping):
                return km.greedy_step(self.k, ids, cache, length)

        self.train_fn = jax.jit(train, donate_argnums=0)
        self.infer_fn = jax.jit(infer)
        self.greedy_fn = jax.jit(greedy, donate_argnums=3)
        self.generation = None
        self.state = tuple([jax.device_put(v.value, self.device) for v in vs]
                           for vs in (net.trainable_variables,
                                      net.non_trainable_variables, opt.variables))
        self.index = {id(v): i for i, v in enumerate(net.trainable_variables)}
        self.nt_index = {id(v): i
                         for i, v in enumerate(net.non_trainable_variables)}
        return self.effective()

    def effective(self) -> dict:
        o = self.options
        cpus = len(os.sched_getaffinity(0))
        # A flag: jax.config serves it by __getattr__, which mypy cannot see.
        matmul = jax.config.jax_default_matmul_precision  # type: ignore[attr-defined]
        return {"threads": cpus, "device": o["device"], "precision": o["precision"],
                **km.precision_effective(o, self.k.quantized),
                "optimizer": km.describe_optimizer(o),
                "thread_setting": (f"CPU affinity: {cpus} CPUs (XLA sizes its "
                                   "CPU pools by them)"),
                "compiled": "jax.jit (XLA)",
                "layout": "NHWC (channels last, Keras's default)",
                "framework": f"JAX {jax.__version__}, Keras {keras.__version__}",
                **({"gpu": self.device.device_kind,
                    "matmul_precision": str(matmul)}
                   if o["device"].startswith("cuda") else {})}

    def device_bandwidth(self) -> dict:
        """A GPU's read bandwidth (frameworks/common/bandwidth.py), the
        ceiling of a generation there; {} on the host, which nnbench
        measures itself."""
        if not self.options["device"].startswith("cuda"):
            return {}
        stats = self.device.memory_stats() or {}
        free = stats.get("bytes_limit", 0) - stats.get("bytes_in_use", 0)
        n = bandwidth.array_bytes(free)
        if n == 0:
            return {}
        with jax.default_device(self.device):
            x = jnp.ones(n // 4, jnp.float32)
        total = jax.jit(jnp.sum)
        last: list = []
        try:
            return bandwidth.measure(lambda: last.append(total(x)),
                                     lambda: last[-1].block_until_ready(),
                                     n, f"jnp.sum (jit) on {self.options['device']}")
        finally:
            x.delete()

    def set_learning_rate(self, lr: float) -> None:
        opt = self.k.opt
        ov = list(self.state[2])
        where = {id(v): i for i, v in enumerate(opt.variables)}
        i_lr = where[id(opt._learning_rate)]
        ratio = km.rescale_ratio(float(ov[i_lr]), lr, self.options)
        if ratio != 1.0:
            for v in opt.momentums:
                ov[where[id(v)]] = ov[where[id(v)]] * ratio
        ov[i_lr] = jax.numpy.asarray(lr, dtype=ov[i_lr].dtype)
        self.state = (self.state[0], self.state[1], ov)
        self.options["learning_rate"] = lr  # effective: the last rate
    def load_batches(self, t: dict) -> None:
        self.batches = [(jax.device_put(x, self.device), jax.device_put(y, self.device))
                        for x, y in self.k.host_batches(t)]

    def fit(self, t: dict):
        """Keras's Model.fit: the engine's state goes into the model's
        variables first (outside the clock) and comes back after."""
        net, opt = self.k.net, self.k.opt
        groups = (net.trainable_variables, net.non_trainable_variables,
                  opt.variables)
        for vs, values in zip(groups, self.state):
            for v, a in zip(vs, values):
                v.assign(a)

        def take_back() -> None:
            self.state = tuple([jax.device_put(v.value, self.device) for v in vs]
                               for vs in groups)

        with jax.default_device(self.device):
            run = km.fit_loop(self.k, t, self.options, after=take_back)

        def on_device() -> dict:
            with jax.default_device(self.device):
                return run()

        return on_device

    def train_step(self, batch: int) -> float:
        x, y = self.batches[batch]
        r = self.train_fn(self.state, x, y)
        self.state = r[1]
        self.out = r[2]
        self.grads = r[3] if len(r) > 3 else None
        return float(r[0])  # to the host: the step is done

    def infer_step(self, batch: int) -> None:
        x, _ = self.batches[batch]
        self.out = self.infer_fn(self.state[0], self.state[1], x)
        self.out.block_until_ready()

    def _greedy(self, ids: np.ndarray, cache: list, length: int):
        # The weights are the state's (the trained ones after a training
        # step); length is traced, not static: one compile for every
        # position.
        return self.greedy_fn(self.state[0], self.state[1],
                              jax.device_put(ids, self.device), cache,
                              np.int32(length))

    def _zeros(self, shape: tuple):
        with jax.default_device(self.device):
            return jnp.zeros(shape, self.k.dtype)

    def output(self) -> dict:
        return {"output": np.asarray(self.out, dtype=np.float32)}

    def parameters(self) -> dict:
        return self.k.canonical(lambda v: np.asarray(self.state[0][self.index[id(v)]]))

    def running_stats(self) -> dict:
        return self.k.running_stats(
            lambda v: np.asarray(self.state[1][self.nt_index[id(v)]]))

    def gradients(self) -> dict:
        km.kept(self.grads)
        return self.k.canonical(
            lambda v: None if id(v) not in self.index
            else np.asarray(self.grads[self.index[id(v)]]))
