#!/usr/bin/env bash
# The main job on a built-in default: generate GPT-tiny, verify it, print its
# size and cost, evaluate its loss with the reference evaluator, then compile
# it for 4 ranks (data x tensor parallel) and run the executables with
# mpirun: the loss must equal the reference.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PARC_BUILD_DIR:-$root/build}
bin=$build/bin
model=${1:-gpt-tiny}

"$root/scripts/setup-deps.sh"
"$root/scripts/build.sh" parc-model parc-opt parc-run parc-compile

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Four ranks on any machine, as root too.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1

echo "== parc-model $model -o model.mlir"
"$bin/parc-model" "$model" -o "$work/model.mlir"
echo "== parc-opt --parc-verify-model --parc-print-model-stats"
"$bin/parc-opt" "$work/model.mlir" --parc-verify-model \
  --parc-print-model-stats -o /dev/null
echo "== parc-run --reference (seed 0, f32)"
"$bin/parc-run" --reference "$work/model.mlir" --out "$work/reference.safetensors"
echo "(expected at initialization: about ln(vocab))"

plan=$root/test/Transforms/sharding/Inputs/gpt-dp-tp.json
echo "== parc-compile --plan gpt-dp-tp.json (dp = 2 x tp = 2)"
"$bin/parc-compile" "$work/model.mlir" --plan "$plan" -o "$work/out"
echo "== out/launch.sh --steps 2"
"$work/out/launch.sh" --steps 2 --out "$work/compiled.safetensors"
echo "== compiled vs reference"
/usr/bin/python3 "$root/test/compare-tensors.py" \
  "$work/reference.safetensors" "$work/compiled.safetensors"
