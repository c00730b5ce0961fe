#!/bin/sh
# Peak arena per stage under GPipe and 1F1B: GPT (4 layers, batch 16,
# seq 32, hidden 64) train step, pp = 2, 8 micro-batches. The compiler's
# static memory plan is exact (every tensor has its offset), so these are
# the bytes each stage's executable allocates, not an estimate.
#
#   bench/pipeline/memory.sh [build-dir]
set -eu
build=${1:-build}
out=$(mktemp -d)
"$build/bin/parc-model" gpt-tiny --layers 4 --batch 16 -o "$out/gpt.mlir"
"$build/bin/parc-opt" "$out/gpt.mlir" --parc-make-train-step="optimizer=adamw lr=0.01" -o "$out/step.mlir"
for schedule in gpipe 1f1b; do
  printf '{ "mesh": { "pp": 2 }, "pipeline": { "axis": "pp", "microbatches": 8, "schedule": "%s" } }\n' \
    "$schedule" > "$out/plan.json"
  echo "== $schedule"
  "$build/bin/parc-compile" "$out/step.mlir" --plan "$out/plan.json" -o "$out/$schedule" --emit mlir |
    grep -E '^stage|^schedule|^peak arena'
done
rm -rf "$out"
