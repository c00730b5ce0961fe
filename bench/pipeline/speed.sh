#!/bin/sh
# Step time of a 2-stage pipeline on 2 ranks against the same train step on
# 1 rank, on this machine's 2 cores: GPT (4 layers, hidden 256, seq 64,
# batch 16, AdamW). Runs are interleaved (serial, pipeline, serial, ...),
# 5 repetitions of 6 steps each; the launcher's "step time" leaves out the
# first step; the table gives the medians and their ratio.
#   serial-1t: 1 rank, 1 BLAS thread (the same compute resources as one stage)
#   serial-2t: 1 rank, 2 BLAS threads (the whole machine)
#   pp2-1f1b:  2 ranks of 1 BLAS thread, 1F1B, 8 micro-batches
#
#   bench/pipeline/speed.sh [build-dir]
set -eu
build=${1:-build}
out=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PARC_MPIRUN_FLAGS="--oversubscribe --bind-to none"
"$build/bin/parc-model" gpt-tiny --layers 4 --hidden 256 --heads 4 --seq 64 --batch 16 -o "$out/gpt.mlir"
"$build/bin/parc-opt" "$out/gpt.mlir" --parc-make-train-step="optimizer=adamw lr=0.001" -o "$out/step.mlir"
"$build/bin/parc-compile" "$out/step.mlir" -o "$out/serial" > /dev/null
printf '{ "mesh": { "pp": 2 }, "pipeline": { "axis": "pp", "microbatches": 8, "schedule": "1f1b" } }\n' > "$out/pp.json"
"$build/bin/parc-compile" "$out/step.mlir" --plan "$out/pp.json" -o "$out/pp" > /dev/null
step() { awk '/^step time/ {print $3}'; }
for i in 1 2 3 4 5; do
  OMP_NUM_THREADS=1 "$out/serial/launch.sh" --steps 6 | step >> "$out/serial-1t"
  OMP_NUM_THREADS=1 "$out/pp/launch.sh" --steps 6 | step >> "$out/pp2-1f1b"
  OMP_NUM_THREADS=2 "$out/serial/launch.sh" --steps 6 | step >> "$out/serial-2t"
done
median() { sort -g "$1" | sed -n 3p; }
s1=$(median "$out/serial-1t"); s2=$(median "$out/serial-2t"); p=$(median "$out/pp2-1f1b")
printf "%-10s %12s %18s\n" run "step time s" "serial-1t / run"
for run in serial-1t serial-2t pp2-1f1b; do
  t=$(median "$out/$run")
  printf "%-10s %12s %18s\n" "$run" "$t" "$(awk -v a="$s1" -v b="$t" 'BEGIN { printf "%.2f", a / b }')"
done
rm -rf "$out"
