"""Keras 3 on TensorFlow: nnbench's `tensorflow` engine.

The model is built by frameworks/common/keras_model.py (channels-last,
nnbench's weights moved into Keras's layouts) with nnbench's optimizers:
Keras's SGD and Adadelta, whose formulas are nnbench's, and Adam and
RMSprop written there in keras.ops (Keras's own place epsilon elsewhere),
here tf ops inside the step; L2 weight decay is added to the gradients,
PyTorch's way. The training step is one tf.function (XLA with
NNBENCH_TF_XLA=1): forward, loss, gradients, the update; the loss is read
to the host to end each step. --threads sets TensorFlow's intra-op pool,
the inter-op pool is one thread.

Generation (prefill, decode) is keras_model.py's cached forward, greedy,
as KerasHub's CausalLM generates under TensorFlow: one tf.function (XLA
with NNBENCH_TF_XLA=1) of the token ids, the KV cache and the position,
the cache given back updated; the position is a tensor, so it traces once
for the prompt's length and once for one token.
"""
from __future__ import annotations

import os
import platform

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
import keras

import cpu
import keras_model as km


def bf16_problem() -> str:
    """Why TensorFlow's bf16 products do not run here ("": they do), tried
    on the CPU, after compile has set the threads."""
    with tf.device("/CPU:0"):
        return km.bf16_problem()


def bf16_gap() -> str:
    why = cpu.onednn_avx512_problem()
    return f"TensorFlow's bf16 kernels (oneDNN) need AVX-512: {why}" if why else ""


class Engine(km.Generates):
    def __init__(self):
        self.batches = []
        self.out = None
        self.grads = None

    def hello(self) -> dict:
        return {"framework": "TensorFlow",
                "version": f"{tf.__version__} (Keras {keras.__version__})",
                "python": platform.python_version(),
                "devices": ["cpu"] + [f"cuda:{i}" for i, _ in enumerate(
                    tf.config.list_physical_devices("GPU"))],
                "optimizers": km.OPTIMIZERS,
                # bf16 (inference steps and generation) where TensorFlow's
                # oneDNN kernels run at AVX-512 (capped to AVX2 a Zen 5's
                # worker died of a SIGSEGV in a bf16 generation, an 8x8
                # bf16 matmul had passed); read from the ISA, not tried
                # here: a bf16 product would start the runtime before
                # compile sets its threads. Compile tries one.
                "generates": True, **km.hello_gaps(bf16_gap())}

    def check(self, model: dict) -> None:
        """Builds the model without weights: NotImplementedError names a gap."""
        km.Builder(model).build()

    def compile(self, model: dict, params: dict, options: dict, shapes: dict) -> dict:
        # The threads first: the bf16 product below starts the runtime.
        if options["threads"] > 0:
            tf.config.threading.set_intra_op_parallelism_threads(options["threads"])
            tf.config.threading.set_inter_op_parallelism_threads(1)
        km.refuse(options, shapes, model, "tensorflow", (bf16_gap() or bf16_problem())
                  if options["precision"] == "bf16" else "")
        self.options = options
        self.device = "/GPU:" + options["device"].split(":")[1] \
            if options["device"].startswith("cuda") else "/CPU:0"
        with tf.device(self.device):
            self.k = km.KerasModel(model, params, options)
        self.xla = os.environ.get("NNBENCH_TF_XLA") == "1"
        wd = float(options["weight_decay"])
        net, loss_fn, opt = self.k.net, self.k.loss_fn, self.k.opt
        # The step returns the gradients only when nnbench verify reads
        # them: returning them changes what is compiled (frameworks/jax).
        self.observe = bool(options.get("observe"))

        @tf.function(jit_compile=self.xla)
        def train(x, y):
            with tf.GradientTape() as tape:
                out = net(x, training=True)
                loss = loss_fn(y, out)
            vs = net.trainable_variables
            grads = tape.gradient(loss, vs)
            applied = [g + wd * v for g, v in zip(grads, vs)] if wd else grads
            opt.apply_gradients(zip(applied, vs))
            return (loss, out, grads) if self.observe else (loss, out)

        @tf.function(jit_compile=self.xla)
        def infer(x):
            return net(x, training=False)

        @tf.function(jit_compile=self.xla)
        def greedy(ids, cache, length):
            return km.greedy_step(self.k, ids, cache, length)

        self.train_fn, self.infer_fn, self.greedy_fn = train, infer, greedy
        self.generation = None
        return self.effective()

    def effective(self) -> dict:
        o = self.options
        return {"threads": tf.config.threading.get_intra_op_parallelism_threads(),
                "inter_op_threads": str(tf.config.threading.get_inter_op_parallelism_threads()),
                "device": o["device"], "precision": o["precision"],
                **km.precision_effective(o, self.k.quantized),
                "optimizer": km.describe_optimizer(o),
                "compiled": "tf.function, XLA" if self.xla else "tf.function",
                "layout": "NHWC (channels last, Keras's default)",
                "framework": f"TensorFlow {tf.__version__}, Keras {keras.__version__}"}

    def set_learning_rate(self, lr: float) -> None:
        opt = self.k.opt
        ratio = km.rescale_ratio(float(opt.learning_rate.numpy()), lr, self.options)
        if ratio != 1.0:
            for v in opt.momentums:
                v.assign(v * ratio)
        opt.learning_rate.assign(lr)
        self.options["learning_rate"] = lr  # effective: the last rate
    def load_batches(self, t: dict) -> None:
        with tf.device(self.device):
            self.batches = [(tf.constant(x), tf.constant(y))
                            for x, y in self.k.host_batches(t)]

    def fit(self, t: dict):
        """Keras's Model.fit on the engine's model and optimizer, on the
        engine's device."""
        with tf.device(self.device):
            run = km.fit_loop(self.k, t, self.options)

        def on_device() -> dict:
            with tf.device(self.device):
                return run()

        return on_device

    def train_step(self, batch: int) -> float:
        x, y = self.batches[batch]
        r = self.train_fn(x, y)
        self.out = r[1]
        self.grads = r[2] if self.observe else None
        return float(r[0].numpy())  # to the host: the step is done

    def infer_step(self, batch: int) -> None:
        x, _ = self.batches[batch]
        self.out = self.infer_fn(x)
        self.out[0].numpy()

    def _greedy(self, ids: np.ndarray, cache: list, length: int):
        # length as a tensor: a Python int would trace the function again
        # for each position.
        with tf.device(self.device):
            return self.greedy_fn(tf.constant(ids), cache,
                                  tf.constant(length, tf.int32))

    def _zeros(self, shape: tuple):
        with tf.device(self.device):
            return tf.zeros(shape, self.k.dtype)

    def output(self) -> dict:
        return {"output": np.asarray(self.out, dtype=np.float32)}

    def parameters(self) -> dict:
        return self.k.canonical(lambda v: v.numpy())

    def running_stats(self) -> dict:
        return self.k.running_stats(lambda v: v.numpy())

    def gradients(self) -> dict:
        km.kept(self.grads)
        by_var = {id(v): g for v, g in zip(self.k.net.trainable_variables, self.grads)}
        # An embedding's gradient comes as IndexedSlices: made dense.
        return self.k.canonical(
            lambda v: None if id(v) not in by_var
            else tf.convert_to_tensor(by_var[id(v)]).numpy())
