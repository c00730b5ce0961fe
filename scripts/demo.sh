#!/usr/bin/env bash
# The main job on a built-in default: generate GPT-tiny, verify it, print its
# size and cost, and evaluate its loss with the reference evaluator.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PARC_BUILD_DIR:-$root/build}
bin=$build/bin
model=${1:-gpt-tiny}

"$root/scripts/setup-deps.sh"
"$root/scripts/build.sh" parc-model parc-opt parc-run

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== parc-model $model -o model.mlir"
"$bin/parc-model" "$model" -o "$work/model.mlir"
echo "== parc-opt --parc-verify-model --parc-print-model-stats"
"$bin/parc-opt" "$work/model.mlir" --parc-verify-model \
  --parc-print-model-stats -o /dev/null
echo "== parc-run --reference (seed 0, f32)"
"$bin/parc-run" --reference "$work/model.mlir" --out "$work/results.safetensors"
echo "(expected at initialization: about ln(vocab))"
