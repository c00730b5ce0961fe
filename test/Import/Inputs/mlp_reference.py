#!/usr/bin/env python3
"""Writes the inputs and the expected logits of test/Import/Inputs/mlp.onnx,
computed with numpy from the model's own initializers (Gemm, Relu, Gemm).

usage: mlp_reference.py MODEL INPUTS_OUT EXPECTED_OUT
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import safetensors_file  # noqa: E402


model = onnx.load(sys.argv[1])
w = {t.name: numpy_helper.to_array(t).astype(np.float64)
     for t in model.graph.initializer}
x = np.random.default_rng(5).normal(size=(4, 8))
hidden = np.maximum(x @ w["fc1.weight"].T + w["fc1.bias"], 0)
logits = hidden @ w["fc2.weight"].T + w["fc2.bias"]
safetensors_file.write(sys.argv[2], {"x": x.astype(np.float32)})
safetensors_file.write(sys.argv[3], {"logits": logits.astype(np.float32)})
