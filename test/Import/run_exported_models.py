#!/usr/bin/env python3
"""Imports every model of Inputs/transformers (exported by
export_transformers.py from Hugging Face transformers and torch.nn, with
both torch exporters), evaluates it with parc's reference evaluator on the
recorded inputs, and compares with the framework's recorded outputs
(relative 1e-4); then does the same with the batch split over dp = 2
(simulated ranks). Where an export computes something else than the
framework by ONNX's semantics (record_onnx_outputs.py wrote
<export>.onnx-outputs.safetensors: the dynamo exporter's masked attention
at fully padded queries), the outputs must equal those everywhere and the
framework's at the positions the attention_mask keeps. Prints one line per
model:

  <model>-<variant>-<exporter>: ok, <n> attention, dp=2 ok
  <model>-<variant>-<exporter>: ok (ONNX semantics; the framework's at
      unpadded positions), <n> attention, dp=2 ok
  <model>-<variant>-<exporter>: unsupported: <the importer's reason>

and exits 1 on a wrong result or a tool that fails other than with the
importer's located error.

usage: run_exported_models.py --translate PARC_TRANSLATE --opt PARC_OPT
                              --run PARC_RUN
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "Inputs", "transformers")
COMPARE = os.path.join(HERE, "..", "compare-tensors.py")
sys.path.insert(0, os.path.join(HERE, ".."))
import safetensors_file  # noqa: E402


def run(command):
    return subprocess.run(command, capture_output=True, text=True)


def check(command, what):
    result = run(command)
    if result.returncode != 0:
        raise RuntimeError(f"{what} exited {result.returncode}: "
                           f"{(result.stderr or result.stdout).strip()}")
    return result.stdout


def compare(expected, actual, what):
    check([sys.executable, COMPARE, expected, actual, "--rtol", "1e-4"],
          what)


def compare_unpadded(expected, actual, inputs, what):
    """The outputs at the (batch, position)s whose attention_mask is 1."""
    kept = safetensors_file.read(inputs)["attention_mask"] != 0
    a = safetensors_file.read(expected)["output"][kept].astype(np.float64)
    b = safetensors_file.read(actual)["output"][kept].astype(np.float64)
    error = np.abs(a - b).max() / max(np.abs(a).max(), 1e-30)
    if not error <= 1e-4:
        raise RuntimeError(f"{what}: relative error {error:.3g} at unpadded "
                           f"positions exceeds 0.0001")


def main():
    parser = argparse.ArgumentParser()
    for tool in ("translate", "opt", "run"):
        parser.add_argument("--" + tool, required=True)
    tools = parser.parse_args()
    failed = False
    work = tempfile.mkdtemp()
    for model in sorted(glob.glob(os.path.join(INPUTS, "*.onnx"))):
        stem = os.path.basename(model)[:-len(".onnx")]
        data = os.path.join(INPUTS, stem.rsplit("-", 1)[0])
        mlir = os.path.join(work, stem + ".mlir")
        weights = mlir + ".weights"
        imported = run([tools.translate, "--import-onnx", model, "-o", mlir,
                        "--weights-out", weights])
        if imported.returncode == 1:
            message = imported.stderr.strip().splitlines()[0]
            message = re.sub(r"^.*?error: ", "", message)
            message = re.sub(r"; supported ops.*", "", message)
            print(f"{stem}: unsupported: {message}")
            if os.path.exists(mlir):
                print(f"{stem}: FAIL: an output file after an error")
                failed = True
            continue
        try:
            if imported.returncode != 0:
                raise RuntimeError(f"parc-translate exited "
                                   f"{imported.returncode}: {imported.stderr}")
            with open(mlir) as f:
                attention = f.read().count("parc.attention ")
            out = os.path.join(work, stem + ".out")
            check([tools.run, "--reference", mlir, "--weights", weights,
                   "--inputs", data + ".inputs.safetensors", "--out", out],
                  "parc-run")
            semantics = model + "-outputs.safetensors"
            if os.path.exists(semantics):
                expected = semantics
                compare_unpadded(data + ".outputs.safetensors", out,
                                 data + ".inputs.safetensors", "serial")
                kind = "ok (ONNX semantics; the framework's at unpadded " \
                       "positions)"
            else:
                expected, kind = data + ".outputs.safetensors", "ok"
            compare(expected, out, "serial")
            plan = os.path.join(work, "dp2.json")
            batch = {name: [["dp"], []]
                     for name in safetensors_file.read(
                         data + ".inputs.safetensors")}
            with open(plan, "w") as f:
                json.dump({"mesh": {"dp": 2}, "shardings": batch}, f)
            part = os.path.join(work, stem + ".dp2.mlir")
            check([tools.opt, mlir, f"--parc-apply-plan=plan={plan}",
                   "--parc-propagate-sharding", "--parc-partition", "-o",
                   part], "parc-opt")
            check([tools.run, "--reference", "--simulate-ranks", part,
                   "--weights", weights, "--inputs",
                   data + ".inputs.safetensors", "--out", out + ".dp2"],
                  "parc-run --simulate-ranks")
            compare(expected, out + ".dp2", "dp=2")
            print(f"{stem}: {kind}, {attention} attention, dp=2 ok")
        except RuntimeError as error:
            print(f"{stem}: FAIL: {error}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
