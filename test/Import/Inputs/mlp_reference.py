#!/usr/bin/env python3
"""Writes the inputs and the expected logits of test/Import/Inputs/mlp.onnx,
computed with numpy from the model's own initializers (Gemm, Relu, Gemm).

usage: mlp_reference.py MODEL INPUTS_OUT EXPECTED_OUT
"""
import json
import struct
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def write(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        data = array.astype(np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


model = onnx.load(sys.argv[1])
w = {t.name: numpy_helper.to_array(t).astype(np.float64)
     for t in model.graph.initializer}
x = np.random.default_rng(5).normal(size=(4, 8))
hidden = np.maximum(x @ w["fc1.weight"].T + w["fc1.bias"], 0)
logits = hidden @ w["fc2.weight"].T + w["fc2.bias"]
write(sys.argv[2], {"x": x})
write(sys.argv[3], {"logits": logits})
