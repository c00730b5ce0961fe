#!/usr/bin/env python3
"""Writes a safetensors file of random float32 tensors.

usage: random_weights.py OUT SEED NAME=D0xD1x...[:nan] [...]

With ":nan" the tensor's first element is NaN.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import safetensors_file  # noqa: E402

out, seed = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(seed)
tensors = {}
for spec in sys.argv[3:]:
    name, shape = spec.split("=")
    shape, _, special = shape.partition(":")
    dims = [int(d) for d in shape.split("x")]
    tensors[name] = (rng.standard_normal(dims) * 0.1).astype(np.float32)
    if special == "nan":
        tensors[name].flat[0] = np.nan
safetensors_file.write(out, tensors)
