#!/usr/bin/env python3
"""Records what each export computes by ONNX's own semantics, where that
differs from the framework's outputs.

The dynamo exporter decomposes scaled-dot-product attention with a boolean
mask as an additive mask of float32's lowest value, not -inf: a query that
sees only padding (left padding's first rows) then gets uniform weights
over every key, where eager PyTorch gives zeros. Such exports are correct
at every unpadded position and differ at the padded ones. This script runs
onnx's reference evaluator (onnx.reference, onnx >= 1.13; tests never run
this) on each export and the recorded inputs, and writes

  M-V-E.onnx-outputs.safetensors

for each export whose outputs differ from M-V.outputs.safetensors by more
than the tests' tolerance (relative 1e-4), so the tests can check the
import against the file's semantics everywhere and against the framework
at the positions that attend to something.
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
from safetensors_file import read, write  # noqa: E402


def main():
    for path in sorted(glob.glob(os.path.join(HERE, "*.onnx"))):
        stem = path[:-len(".onnx")]
        data = stem.rsplit("-", 1)[0]
        inputs = read(data + ".inputs.safetensors")
        expected = read(data + ".outputs.safetensors")["output"]
        (output,) = ReferenceEvaluator(onnx.load(path)).run(None, inputs)
        error = np.abs(output - expected).max() / np.abs(expected).max()
        name = os.path.basename(stem)
        target = stem + ".onnx-outputs.safetensors"
        if error <= 1e-4:
            print(f"{name}: the framework's outputs (rel {error:.1e})")
            if os.path.exists(target):
                os.remove(target)
            continue
        write(target, {"output": output.astype(np.float32)})
        print(f"{name}: differs from the framework by rel {error:.3g}; "
              f"wrote {os.path.basename(target)}")


if __name__ == "__main__":
    main()
