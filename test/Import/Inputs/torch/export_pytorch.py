#!/usr/bin/env python3
"""Exports the PyTorch fixtures of the ONNX import tests. Tests never run
this; it needs PyTorch and a recent onnx (pip install torch onnx), and writes
next to itself, for each stem named (all when none is):

  export_pytorch.py [mlp] [gpt-block] [cnn]

  STEM.onnx, STEM.inputs.safetensors, STEM.outputs.safetensors

The models are exported with opset 17 and saved with IR version 8 so that
Debian's libonnx 1.12 reads them; the outputs are PyTorch's own, recorded at
export time.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import onnx
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        dtype = {np.float32: "F32", np.int64: "I64"}[array.dtype.type]
        data = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def export(model, inputs, input_names, output_names, stem):
    if len(sys.argv) > 1 and stem not in sys.argv[1:]:
        return
    model.eval()
    path = os.path.join(HERE, stem + ".onnx")
    torch.onnx.export(model, inputs, path, opset_version=17,
                      input_names=input_names, output_names=output_names,
                      do_constant_folding=True, dynamo=False)
    proto = onnx.load(path)
    proto.ir_version = 8
    onnx.checker.check_model(proto)
    onnx.save(proto, path)
    with torch.no_grad():
        outputs = model(*inputs)
    if not isinstance(outputs, tuple):
        outputs = (outputs,)
    write_safetensors(os.path.join(HERE, stem + ".inputs.safetensors"),
                      {n: t.numpy() for n, t in zip(input_names, inputs)})
    write_safetensors(os.path.join(HERE, stem + ".outputs.safetensors"),
                      {n: t.numpy() for n, t in zip(output_names, outputs)})


# An MLP: Linear, GELU (exported unfused, erf form), Linear.
mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
export(mlp, (torch.randn(8, 16),), ["x"], ["logits"], "mlp")


class Conv1D(nn.Module):
    """GPT-2's linear layer: x @ weight[in, out] + bias."""

    def __init__(self, inputs, outputs):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(inputs, outputs) * 0.2)
        self.bias = nn.Parameter(torch.randn(outputs) * 0.1)

    def forward(self, x):
        return x @ self.weight + self.bias


class Block(nn.Module):
    """One GPT-2 block with embeddings, final layer norm and the tied LM
    head. Shapes are Python constants so that the export has no Shape ops."""

    def __init__(self, vocab=50, seq=8, hidden=32, heads=4, batch=2):
        super().__init__()
        self.batch, self.seq, self.hidden, self.heads = batch, seq, hidden, heads
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Parameter(torch.randn(seq, hidden) * 0.1)
        self.ln_1 = nn.LayerNorm(hidden)
        self.c_attn = Conv1D(hidden, 3 * hidden)
        self.c_proj = Conv1D(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden)
        self.c_fc = Conv1D(hidden, 4 * hidden)
        self.mlp_proj = Conv1D(4 * hidden, hidden)
        self.ln_f = nn.LayerNorm(hidden)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).bool())

    def heads_of(self, x):
        b, t, d = self.batch, self.seq, self.hidden // self.heads
        return x.reshape(b, t, self.heads, d).transpose(1, 2)

    def forward(self, ids):
        b, t, h = self.batch, self.seq, self.hidden
        x = self.wte(ids) + self.wpe
        q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=2)
        q, k, v = self.heads_of(q), self.heads_of(k), self.heads_of(v)
        scores = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads)
        scores = torch.where(self.mask, scores, torch.tensor(-1e9))
        context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, h)
        x = x + self.c_proj(context)
        x = x + self.mlp_proj(nn.functional.gelu(self.c_fc(self.ln_2(x))))
        return self.ln_f(x) @ self.wte.weight.t()


block = Block()
export(block, (torch.randint(0, 50, (2, 8)),), ["input_ids"], ["logits"],
       "gpt-block")


class SmallCnn(nn.Module):
    """Conv, BatchNorm, ReLU, the three poolings and Linear. The first batch
    norm follows its convolution, which the exporter folds into the Conv's
    weight and bias; the second follows a ReLU and stays a
    BatchNormalization node. Running statistics are random so that neither
    is the identity."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 10)
        for bn in (self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.2, 0.2)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = self.bn2(torch.relu(self.conv2(x)))
        x = nn.functional.avg_pool2d(x, 3, stride=1, padding=1)
        x = nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


export(SmallCnn(), (torch.randn(4, 3, 16, 16),), ["images"], ["logits"], "cnn")
