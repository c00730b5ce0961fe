"""A one-off check, not a benchmark: parc-model vgg16's forward loss equals
torchvision's VGG-16 layout in PyTorch (written out here; eval mode, so
dropout is the identity) with the same weights, for 32 x 32 and 224 x 224
images. Needs PyTorch (the bench venv); writes /tmp/vgg.*.safetensors:

  IMAGE=32 ~/.cache/parc-bench-venv/bin/python bench/cnn/vgg16_vs_torch.py
  build/bin/parc-model vgg16 --image 32 --classes 10 --batch 2 -o /tmp/vgg.mlir
  build/bin/parc-run --reference /tmp/vgg.mlir --weights /tmp/vgg.w.safetensors \
      --inputs /tmp/vgg.in.safetensors
  # prints the loss torch printed (2026-12-04: 2.33398 at 32, 2.36826 at 224)
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../../test/Import/Inputs/torch"))
sys.argv = sys.argv[:1] + ["none"]  # export_pytorch exports nothing
from export_pytorch import write_safetensors  # noqa: E402

torch.manual_seed(0)
cfg = [64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0]
layers, c = [], 3
for v in cfg:
    if v == 0:
        layers.append(nn.MaxPool2d(2, 2))
    else:
        layers += [nn.Conv2d(c, v, 3, padding=1), nn.ReLU()]
        c = v


class Vgg(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(25088, 4096), nn.ReLU(), nn.Dropout(),
            nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(),
            nn.Linear(4096, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))



image = int(os.environ.get("IMAGE", "32"))
m = Vgg(10).eval()
for p in m.parameters():
    p.data.normal_(0, 0.02)
x = torch.randn(2, 3, image, image)
y = torch.tensor([3, 7])
with torch.no_grad():
    loss = F.cross_entropy(m(x), y)
write_safetensors("/tmp/vgg.w.safetensors", {k: v.numpy() for k, v in m.state_dict().items()})
write_safetensors("/tmp/vgg.in.safetensors", {"images": x.numpy(), "labels": y.numpy()})
write_safetensors("/tmp/vgg.out.safetensors", {"loss": loss.reshape(()).numpy()})
print("torch loss", loss.item())
