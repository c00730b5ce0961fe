#!/usr/bin/env bash
# Issue 13's scaling targets: the GPT train step (4 layers, hidden 256, 8
# heads, seq 128, batch 8, vocab 4096, AdamW) on one rank against Megatron
# tensor parallelism (attention heads, MLP columns/rows and the vocabulary
# split) and data parallelism (plain, and with ZeRO-1's sharded optimizer
# step) on two ranks, one thread per rank, run
# interleaved; prints the medians and the speedups over one rank.
#
#   bench/cpu-runtime/scaling.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
rounds=${2:-5}
layers=4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
"$build/bin/parc-model" gpt --layers "$layers" --hidden 256 --heads 8 \
  --seq 128 --batch 8 --vocab 4096 -o "$work/model.mlir"
"$build/bin/parc-opt" "$work/model.mlir" --parc-make-train-step \
  -o "$work/step.mlir"
python3 - "$work" "$layers" <<'PY'
import json, sys
work, layers = sys.argv[1], int(sys.argv[2])
tp = {"wte.weight": [["tp"], []]}
for layer in range(layers):
    p = f"h.{layer}"
    tp[f"{p}.attn.c_attn.weight"] = [[], [], ["tp"], []]
    tp[f"{p}.attn.c_proj.weight"] = [["tp"], []]
    tp[f"{p}.mlp.c_fc.weight"] = [[], ["tp"]]
    tp[f"{p}.mlp.c_proj.weight"] = [["tp"], []]
json.dump({"mesh": {"dp": 1}}, open(f"{work}/one.json", "w"))
json.dump({"mesh": {"tp": 2}, "shardings": tp}, open(f"{work}/tp.json", "w"))
batch = {"input_ids": [["dp"], []], "labels": [["dp"], []]}
json.dump({"mesh": {"dp": 2}, "shardings": batch}, open(f"{work}/dp.json", "w"))
json.dump({"mesh": {"dp": 2}, "shardings": batch, "zero": 1},
          open(f"{work}/zero1.json", "w"))
PY
for plan in one tp dp zero1; do
  "$build/bin/parc-compile" "$work/step.mlir" --plan "$work/$plan.json" \
    -o "$work/$plan" > /dev/null
done
steal() { awk '/^cpu / {print $9}' /proc/stat; }
for round in $(seq "$rounds"); do
  for plan in one tp dp zero1; do
    before=$(steal)
    line=$("$work/$plan/launch.sh" --steps 8 --threads 1 | grep '^step time')
    echo "$plan $(echo "$line" | sed 's/^step time: \([0-9.]*\) s.*median \([0-9.]*\) s.*/\1 \2/') $(($(steal) - before))" |
      tee -a "$work/times"
  done
done
python3 - "$work/times" <<'PY'
import statistics, sys
means, medians = {}, {}
for line in open(sys.argv[1]):
    plan, mean, median, _ = line.split()
    means.setdefault(plan, []).append(float(mean))
    medians.setdefault(plan, []).append(float(median))
for label, runs in (("mean", means), ("median", medians)):
    m = {plan: statistics.median(times) for plan, times in runs.items()}
    print(f"runs' {label} step, medians: 1 rank {m['one']:.4f} s, tp=2 {m['tp']:.4f} s, "
          f"dp=2 {m['dp']:.4f} s, dp=2 ZeRO-1 {m['zero1']:.4f} s")
    print(f"  speedup over 1 rank: tp=2 {m['one'] / m['tp']:.2f}x, "
          f"dp=2 {m['one'] / m['dp']:.2f}x, dp=2 ZeRO-1 {m['one'] / m['zero1']:.2f}x")
PY
