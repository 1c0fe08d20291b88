#!/usr/bin/python3
"""Python peer for nnbench's Fashion-MNIST time-to-accuracy task.

A straightforward PyTorch script: the official PyTorch MNIST example
(examples/mnist/main.py: two convs, dropout, Adadelta lr 1.0 with StepLR
gamma 0.7, batch 64) pointed at the Fashion-MNIST files of the Debian
package, evaluating on the full test set after every epoch and stopping at
the target. Training time excludes evaluation, as nnbench's DAWNBench rule
does. With --recipe nnbench it runs nnbench's own fashion-mnist-92 recipe
instead (fmnist-cnn, batch 128 without the short last batch, SGD momentum
0.9 Nesterov weight decay 5e-4, one-cycle peak 0.05 over 6 epochs set every
step), so that the engine is compared on the same work. Run with Debian's
interpreter (python3-torch):

    /usr/bin/python3 perf/peers/peer_fashion_mnist.py --threads 2 --target 0.92
    /usr/bin/python3 perf/peers/peer_fashion_mnist.py --recipe nnbench --seed 2
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


class FmnistCnn(nn.Module):  # nnbench's fmnist-cnn (src/model/zoo/recipes.cpp)
    def __init__(self):
        super().__init__()
        def block(cin, cout):
            return [nn.Conv2d(cin, cout, 3, 1, 1, bias=False),
                    nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]
        self.body = nn.Sequential(*block(1, 32), *block(32, 64), nn.Flatten(),
                                  nn.Linear(3136, 128), nn.ReLU(),
                                  nn.Dropout(0.25), nn.Linear(128, 10))

    def forward(self, x):
        return self.body(x)


def one_cycle(t, peak=0.05, warmup=0.25, final=0.02):  # src/train/schedule.cpp
    low = peak * final
    if t < warmup:
        return low + (peak - low) * t / warmup
    return peak - (peak - low) * (t - warmup) / (1 - warmup)


def setup(a):
    """Model, optimizer, per-step learning-rate setter, batch, drop_last."""
    if a.recipe == "example":
        net = Net()
        opt = torch.optim.Adadelta(net.parameters(), lr=1.0)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
        return net, opt, (lambda e, f: None), sched, a.batch or 64, False
    net = FmnistCnn()
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9,
                          nesterov=True, weight_decay=5e-4)

    def set_lr(epoch, fraction):
        for g in opt.param_groups:
            g["lr"] = one_cycle(min((epoch + fraction) / a.schedule_epochs, 1))
    return net, opt, set_lr, None, a.batch or 128, True


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--target", type=float, default=0.92)
    p.add_argument("--epochs", type=int, default=0,
                   help="budget; default 14 (example), --schedule-epochs (nnbench)")
    p.add_argument("--batch", type=int, default=0,
                   help="default: 64 (example), 128 (nnbench)")
    p.add_argument("--recipe", choices=["example", "nnbench"], default="example")
    p.add_argument("--schedule-epochs", type=int, default=6,
                   help="nnbench recipe: epochs the one-cycle schedule spans")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    a.epochs = a.epochs or (14 if a.recipe == "example" else a.schedule_epochs)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    xtr, ytr = load("train")
    xte, yte = load("t10k")
    net, opt, set_lr, sched, batch, drop_last = setup(a)
    print(f"recipe {a.recipe}, batch {batch}, seed {a.seed}, "
          f"threads {torch.get_num_threads()}", flush=True)
    train_s = 0.0
    for epoch in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        net.train()
        batches = torch.randperm(len(xtr)).split(batch)
        if drop_last and len(batches[-1]) < batch:
            batches = batches[:-1]
        for n, idx_ in enumerate(batches):
            set_lr(epoch - 1, n / len(batches))
            opt.zero_grad()
            F.cross_entropy(net(xtr[idx_]), ytr[idx_]).backward()
            opt.step()
        if sched:
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
