#!/usr/bin/env python3
"""Writes small safetensors files for parc-run tests, with numpy only.

usage: make_safetensors.py OUT NAME=DTYPE:SHAPE:VALUE [...] [--truncate N]
  SHAPE is like 2x3 (empty for a scalar); every element gets VALUE.
  --truncate N drops the last N bytes of the file.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", ".."))
import safetensors_file  # noqa: E402

out = sys.argv[1]
truncate = 0
args = sys.argv[2:]
if "--truncate" in args:
    i = args.index("--truncate")
    truncate = int(args[i + 1])
    del args[i:i + 2]
tensors = {}
for spec in args:
    name, rest = spec.split("=", 1)
    dtype, shape, value = rest.split(":")
    dims = [int(d) for d in shape.split("x")] if shape else []
    tensors[name] = np.full(dims, float(value)).astype(
        safetensors_file.DTYPES[dtype])
content = safetensors_file.encode(tensors)
with open(out, "wb") as f:
    f.write(content[:len(content) - truncate])
