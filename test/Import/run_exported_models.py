#!/usr/bin/env python3
"""Imports every model of Inputs/transformers (exported by
export_transformers.py from Hugging Face transformers and torch.nn, with
both torch exporters), evaluates it with parc's reference evaluator on the
recorded inputs, and compares with the framework's recorded outputs
(relative 1e-4); then does the same with the batch split over dp = 2 and
with Megatron's tensor parallelism over tp = 2 (a plan that addresses the
projections by module path), each on simulated ranks and compiled (mpirun),
counting the collectives of the tp partition. Where an export computes something else than the
framework by ONNX's semantics (record_onnx_outputs.py wrote
<export>.onnx-outputs.safetensors: the dynamo exporter's masked attention
at fully padded queries), the outputs must equal those everywhere and the
framework's at the positions the attention_mask keeps. Prints one line per
model:

  <model>-<variant>-<exporter>: ok, <n> attention, dp=2 ok, tp=2 ok
      (<n> all_reduce, <n> all_gather, <n> all_to_all; heads <H> -> <h>
      per rank)
  <model>-<variant>-<exporter>: ok (ONNX semantics; the framework's at
      unpadded positions), ...
  <model>-<variant>-<exporter>: unsupported: <the importer's reason>

and exits 1 on a wrong result or a tool that fails other than with the
importer's located error.

usage: run_exported_models.py --translate PARC_TRANSLATE --opt PARC_OPT
                              --run PARC_RUN --compile PARC_COMPILE
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


# Megatron's tensor parallelism by module path: column-parallel projections
# (weight [in, out] split by columns) feed the attention heads and the
# MLP's hidden layer; row-parallel ones (split by rows) sum their partial
# products; biases follow their layers. The fused q/k/v projections
# (GPT-2's c_attn, nn.MultiheadAttention's in_proj) are left to
# propagation: a split of their columns would not split heads.
COLUMN_PARALLEL = re.compile(
    r"(self_attn\.[qkv]_proj|mlp\.(gate|up)_proj|attention\.self\."
    r"(query|key|value)|intermediate\.dense|SelfAttention\.[qkv]|"
    r"DenseReluDense\.wi|mlp\.c_fc|linear1)\.weight$")
ROW_PARALLEL = re.compile(
    r"(self_attn\.o_proj|mlp\.down_proj|attention\.output\.dense|"
    r"layer\.\d+\.output\.dense|SelfAttention\.o|DenseReluDense\.wo|"
    r"attn\.c_proj|mlp\.c_proj|out_proj|linear2)\.weight$")


def read_text(path):
    with open(path) as f:
        return f.read()


def tensor_parallel_plan(text):
    """The plan splitting the parameters of the module `text` by the rules
    above; a weight that a matmul reads transposed (stored [out, in], as
    nn.MultiheadAttention keeps out_proj) splits the other dimension."""
    transposed = set(re.findall(r"parc.matmul [^,]+, (%arg\d+) transpose_rhs",
                                text))
    shardings = {}
    for argument, shape, name in re.findall(
            r"(%arg\d+): tensor<([0-9x]+)xf32> \{parc.name = \"([^\"]+)\", "
            r"parc.role = \"param\"", text):
        if shape.count("x") != 1:
            continue
        if COLUMN_PARALLEL.search(name):
            shardings[name] = [[], ["tp"]]
        elif ROW_PARALLEL.search(name):
            shardings[name] = [["tp"], []]
        else:
            continue
        if argument in transposed:
            shardings[name].reverse()
    return {"mesh": {"tp": 2}, "shardings": shardings}


def run_parallel(tools, mlir, weights, data, expected, work, label, plan):
    """Partitions `mlir` by `plan`, runs it on simulated ranks and compiled
    (mpirun), compares both with `expected`; returns the partitioned IR's
    path."""
    stem = os.path.join(work, os.path.basename(mlir) + "." + label)
    with open(stem + ".json", "w") as f:
        json.dump(plan, f)
    check([tools.opt, mlir, f"--parc-apply-plan=plan={stem}.json",
           "--parc-propagate-sharding", "--parc-partition", "-o",
           stem + ".mlir"], f"parc-opt ({label})")
    inputs = data + ".inputs.safetensors"
    check([tools.run, "--reference", "--simulate-ranks", stem + ".mlir",
           "--weights", weights, "--inputs", inputs, "--out",
           stem + ".simulated"], f"parc-run --simulate-ranks ({label})")
    compare(expected, stem + ".simulated", f"{label} simulated")
    check([tools.compile, mlir, "--plan", stem + ".json", "-o",
           stem + ".compiled"], f"parc-compile ({label})")
    check([os.path.join(stem + ".compiled", "launch.sh"), "--weights",
           weights, "--inputs", inputs, "--out", stem + ".out"],
          f"compiled ({label})")
    compare(expected, stem + ".out", f"{label} compiled")
    return stem + ".mlir"


def collective_counts(tools, partitioned):
    """How many collectives of each kind --parc-comm-report lists."""
    report = check([tools.opt, partitioned, "--parc-comm-report", "-o",
                    os.devnull], "parc-opt --parc-comm-report")
    return {kind: int(count) for kind, count in
            re.findall(r"^  (\w+): (\d+) collectives", report, re.M)}


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
    for tool in ("translate", "opt", "run", "compile"):
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
            module = read_text(mlir)
            attention = module.count("parc.attention ")
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
            batch = {name: [["dp"], []]
                     for name in safetensors_file.read(
                         data + ".inputs.safetensors")}
            run_parallel(tools, mlir, weights, data, expected, work,
                         "dp=2", {"mesh": {"dp": 2}, "shardings": batch})
            partitioned = run_parallel(tools, mlir, weights, data, expected,
                                       work, "tp=2",
                                       tensor_parallel_plan(module))
            counts = collective_counts(tools, partitioned)
            # The heads of the first attention (or, unfused, of its softmax).
            heads = [re.search(r"parc\.(?:attention [^:]*|softmax [^:]*axis "
                               r"= 3 ): tensor<\d+x(\d+)x", text).group(1)
                     for text in (module, read_text(partitioned))]
            collectives = ", ".join(
                f"{counts.get(op, 0)} {op}"
                for op in ("all_reduce", "all_gather", "all_to_all"))
            collectives += f"; heads {heads[0]} -> {heads[1]} per rank"
            print(f"{stem}: {kind}, {attention} attention, dp=2 ok, "
                  f"tp=2 ok ({collectives})")
        except RuntimeError as error:
            print(f"{stem}: FAIL: {error}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
