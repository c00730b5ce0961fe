#!/usr/bin/env bash
# Data-parallel synchronization on this machine, predicted and measured: a
# 4-layer GPT (hidden 256, 8 heads, seq 128, vocab 4096, AdamW, f32) on 2
# ranks with a global batch of 8, synchronized by ring all-reduce, by a
# parameter server colocated on the two ranks (ZeRO-1's layout) or on two
# dedicated server ranks beside them (4 processes on this machine's cores),
# or on one (dedicated1: 3 processes),
# and by local SGD averaging every step and every 4 steps (the train step
# of one replica's batch, 4). `parc-plan --calibrate` measures the machine once;
# parc-plan --fix prices each and writes its plan, parc-compile builds it,
# and the executables run interleaved for ROUNDS rounds (default 3) of
# 6 steps (`step time` is the mean of the last 5); each figure is the
# median over the rounds.
#
#   [ROUNDS=5] bench/data-parallel/sync.sh [build-dir]
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/bin
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
for batch in 8 4; do
  "$bin/parc-model" gpt --layers 4 --hidden 256 --heads 8 --seq 128 \
    --batch $batch --vocab 4096 -o "$work/model$batch.mlir"
  "$bin/parc-opt" "$work/model$batch.mlir" --parc-make-train-step \
    -o "$work/step$batch.mlir"
done
"$bin/parc-plan" --calibrate --ranks 2 -o "$work/cluster.json" > /dev/null 2>&1
syncs="allreduce parameter-server parameter-server:dedicated parameter-server:dedicated1 local-sgd:1 local-sgd:4"
for sync in $syncs; do
  name=${sync/:/-}
  batch=8 fix="sync=${sync%%:*}"
  if [[ $sync == local-sgd:* ]]; then batch=4 fix="$fix,sync_every=${sync#*:}"; fi
  if [[ $sync == *:dedicated* ]]; then fix="$fix,placement=dedicated"; fi
  if [[ $sync == *:dedicated1 ]]; then fix="$fix,servers=1"; fi
  "$bin/parc-plan" "$work/model$batch.mlir" --cluster "$work/cluster.json" \
    --gpus 2 --global-batch 8 --dtype f32 \
    --fix "dp=2,tp=1,pp=1,zero=0,recompute=none,sp=off,mb=4,$fix" \
    -o "$work/$name.json" > /dev/null
  "$bin/parc-compile" "$work/step$batch.mlir" --plan "$work/$name.json" \
    -o "$work/$name" > "$work/$name.summary"
done
for round in $(seq "$rounds"); do
  for sync in $syncs; do
    name=${sync/:/-}
    "$work/$name/launch.sh" --steps 6 |
      sed -n 's/^step time: \([0-9.]*\) s.*/\1/p' >> "$work/$name.times"
  done
done
printf '| sync | predicted step s | measured step s (median of %s) | measured / predicted | traffic per rank and step, compiled (predicted) |\n|---|---|---|---|---|\n' "$rounds"
for sync in $syncs; do
  name=${sync/:/-}
  python3 - "$work/$name.json" "$work/$name.summary" "$work/$name.times" "$sync" <<'PY'
import json, re, statistics, sys
plan = json.load(open(sys.argv[1]))["predicted"]
summary = open(sys.argv[2]).read()
times = [float(t) for t in open(sys.argv[3]).read().split()]
traffic = re.search(r"traffic per rank per step: (\d+)", summary)
measured = statistics.median(times)
print(f"| {sys.argv[4]} | {plan['step_time_s']:.4f} | {measured:.4f} | "
      f"{measured / plan['step_time_s']:.2f} | "
      f"{traffic.group(1) if traffic else '-'} ({plan['comm_bytes_per_rank']:.0f}) |")
PY
done
