#!/usr/bin/env python3
"""Imports every model of Inputs/transformers (exported by
export_transformers.py from Hugging Face transformers and torch.nn, with
both torch exporters), evaluates it with parc's reference evaluator on the
recorded inputs, and compares with the framework's recorded outputs
(relative 1e-4); then does the same with the batch split over dp = 2
(simulated ranks). Prints one line per model:

  <model>-<variant>-<exporter>: ok, <n> attention, dp=2 ok
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

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "Inputs", "transformers")
COMPARE = os.path.join(HERE, "..", "compare-tensors.py")


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
            compare(data + ".outputs.safetensors", out, "serial")
            plan = os.path.join(work, "dp2.json")
            with open(plan, "w") as f:
                json.dump({"mesh": {"dp": 2}, "shardings": {
                    "input_ids": [["dp"], []]}}, f)
            part = os.path.join(work, stem + ".dp2.mlir")
            check([tools.opt, mlir, f"--parc-apply-plan=plan={plan}",
                   "--parc-propagate-sharding", "--parc-partition", "-o",
                   part], "parc-opt")
            check([tools.run, "--reference", "--simulate-ranks", part,
                   "--weights", weights, "--inputs",
                   data + ".inputs.safetensors", "--out", out + ".dp2"],
                  "parc-run --simulate-ranks")
            compare(data + ".outputs.safetensors", out + ".dp2", "dp=2")
            print(f"{stem}: ok, {attention} attention, dp=2 ok")
        except RuntimeError as error:
            print(f"{stem}: FAIL: {error}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
