#!/usr/bin/env python3
"""Writes the MLIR and ONNX seed corpora of fuzz/corpus/ from the tests.

  fuzz/make-corpus.py BUILD_DIR   (parc-model from BUILD_DIR/bin)

mlir/: every split (`// -----`) of the tests' .mlir files, and GPT-tiny
with plans appended after a `//--plan` line (MlirPassesFuzzer applies them);
onnx/: the importer tests' ONNX files. Files named finding-* (reproducers of
what the fuzzers found) stay.
"""
import pathlib
import shutil
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
build = pathlib.Path(sys.argv[1])
corpus = root / "fuzz" / "corpus"

def fresh(directory):
    """`directory` without its generated seeds."""
    directory.mkdir(parents=True, exist_ok=True)
    for path in directory.iterdir():
        if not path.name.startswith("finding-"):
            path.unlink()
    return directory


mlir = fresh(corpus / "mlir")
for path in sorted((root / "test").rglob("*.mlir")):
    name = "-".join(path.relative_to(root / "test").with_suffix("").parts)
    for k, part in enumerate(path.read_text().split("\n// -----\n")):
        (mlir / f"{name}-{k}.mlir").write_text(part)

gpt = subprocess.run([build / "bin" / "parc-model", "gpt-tiny", "--batch", "8"],
                     check=True, capture_output=True, text=True).stdout
(mlir / "gpt-tiny.mlir").write_text(gpt)
plans = [root / "test/Transforms/Inputs" / name for name in
         ["train-dp2-tp2-zero3.json", "recompute-selective.json"]]
plans += [root / "test/Transforms/pipeline/Inputs" / name for name in
          ["pp2-dp2-1f1b.json", "pp2-dp2-zero1-1f1b.json"]]
# The data-parallel synchronizations: local SGD, and a parameter server plan
# the reader accepts and ApplyPlan refuses.
plans += [root / "test/e2e/Inputs/local-sgd-dp2-every2.json",
          root / "test/Transforms/Inputs/parameter-server/too-many.json"]
for plan in plans:
    (mlir / f"gpt-tiny-{plan.stem}.mlir").write_text(
        gpt + "\n//--plan\n" + plan.read_text())

# Dedicated parameter servers cut a train step (MLP-tiny's, SGD with
# momentum) into workers and servers.
model = subprocess.run([build / "bin" / "parc-model", "mlp-tiny"], check=True,
                       capture_output=True, text=True).stdout
step = subprocess.run([build / "bin" / "parc-opt", "-",
                       "--parc-make-train-step=optimizer=sgd momentum=0.9"],
                      input=model, check=True, capture_output=True,
                      text=True).stdout
for plan in ["dedicated.json", "dedicated-tp.json"]:
    path = root / "test/Transforms/Inputs/parameter-server" / plan
    (mlir / f"mlp-tiny-step-{path.stem}.mlir").write_text(
        step + "\n//--plan\n" + path.read_text())

# Batch norms whose groups a dp plan sets (each rank's statistics), and a
# plan that asks for the whole batch's.
batch_norm = (root / "test/Transforms/lower-batch-norm.mlir").read_text()
for plan in ["dp2.json", "sync-dp2.json"]:
    path = root / "test/Transforms/Inputs/batch-norm" / plan
    (mlir / f"batch-norm-{path.stem}.mlir").write_text(
        batch_norm + "\n//--plan\n" + path.read_text())

onnx = fresh(corpus / "onnx")
for path in sorted((root / "test/Import/Inputs").rglob("*.onnx")):
    name = "-".join(path.relative_to(root / "test/Import/Inputs").parts)
    shutil.copy(path, onnx / name)

# A dictionary of the ops' names and the convention's words, so mutations
# build ops the verifiers know rather than random identifiers.
words = set()
for td in sorted((root / "dialects").rglob("*Ops.td")):
    dialect = td.parent.parent.name
    for line in td.read_text().splitlines():
        if line.startswith("def ") and 'Op<"' in line:
            mnemonic = line.split('Op<"')[1].split('"')[0]
            words.add(dialect + "." + mnemonic)
words |= {"func.func", "return", "tensor<", "xf32>", "xi64>", "xbf16>",
          "parc.role", "parc.name", "parc.init", "\\\"param\\\"",
          "\\\"input\\\"", "\\\"label\\\"", "\\\"optstate\\\"", "dist.sharding",
          "dist.mesh", "dist.partitioned", "dist.pipeline", "parc.phase",
          "dist.parameter_server", "dist.stage",
          "#dist.sharding<", "//--plan\\x0A"}
(root / "fuzz" / "mlir.dict").write_text(
    "".join(f'"{word}"\n' for word in sorted(words)))
