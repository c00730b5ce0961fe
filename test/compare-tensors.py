#!/usr/bin/env python3
"""Compares the tensors of two safetensors files (the serial reference and a
partitioned or compiled run) and fails on any relative error above the
tolerance: max|a - b| / max(max|a|, tiny) per tensor. NaN anywhere fails;
infinities must match exactly.

usage: compare-tensors.py REFERENCE CANDIDATE [--rtol 1e-5] [--reference-names]
                          [--same-elements]

--reference-names: the candidate may hold more tensors than the reference
(a train step's optimizer state beside a framework's weights); those are
not compared.
--same-elements: tensors may differ in shape where they hold as many
elements, compared in row-major order (one model's [3, h, 1, d] bias is
another's [3, h, d]).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_file  # noqa: E402


def read(path):
    return {name: array.astype(np.float64)
            for name, array in safetensors_file.read(path).items()}


reference, candidate = read(sys.argv[1]), read(sys.argv[2])
rtol = float(sys.argv[sys.argv.index("--rtol") + 1]) if "--rtol" in sys.argv else 1e-5
if "--reference-names" in sys.argv:
    missing = sorted(set(reference) - set(candidate))
    if missing:
        sys.exit(f"tensors missing from {sys.argv[2]}: {missing}")
    candidate = {name: candidate[name] for name in reference}
if sorted(reference) != sorted(candidate):
    sys.exit(f"tensor names differ: {sorted(reference)} vs {sorted(candidate)}")
worst = 0.0
for name in sorted(reference):
    a, b = reference[name], candidate[name]
    if "--same-elements" in sys.argv and a.size == b.size:
        a, b = a.reshape(-1), b.reshape(-1)
    if a.shape != b.shape:
        sys.exit(f"'{name}': shape {a.shape} vs {b.shape}")
    # NaN compares unequal to everything (a NaN in either file fails, even
    # where both hold one: no reference is NaN on purpose).
    if not (np.isfinite(a) == np.isfinite(b)).all() or np.isnan(a).any():
        sys.exit(f"'{name}': non-finite values differ or are NaN")
    finite = np.isfinite(a)
    if not (a[~finite] == b[~finite]).all():
        sys.exit(f"'{name}': infinities differ")
    a, b = np.where(finite, a, 0.0), np.where(finite, b, 0.0)
    scale = max(np.abs(a).max(initial=0.0), 1e-30)
    error = np.abs(a - b).max(initial=0.0) / scale
    worst = max(worst, error)
    print(f"{name}: relative error {error:.3g}")
if worst > rtol:
    sys.exit(f"relative error {worst:.3g} exceeds {rtol:g}")
print(f"all within {rtol:g}")
