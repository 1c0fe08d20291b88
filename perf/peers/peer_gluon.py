#!/usr/bin/env python3
"""Gluon peer for nnbench's mxnet engine (docs/performance.md).

The Keras MNIST MLP of the CPU-vs-GPU study (784-512-512-10, dropout 0.2),
or DLBench's CIFAR-10 ResNet-56 (option A shortcuts, NCHW), as a Gluon
user trains it: a hybridized HybridSequential, an
autograd.record loop with backward and Trainer.step (SGD, momentum 0.9),
each step timed until the loss is on the host, on synthetic data, by the
peers' loop (timing.py: the same warm-up rule as nnbench, at least 5 steps
and 1 s). Threads are OMP_NUM_THREADS, set before mxnet loads. Run it with
the mxnet engine's interpreter:

    ~/.local/share/nnbench/venvs/mxnet/bin/python perf/peers/peer_gluon.py --threads 2
"""
import argparse
import os
import sys

import timing  # perf/peers/timing.py, beside this script


def resnet56(nn):
    """CIFAR ResNet-56; option A shortcut: subsample, zero-pad channels.

    Written with the ops nnbench's engine uses (layers as direct children,
    F.Activation, the global pool as a mean): in one process, batch 128, 2
    threads, Gluon's GlobalAvgPool2D made a step 0.18 s slower (0.55
    against 0.36 s) and a nested HybridSequential body with nn.Activation
    blocks another 0.05 s; this loop measures the worker path, not those.
    """

    class Block(nn.HybridBlock):
        def __init__(self, cin, planes, stride):
            super().__init__()
            self.c1 = nn.Conv2D(planes, 3, stride, 1, use_bias=False,
                                in_channels=cin)
            self.b1 = nn.BatchNorm(in_channels=planes)
            self.c2 = nn.Conv2D(planes, 3, 1, 1, use_bias=False,
                                in_channels=planes)
            self.b2 = nn.BatchNorm(in_channels=planes)
            self.stride, self.pad = stride, planes - cin

        def hybrid_forward(self, F, x):
            y = F.Activation(self.b1(self.c1(x)), act_type="relu")
            y = self.b2(self.c2(y))
            if self.stride != 1 or self.pad:
                x = F.slice(x, begin=(None,) * 4, end=(None,) * 4,
                            step=(1, 1, self.stride, self.stride))
                x = F.concat(x, F.zeros_like(F.slice_axis(
                    x, axis=1, begin=0, end=self.pad)), dim=1)
            return F.Activation(y + x, act_type="relu")

    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 3, 1, 1, use_bias=False, in_channels=3),
            nn.BatchNorm(in_channels=16), nn.Activation("relu"))
    cin = 16
    for stage in range(3):
        planes = 16 << stage
        for i in range(9):
            net.add(Block(cin, planes, 2 if stage and not i else 1))
            cin = planes
    net.add(nn.HybridLambda(lambda F, x: F.mean(x, axis=(2, 3))),
            nn.Dense(10, in_units=64))
    return net


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", choices=["mlp", "resnet56"], default="mlp")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--min-time", type=float, default=2.0)
    p.add_argument("--min-iters", type=int, default=10)
    a = p.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    import numpy as np
    import mxnet as mx
    from mxnet import autograd, gluon
    from mxnet.gluon import nn

    mx.random.seed(1)
    if a.model == "mlp":
        net, sample = nn.HybridSequential(), (784,)
        net.add(nn.Dense(512, activation="relu"), nn.Dropout(0.2),
                nn.Dense(512, activation="relu"), nn.Dropout(0.2),
                nn.Dense(10))
    else:
        net, sample = resnet56(nn), (3, 32, 32)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.01, "momentum": 0.9})
    rng = np.random.default_rng(1)
    xs = [mx.nd.array(rng.standard_normal((a.batch, *sample),
                                          dtype=np.float32))
          for _ in range(4)]
    ys = [mx.nd.array(rng.integers(0, 10, a.batch)) for _ in range(4)]

    def step(i):
        with autograd.record():
            loss = loss_fn(net(xs[i % 4]), ys[i % 4]).mean()
        loss.backward()
        trainer.step(1)
        return loss.asscalar()

    samples = timing.time_steps(step, a.min_iters, a.min_time)
    print(f"gluon mxnet {mx.__version__} {a.model} train batch {a.batch}, "
          f"{a.threads} threads: {timing.summary(samples)}")


if __name__ == "__main__":
    sys.exit(main())
