#!/usr/bin/env bash
# Time of --parc-plan-memory (parc-opt --mlir-timing, the median of REPS
# runs) and the arena it plans, for GPT train steps of growing depth
# (gpt-tiny's shape, AdamW), with the default work budget of the offline
# placements, with best fit alone (greedy-work=0) and with no budget.
#
#   bench/memory-plan/scaling.sh [build-dir] [layers...]
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
shift || true
layers=${*:-24 48 96 192 384 768}
reps=${REPS:-3}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '| layers | ops | default (s) | arena | best fit alone (s) | arena | no budget (s) | arena |\n|---|---|---|---|---|---|---|---|\n'
for L in $layers; do
  "$bin/parc-model" gpt-tiny --layers "$L" -o "$work/model.mlir"
  "$bin/parc-opt" "$work/model.mlir" \
    --parc-make-train-step="optimizer=adamw lr=0.01" -o "$work/step.mlir"
  row="| $L | $(grep -c '^ *%' "$work/step.mlir")"
  for work_option in 256 0 1000000000000; do
    times=()
    for _ in $(seq "$reps"); do
      times+=("$("$bin/parc-opt" "$work/step.mlir" \
        --parc-plan-memory=greedy-work=$work_option --mlir-timing \
        -o "$work/planned.mlir" 2>&1 | awk '/MemoryPlanPass/ {print $1}')")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((reps + 1) / 2))p")
    arena=$(grep -o 'parc.arena_bytes = [0-9]*' "$work/planned.mlir" | head -1 | grep -o '[0-9]*$')
    row="$row | $median | $arena"
  done
  echo "$row |"
done
