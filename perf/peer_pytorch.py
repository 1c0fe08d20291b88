#!/usr/bin/python3
"""Python peer for nnbench's LibTorch backend (docs/performance.md).

The Keras MNIST MLP and CNN of the CPU-vs-GPU study, written in plain
PyTorch as a user would, trained on synthetic data with SGD (momentum 0.9),
timed per step with the same warm-up rule as nnbench (at least 5 steps and
1 s). Run it with Debian's interpreter, which has python3-torch:

    /usr/bin/python3 perf/peer_pytorch.py --model mlp --threads 2
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = (nn.Linear(784, 512), nn.Linear(512, 512),
                                        nn.Linear(512, 10))

    def forward(self, x):
        x = F.dropout(F.relu(self.fc1(x)), 0.2, self.training)
        x = F.dropout(F.relu(self.fc2(x)), 0.2, self.training)
        return self.fc3(x)


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 32, 3), nn.Conv2d(32, 64, 3)
        self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        x = F.dropout(F.max_pool2d(x, 2), 0.25, self.training).flatten(1)
        x = F.dropout(F.relu(self.fc1(x)), 0.5, self.training)
        return self.fc2(x)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--min-time", type=float, default=2.0)
    p.add_argument("--min-iters", type=int, default=10)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    net = Mlp() if a.model == "mlp" else Cnn()
    shape = (a.batch, 784) if a.model == "mlp" else (a.batch, 1, 28, 28)
    xs = [torch.randn(shape) for _ in range(4)]
    ys = [torch.randint(0, 10, (a.batch,)) for _ in range(4)]
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def step(i):
        opt.zero_grad()
        F.cross_entropy(net(xs[i % 4]), ys[i % 4]).backward()
        opt.step()

    i, t0 = 0, time.perf_counter()
    while i < 5 or time.perf_counter() - t0 < 1.0:
        step(i)
        i += 1
    samples, t0 = [], time.perf_counter()
    while len(samples) < a.min_iters or time.perf_counter() - t0 < a.min_time:
        t = time.perf_counter()
        step(i)
        samples.append(time.perf_counter() - t)
        i += 1
    print(f"pytorch {torch.__version__} {a.model} train batch {a.batch}, "
          f"{torch.get_num_threads()} threads: median "
          f"{statistics.median(samples) * 1e3:.3f} ms over {len(samples)} steps")


if __name__ == "__main__":
    main()
