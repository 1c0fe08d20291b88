#!/usr/bin/env python3
"""Keras peer for nnbench's tensorflow and jax engines (docs/performance.md).

The Keras MNIST MLP of the CPU-vs-GPU study (784-512-512-10, dropout 0.2),
or DLBench's CIFAR-10 ResNet-56 (option A shortcuts; Keras's channels-last
layout, as the engines build it), as a Keras user trains it: model.compile
with SGD (momentum 0.9) and Keras's default jit_compile="auto" (XLA where
the model allows; --jit-compile false for none) and a train_on_batch loop
on synthetic data, each step timed (train_on_batch
returns the loss on the host) by the peers' loop (timing.py: the same
warm-up rule as nnbench, at least 5 steps and 1 s). Run it with the
engine's interpreter, on the backend named by KERAS_BACKEND (tensorflow
unless set; on jax the threads are the process's CPU affinity, as the jax
engine sets them):

    ~/.local/share/nnbench/venvs/tensorflow/bin/python perf/peers/peer_keras.py --threads 2
    KERAS_BACKEND=jax ~/.local/share/nnbench/venvs/jax/bin/python \\
        perf/peers/peer_keras.py --threads 2
"""
import argparse
import os
import sys

import timing  # perf/peers/timing.py, beside this script

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

if os.environ["KERAS_BACKEND"] == "jax":
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) \
        if "--threads" in sys.argv else 2
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:threads])

# After the environment above: Keras picks its backend when it loads.
import numpy as np
import keras


def mlp():
    L = keras.layers
    return keras.Sequential([
        keras.Input((784,)),
        L.Dense(512, activation="relu"), L.Dropout(0.2),
        L.Dense(512, activation="relu"), L.Dropout(0.2),
        L.Dense(10)]), (784,)


def resnet56():
    L = keras.layers

    def conv_bn(x, planes, stride):
        x = L.Conv2D(planes, 3, stride, padding="same", use_bias=False)(x)
        return L.BatchNormalization(epsilon=1e-5, momentum=0.9)(x)

    inputs = keras.Input((32, 32, 3))
    x = L.ReLU()(conv_bn(inputs, 16, 1))
    cin = 16
    for stage in range(3):
        planes = 16 << stage
        for i in range(9):
            stride = 2 if stage and not i else 1
            y = conv_bn(L.ReLU()(conv_bn(x, planes, stride)), planes, 1)
            if stride != 1 or cin != planes:
                # Option A: subsample, then zero-pad the new channels.
                x = L.Lambda(lambda t, s=stride, p=planes - cin: keras.ops.pad(
                    t[:, ::s, ::s, :], [[0, 0], [0, 0], [0, 0], [0, p]]))(x)
            x = L.ReLU()(L.Add()([y, x]))
            cin = planes
    x = L.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, L.Dense(10)(x)), (32, 32, 3)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", choices=["mlp", "resnet56"], default="mlp")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--jit-compile", choices=["auto", "true", "false"],
                   default="auto",
                   help="model.compile's jit_compile (Keras's default: auto, "
                        "XLA where the model supports it)")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--min-time", type=float, default=2.0)
    p.add_argument("--min-iters", type=int, default=10)
    a = p.parse_args()
    backend = os.environ["KERAS_BACKEND"]
    if backend == "tensorflow":
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(a.threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        version = f"tensorflow {tf.__version__}"
    else:
        import jax
        version = f"jax {jax.__version__}"
    keras.utils.set_random_seed(1)
    model, sample = mlp() if a.model == "mlp" else resnet56()
    jit = {"auto": "auto", "true": True, "false": False}[a.jit_compile]
    model.compile(jit_compile=jit,
                  optimizer=keras.optimizers.SGD(0.01, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((a.batch, *sample), dtype=np.float32)
          for _ in range(4)]
    ys = [rng.integers(0, 10, a.batch) for _ in range(4)]

    def step(i):
        return model.train_on_batch(xs[i % 4], ys[i % 4])

    samples = timing.time_steps(step, a.min_iters, a.min_time)
    print(f"keras {keras.__version__} {version} {a.model} train "
          f"(jit_compile {a.jit_compile}: XLA {model.jit_compile}) "
          f"batch {a.batch}, {a.threads} threads: {timing.summary(samples)}")


if __name__ == "__main__":
    main()
