#!/usr/bin/env python3
"""Keras peer for nnbench's tensorflow and jax engines (docs/performance.md).

The Keras MNIST MLP of the CPU-vs-GPU study (784-512-512-10, dropout 0.2)
as a Keras user trains it: model.compile with SGD (momentum 0.9) and a
train_on_batch loop on synthetic data, each step timed (train_on_batch
returns the loss on the host), the same warm-up rule as nnbench (at least
5 steps and 1 s). Run it with the engine's interpreter, on the backend
named by KERAS_BACKEND (tensorflow unless set; on jax the threads are the
process's CPU affinity, as the jax engine sets them):

    ~/.local/share/nnbench/venvs/tensorflow/bin/python perf/peer_keras.py --threads 2
    KERAS_BACKEND=jax ~/.local/share/nnbench/venvs/jax/bin/python perf/peer_keras.py --threads 2
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import sys  # noqa: E402

if os.environ["KERAS_BACKEND"] == "jax":
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) \
        if "--threads" in sys.argv else 2
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:threads])

import numpy as np  # noqa: E402
import keras  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--threads", type=int, default=2)
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
    model = keras.Sequential([
        keras.Input((784,)),
        keras.layers.Dense(512, activation="relu"), keras.layers.Dropout(0.2),
        keras.layers.Dense(512, activation="relu"), keras.layers.Dropout(0.2),
        keras.layers.Dense(10)])
    model.compile(optimizer=keras.optimizers.SGD(0.01, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((a.batch, 784), dtype=np.float32) for _ in range(4)]
    ys = [rng.integers(0, 10, a.batch) for _ in range(4)]
    i, t0 = 0, time.perf_counter()
    while i < 5 or time.perf_counter() - t0 < 1.0:
        model.train_on_batch(xs[i % 4], ys[i % 4])
        i += 1
    samples, t0 = [], time.perf_counter()
    while len(samples) < a.min_iters or time.perf_counter() - t0 < a.min_time:
        t = time.perf_counter()
        model.train_on_batch(xs[i % 4], ys[i % 4])
        samples.append(time.perf_counter() - t)
        i += 1
    print(f"keras {keras.__version__} {version} mlp train "
          f"batch {a.batch}, {a.threads} threads: median "
          f"{statistics.median(samples) * 1e3:.3f} ms over {len(samples)} steps")


if __name__ == "__main__":
    main()
