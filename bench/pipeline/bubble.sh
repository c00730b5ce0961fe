#!/bin/sh
# The pipeline bubble measured from compiled runs' traces against the
# schedule's formula (p - 1) / (m + p - 1): GPT (4 layers, hidden 256,
# seq 64, batch 16, AdamW) train step, pp = 2 on 2 ranks, 1F1B, GPipe and
# PipeDream-2BW (no flush: its formula is 0 once the prologue has run),
# m = 2, 4, 8 micro-batches, 6 steps (the first is left out). The measured
# bubble of a rank is 1 - (its compute time) / (step wall time), the mean
# over both ranks; it also counts the optimizer update and the time in
# send/recv calls, which the formula leaves out.
#
#   bench/pipeline/bubble.sh [build-dir]
#
# PARC_BUBBLE_SCHEDULES picks the schedules, PARC_BUBBLE_MODEL_FLAGS adds
# parc-model flags (--untied-lm-head: no embedding shared by the first and
# last stage, whose update PipeDream-2BW's last stage would wait for).
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1 PARC_MPIRUN_FLAGS="--oversubscribe --bind-to core"
"$build/bin/parc-model" gpt-tiny --layers 4 --hidden 256 --heads 4 --seq 64 --batch 16 \
  ${PARC_BUBBLE_MODEL_FLAGS:-} -o "$out/gpt.mlir"
"$build/bin/parc-opt" "$out/gpt.mlir" --parc-make-train-step="optimizer=adamw lr=0.001" -o "$out/step.mlir"
printf "%-13s %3s %10s %10s\n" schedule m formula measured
for schedule in ${PARC_BUBBLE_SCHEDULES:-1f1b gpipe pipedream-2bw}; do
  for m in 2 4 8; do
    printf '{ "mesh": { "pp": 2 }, "pipeline": { "axis": "pp", "microbatches": %s, "schedule": "%s" } }\n' \
      "$m" "$schedule" > "$out/plan.json"
    "$build/bin/parc-compile" "$out/step.mlir" --plan "$out/plan.json" -o "$out/c" > /dev/null
    "$out/c/launch.sh" --steps 6 --trace "$out/trace.json" > /dev/null
    measured=$(/usr/bin/python3 "$here/bubble.py" "$out/trace.json" | awk '/mean/ {print $NF}')
    formula=$(awk -v m="$m" -v s="$schedule" \
      'BEGIN { printf "%.1f%%", s == "pipedream-2bw" ? 0 : 100 / (m + 1) }')
    printf "%-13s %3s %10s %10s\n" "$schedule" "$m" "$formula" "$measured"
  done
done
rm -rf "$out"
