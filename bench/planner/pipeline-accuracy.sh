#!/usr/bin/env bash
# The planner's predictions for pipelined plans against what parc-compile
# builds from them: for the 4-layer GPT of memory-accuracy.sh (hidden 256,
# 8 heads, seq 128, vocab 4096, batch 8, AdamW, f32) under 1F1B, GPipe,
# interleaved 1F1B and ZB-H1 with and without recomputation, the heaviest stage's
# compiled arena against the predicted peak memory, and the busiest stage's
# bytes sent per step (sends included) against the predicted bytes per rank.
#
#   bench/planner/pipeline-accuracy.sh [build-dir]
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/parc-model" gpt --layers 4 --hidden 256 --heads 8 --seq 128 --batch 8 \
  --vocab 4096 -o "$work/model.mlir"
"$bin/parc-opt" "$work/model.mlir" --parc-make-train-step -o "$work/step.mlir"
printf '| plan | predicted bytes | compiled / predicted memory | compiled / predicted traffic |\n|---|---|---|---|\n'
# dp tp pp micro-batch schedule
for mesh in "1 1 2 2 1f1b" "1 2 2 2 1f1b" "2 1 2 2 1f1b" "1 1 4 2 1f1b" \
            "1 1 4 1 1f1b" "1 1 2 1 gpipe" "1 1 2 2 interleaved-1f1b" \
            "1 1 2 1 zb-h1" "1 2 2 1 zb-h1" "1 1 4 1 zb-h1"; do
  set -- $mesh
  dp=$1 tp=$2 pp=$3 mb=$4 schedule=$5
  for recompute in none selective full; do
    fix="dp=$dp,tp=$tp,pp=$pp,mb=$mb,schedule=$schedule,zero=0,recompute=$recompute,sp=off"
    label="dp=$dp tp=$tp pp=$pp mb=$mb $schedule recompute=$recompute"
    if ! "$bin/parc-plan" "$work/model.mlir" --cluster dgx-a100-80g \
        --gpus $((dp * tp * pp)) --global-batch 8 --dtype f32 --fix "$fix" \
        -o "$work/plan.json" > "$work/plan.txt" 2>&1; then
      echo "| $label | refused: $(grep -m1 -o 'parc-compile refuses it: .\{0,60\}' "$work/plan.txt" || echo 'no plan') | | |"
      continue
    fi
    "$bin/parc-compile" "$work/step.mlir" --plan "$work/plan.json" \
      -o "$work/out" --emit=mlir > "$work/summary.txt"
    python3 - "$work/plan.json" "$work/summary.txt" "$label" <<'PY'
import json, re, sys
predicted = json.load(open(sys.argv[1]))["predicted"]["peak_memory_bytes_per_rank"]
summary = open(sys.argv[2]).read()
# The stage with the most memory and the one that sends the most carry the
# prediction beside their figures.
def ratio(line):
    found = re.search(line + r".*compiled / predicted ([0-9.]+)\)", summary)
    return found.group(1) if found else "-"
memory, traffic = ratio("peak arena bytes per rank"), ratio("traffic per rank per step")
print(f"| {sys.argv[3]} | {predicted:.0f} | {memory} | {traffic} |")
PY
  done
done
