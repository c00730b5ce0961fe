#!/usr/bin/env bash
# The planner's analytical peak memory per rank against parc-compile's
# static memory plan of the same train step (AdamW, f32), for GPT-tiny and a
# 4-layer GPT (hidden 256, 8 heads, seq 128, vocab 4096) at batch 8, on 1, 2
# and 4 ranks under dp and tp plans the planner writes (--fix pins the mesh),
# under ZeRO stages 1-3 where dp > 1, and with selective and full activation
# recomputation, and beside it the bytes each rank sends per step against
# the planner's prediction. DTYPE=bf16 plans bf16 mixed precision and
# compiles the bf16-mixed train step.
#
#   [DTYPE=bf16] bench/planner/memory-accuracy.sh [build-dir]
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/bin
dtype=${DTYPE:-f32}
precision=f32
[ "$dtype" = bf16 ] && precision=bf16-mixed
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/parc-model" gpt-tiny --batch 8 -o "$work/tiny.mlir"
"$bin/parc-model" gpt --layers 4 --hidden 256 --heads 8 --seq 128 --batch 8 \
  --vocab 4096 -o "$work/small.mlir"
printf '| model | dp | tp | zero | recompute | predicted bytes | compiled bytes | predicted / compiled | traffic compiled / predicted |\n|---|---|---|---|---|---|---|---|---|\n'
for model in tiny small; do
  "$bin/parc-opt" "$work/$model.mlir" --parc-make-train-step="precision=$precision" \
    -o "$work/$model.step.mlir"
  for mesh in "1 1" "2 1" "4 1" "1 2" "2 2" "1 4"; do
    set -- $mesh
    dp=$1 tp=$2
    variants="0:none 0:selective 0:full"
    [ "$dp" -gt 1 ] && variants="$variants 1:none 2:none 3:none"
    for variant in $variants; do
      zero=${variant%:*} recompute=${variant#*:}
      "$bin/parc-plan" "$work/$model.mlir" --cluster dgx-a100-80g \
        --gpus $((dp * tp)) --global-batch 8 --dtype "$dtype" \
        --fix "dp=$dp,tp=$tp,pp=1,zero=$zero,recompute=$recompute,sp=off,mb=$((8 / dp))" \
        -o "$work/plan.json" > /dev/null
      "$bin/parc-compile" "$work/$model.step.mlir" --plan "$work/plan.json" \
        -o "$work/out" --emit=mlir > "$work/summary.txt"
      python3 - "$work/plan.json" "$work/summary.txt" "$model" "$dp" "$tp" "$zero" "$recompute" <<'PY'
import json, re, sys
predicted = json.load(open(sys.argv[1]))["predicted"]["peak_memory_bytes_per_rank"]
summary = open(sys.argv[2]).read()
compiled = int(re.search(r"peak arena bytes per rank: (\d+)", summary).group(1))
traffic = re.search(r"traffic per rank per step: .*compiled / predicted ([0-9.]+)\)", summary)
model, dp, tp, zero, recompute = sys.argv[3:8]
print(f"| {model} | {dp} | {tp} | {zero} | {recompute} | {predicted:.0f} | {compiled} | {predicted / compiled:.3f} | {traffic.group(1) if traffic else '-'} |")
PY
    done
  done
done
