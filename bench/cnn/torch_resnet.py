"""ResNet-18 in torchvision's layout (7x7 stem, max pool, four stages of two
basic blocks, global average pool, linear) in PyTorch eager, written out so
that the bench needs no torchvision. Times a train step (forward, cross
entropy, backward, SGD with momentum; batch norm in training mode, as
parc-model resnet18's train step) and prints `step time: S s` (mean of the
steps after the first), as parc's launcher does.

  python torch_resnet.py --threads T [--steps N] [--image 32] [--classes 10]
      [--batch 16]
"""
import argparse
import time

import torch
import torch.nn.functional as F
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, inputs, outputs, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.downsample = None
        if stride != 1 or inputs != outputs:
            self.downsample = nn.Sequential(
                nn.Conv2d(inputs, outputs, 1, stride, bias=False),
                nn.BatchNorm2d(outputs))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet18(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        layers, inputs = [], 64
        for outputs, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers.append(nn.Sequential(BasicBlock(inputs, outputs, stride),
                                        BasicBlock(outputs, outputs, 1)))
            inputs = outputs
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = F.adaptive_avg_pool2d(self.layers(x), 1).flatten(1)
        return self.fc(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--image", type=int, default=32)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--batch", type=int, default=16)
    a = parser.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = ResNet18(a.classes).train()
    assert sum(p.numel() for p in model.parameters()) == (
        11689512 if a.classes == 1000 else 11689512 - 513 * 990)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(a.batch, 3, a.image, a.image)
    labels = torch.randint(0, a.classes, (a.batch,))
    times = []
    for _ in range(a.steps):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(images), labels).backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    rest = times[1:] or times
    print(f"step time: {sum(rest) / len(rest):.6f} s")


if __name__ == "__main__":
    main()
