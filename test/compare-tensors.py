#!/usr/bin/env python3
"""Compares the tensors of two safetensors files (the serial reference and a
partitioned or compiled run) and fails on any relative error above the
tolerance: max|a - b| / max(max|a|, tiny) per tensor.

usage: compare-tensors.py REFERENCE CANDIDATE [--rtol 1e-5]
"""
import json
import struct
import sys

import numpy as np

DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16,
          "I64": np.int64, "I32": np.int32}


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[8 + length + begin:8 + length + end]
        tensors[name] = np.frombuffer(raw, DTYPES[info["dtype"]]).astype(
            np.float64).reshape(info["shape"])
    return tensors


reference, candidate = read(sys.argv[1]), read(sys.argv[2])
rtol = float(sys.argv[sys.argv.index("--rtol") + 1]) if "--rtol" in sys.argv else 1e-5
if sorted(reference) != sorted(candidate):
    sys.exit(f"tensor names differ: {sorted(reference)} vs {sorted(candidate)}")
worst = 0.0
for name in sorted(reference):
    a, b = reference[name], candidate[name]
    if a.shape != b.shape:
        sys.exit(f"'{name}': shape {a.shape} vs {b.shape}")
    scale = max(np.abs(a).max(initial=0.0), 1e-30)
    error = np.abs(a - b).max(initial=0.0) / scale
    worst = max(worst, error)
    print(f"{name}: relative error {error:.3g}")
if worst > rtol:
    sys.exit(f"relative error {worst:.3g} exceeds {rtol:g}")
print(f"all within {rtol:g}")
