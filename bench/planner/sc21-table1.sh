#!/usr/bin/env bash
# Reproduces Narayanan et al. SC21 ("Efficient Large-Scale Language Model
# Training on GPU Clusters Using Megatron-LM"), Table 1: for each GPT row,
# parc-plan with the paper's tensor and pipeline sizes pinned (--fix tp,pp,
# full recomputation as the paper used) predicts TFLOP/s per GPU on
# dgx-a100-80g; then the free search (no --fix) reports its own plan.
#
#   bench/planner/sc21-table1.sh [build-dir]     (results: sc21-table1.md)
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# params heads hidden layers tp pp gpus batch published-TFLOP/s
rows="1.7B 24 2304 24 1 1 32 512 137
3.6B 32 3072 30 2 1 64 512 138
7.5B 32 4096 36 4 1 128 512 142
18.4B 48 6144 40 8 1 256 1024 135
39.1B 64 8192 48 8 2 512 1536 138
76.1B 80 10240 60 8 4 1024 1792 140
145.6B 96 12288 80 8 8 1536 2304 148
310.1B 128 16384 96 8 16 1920 2160 155
529.6B 128 20480 105 8 35 2520 2520 163
1008.0B 160 25600 128 8 64 3072 3072 163"

printf '| model | tp | pp | dp | GPUs | batch | published TFLOP/s | parc-plan (fixed) | error | plan (fixed) | free search | speedup | plan (free) | search s |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
while read -r name heads hidden layers tp pp gpus batch published; do
  model=$work/$name.mlir
  "$bin/parc-model" gpt --layers "$layers" --hidden "$hidden" --heads "$heads" \
    --seq 2048 --vocab 51200 --batch 1 --dtype bf16 --untied-lm-head -o "$model"
  dp=$((gpus / (tp * pp)))
  # Megatron-LM as the paper ran it: no distributed optimizer, no sequence
  # parallelism, full recomputation, PipeDream-flush (1F1B), gradient
  # all-reduce after the backward pass.
  fixed="tp=$tp,pp=$pp,zero=0,sp=off,recompute=full"
  [ "$pp" -gt 1 ] && fixed="$fixed,schedule=1f1b"
  "$bin/parc-plan" "$model" --cluster dgx-a100-80g --gpus "$gpus" \
    --global-batch "$batch" --fix "$fixed" --overlap-grad-reduce=false --kernels unfused --attention-dropout \
    --format json > "$work/fixed.json"
  # The free search runs on the same software assumptions (no overlapped
  # gradient reduction), so its speedup comes from the plan alone.
  "$bin/parc-plan" "$model" --cluster dgx-a100-80g --gpus "$gpus" \
    --global-batch "$batch" --overlap-grad-reduce=false --kernels unfused --attention-dropout \
    --format json > "$work/free.json"
  python3 - "$work/fixed.json" "$work/free.json" "$name" "$tp" "$pp" "$dp" \
    "$gpus" "$batch" "$published" <<'PY'
import json, sys
fixed, free = (json.load(open(p)) for p in sys.argv[1:3])
name, tp, pp, dp, gpus, batch, published = sys.argv[3:10]
published = float(published)
f = fixed["predicted"]; g = free["predicted"]
fc = fixed["plan"]["planner"]["notes"][0]; gc = free["plan"]["planner"]["notes"][0]
err = 100 * (f["tflops_per_gpu"] - published) / published
print(f"| {name} | {tp} | {pp} | {dp} | {gpus} | {batch} | {published:.0f} | "
      f"{f['tflops_per_gpu']:.0f} | {err:+.1f}% | {fc} | {g['tflops_per_gpu']:.0f} | "
      f"{f['step_time_s'] / g['step_time_s']:.2f}x | {gc} | {free['search']['seconds']:.2f} |")
PY
done <<< "$rows"
