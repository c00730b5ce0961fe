#!/usr/bin/env bash
# The planner's predictions against what parc-compile builds, on a GPT wide
# enough that layouts and micro-batching matter (2 layers, hidden 1024, 16
# heads, seq 256, vocab 8192, global batch 64, AdamW; the model of
# test/tools/parc-plan/data-parallel-sync.test): tensor parallelism with
# and without gradient accumulation, dp x tp with each data-parallel
# synchronization, ZeRO with gradient accumulation, ZB-H1 and 1F1B
# pipelines, f32 and bf16. For each plan
# parc-plan writes with --fix on dgx-a100-80g: the compiled arena of the
# stage that needs the most memory against the predicted peak, and the
# compiled traffic of the stage that sends the most against the predicted
# bytes per rank.
#
#   bench/planner/wide-gpt-accuracy.sh [build-dir]
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/parc-model" gpt --layers 2 --hidden 1024 --heads 16 --seq 256 \
  --batch 64 --vocab 8192 -o "$work/model.mlir"
"$bin/parc-opt" "$work/model.mlir" --parc-make-train-step -o "$work/f32.mlir"
"$bin/parc-opt" "$work/model.mlir" \
  --parc-make-train-step=precision=bf16-mixed -o "$work/bf16.mlir"
printf '| dtype | gpus | plan | compiled / predicted memory | compiled / predicted traffic |\n|---|---|---|---|---|\n'
base="zero=0,recompute=none,sp=off"
while read -r dtype gpus fix; do
  if ! "$bin/parc-plan" "$work/model.mlir" --cluster dgx-a100-80g \
      --gpus "$gpus" --global-batch 64 --dtype "$dtype" --fix "$fix" \
      -o "$work/plan.json" > /dev/null 2>&1; then
    echo "| $dtype | $gpus | $fix | no plan | |"
    continue
  fi
  "$bin/parc-compile" "$work/$dtype.mlir" --plan "$work/plan.json" \
    -o "$work/out" --emit=mlir > "$work/summary.txt"
  ratio() {
    grep "$1" "$work/summary.txt" | grep -o 'compiled / predicted [0-9.]*' |
      sed 's/.* //'
  }
  echo "| $dtype | $gpus | $fix | $(ratio 'peak arena') | $(ratio 'traffic per') |"
done <<PLANS
f32 8 dp=1,tp=8,pp=1,mb=1,$base
f32 8 dp=1,tp=8,pp=1,mb=8,$base
f32 8 dp=1,tp=8,pp=1,mb=64,$base
f32 8 dp=1,tp=8,pp=1,mb=8,zero=0,recompute=full,sp=off
f32 8 dp=2,tp=4,pp=1,mb=4,$base
f32 64 dp=8,tp=8,pp=1,mb=1,$base,sync=allreduce
f32 64 dp=8,tp=8,pp=1,mb=1,$base,sync=parameter-server,placement=colocated,servers=8
f32 64 dp=8,tp=8,pp=1,mb=8,$base,sync=parameter-server,placement=dedicated,servers=8
f32 2 dp=1,tp=1,pp=2,mb=8,$base,schedule=1f1b
f32 2 dp=1,tp=1,pp=2,mb=8,$base,schedule=zb-h1
f32 8 dp=1,tp=4,pp=2,mb=8,$base,schedule=zb-h1
f32 4 dp=2,tp=1,pp=2,mb=4,$base,schedule=zb-h1
f32 2 dp=2,tp=1,pp=1,mb=8,zero=1,recompute=none,sp=off
f32 2 dp=2,tp=1,pp=1,mb=8,zero=2,recompute=none,sp=off
f32 2 dp=2,tp=1,pp=1,mb=8,zero=3,recompute=none,sp=off
f32 4 dp=2,tp=1,pp=2,mb=8,zero=2,recompute=none,sp=off,schedule=1f1b
f32 4 dp=2,tp=1,pp=2,mb=8,zero=3,recompute=none,sp=off,schedule=1f1b
f32 4 dp=2,tp=1,pp=2,mb=8,zero=3,recompute=none,sp=off,schedule=zb-h1
f32 8 dp=2,tp=4,pp=1,mb=8,zero=3,recompute=none,sp=off
bf16 8 dp=2,tp=4,pp=1,mb=1,zero=3,recompute=none,sp=off
bf16 8 dp=1,tp=8,pp=1,mb=1,$base
bf16 8 dp=1,tp=8,pp=1,mb=8,$base
bf16 8 dp=1,tp=8,pp=1,mb=64,$base
bf16 8 dp=2,tp=4,pp=1,mb=4,$base
bf16 64 dp=8,tp=8,pp=1,mb=1,$base,sync=allreduce
PLANS
