#!/usr/bin/python3
"""Python peer for nnbench's Fashion-MNIST time-to-accuracy task.

A straightforward PyTorch script: the official PyTorch MNIST example
(examples/mnist/main.py: two convs, dropout, Adadelta lr 1.0 with StepLR
gamma 0.7, batch 64) pointed at the Fashion-MNIST files of the Debian
package, evaluating on the full test set after every epoch and stopping at
the target. Training time excludes evaluation, as nnbench's DAWNBench rule
does. Run with Debian's interpreter (python3-torch):

    /usr/bin/python3 bench/peer_fashion_mnist.py --threads 2 --target 0.92
"""
import argparse
import gzip
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DIR = "/usr/share/datasets/fashion-mnist"


def idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def load(split):
    x = idx(f"{DIR}/{split}-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    y = idx(f"{DIR}/{split}-labels-idx1-ubyte.gz", 8)
    x = torch.from_numpy(x.astype(np.float32) / 255.0)
    return (x - 0.2860) / 0.3530, torch.from_numpy(y.astype(np.int64))


class Net(nn.Module):  # examples/mnist/main.py
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(self.dropout1(x), 1)
        x = self.dropout2(F.relu(self.fc1(x)))
        return self.fc2(x)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--target", type=float, default=0.92)
    p.add_argument("--epochs", type=int, default=14)
    p.add_argument("--batch", type=int, default=64)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    xtr, ytr = load("train")
    xte, yte = load("t10k")
    net = Net()
    opt = torch.optim.Adadelta(net.parameters(), lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    train_s = 0.0
    for epoch in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        net.train()
        for idx_ in torch.randperm(len(xtr)).split(a.batch):
            opt.zero_grad()
            F.cross_entropy(net(xtr[idx_]), ytr[idx_]).backward()
            opt.step()
        sched.step()
        train_s += time.perf_counter() - t0
        net.eval()
        with torch.no_grad():
            acc = sum((net(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                      for i in range(0, len(xte), 1000)) / len(xte)
        print(f"epoch {epoch}: train {train_s:.1f} s, test accuracy {acc:.4f}", flush=True)
        if acc >= a.target:
            print(f"reached {a.target} after {train_s:.1f} s of training")
            return
    print(f"not reached after {a.epochs} epochs ({train_s:.1f} s)")


if __name__ == "__main__":
    main()
