#!/usr/bin/python3
"""Python peer for nnbench's LibTorch backend (docs/performance.md).

The Keras MNIST MLP and CNN of the CPU-vs-GPU study and DLBench's CIFAR-10
ResNet-56 (option A shortcuts), written in plain PyTorch as a user would,
trained on synthetic data with SGD (momentum 0.9), timed per step by the
peers' loop (timing.py: the same warm-up rule as nnbench, at least 5 steps
and 1 s), each step ending with its loss read to the host (as nnbench's
worker does; on a GPU that is the step's synchronisation). Run it with
Debian's interpreter, which has python3-torch:

    /usr/bin/python3 perf/peers/peer_pytorch.py --model mlp --threads 2

On a GPU (--device cuda), fp32 with TF32 off, as nnbench's pytorch engine.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

import timing  # perf/peers/timing.py, beside this script


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


class Block(nn.Module):
    """CIFAR basic block; option A shortcut: subsample, zero-pad channels."""

    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.stride, self.pad = stride, planes - cin

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        if self.stride != 1 or self.pad:
            x = F.pad(x[:, :, ::self.stride, ::self.stride],
                      (0, 0, 0, 0, 0, self.pad))
        return F.relu(y + x)


class ResNet56(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        blocks, cin = [], 16
        for stage in range(3):
            planes = 16 << stage
            for i in range(9):
                blocks.append(Block(cin, planes, 2 if stage and not i else 1))
                cin = planes
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = self.blocks(F.relu(self.bn1(self.conv1(x))))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


MODELS = {"mlp": (Mlp, (784,)), "cnn": (Cnn, (1, 28, 28)),
          "resnet56": (ResNet56, (3, 32, 32))}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", choices=sorted(MODELS), default="mlp")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--min-time", type=float, default=2.0)
    p.add_argument("--min-iters", type=int, default=10)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    dev = torch.device(a.device)
    if dev.type == "cuda":
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    make, sample = MODELS[a.model]
    net = make().to(dev)
    shape = (a.batch, *sample)
    xs = [torch.randn(shape).to(dev) for _ in range(4)]
    ys = [torch.randint(0, 10, (a.batch,)).to(dev) for _ in range(4)]
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def step(i):
        opt.zero_grad()
        loss = F.cross_entropy(net(xs[i % 4]), ys[i % 4])
        loss.backward()
        opt.step()
        return loss.item()

    samples = timing.time_steps(step, a.min_iters, a.min_time)
    print(f"pytorch {torch.__version__} {a.model} train batch {a.batch} on {dev}, "
          f"{torch.get_num_threads()} threads: {timing.summary(samples)}")


if __name__ == "__main__":
    main()
