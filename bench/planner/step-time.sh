#!/usr/bin/env bash
# Predicted vs measured step time on this machine: for 1, 2 and 4 ranks,
# `parc-plan --calibrate` measures the machine, the planner searches the
# plans parc-compile builds (--space dp,tp,sp: one micro-batch, ZeRO 0, no
# recomputation, f32), and the first five it lists are compiled. Then
# ROUNDS rounds (default 3): each calibrates again, predicts the five with
# that calibration and runs them, interleaved; each plan's figures are the
# medians over the rounds of its predicted and measured times and of their
# ratio. (This machine's speed drifts by up to 2x within an hour, so a
# prediction is compared with a measurement taken minutes after its
# calibration, as a user's would be.)
# The model is a 4-layer GPT (hidden HIDDEN, default 256; 8 heads, seq 128,
# vocab 4096) at batch 8, trained with AdamW.
#
#   [ROUNDS=5] [HIDDEN=512] bench/planner/step-time.sh [build-dir]
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/bin
rounds=${ROUNDS:-3}
hidden=${HIDDEN:-256}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
"$bin/parc-model" gpt --layers 4 --hidden "$hidden" --heads 8 --seq 128 --batch 8 \
  --vocab 4096 -o "$work/model.mlir"
"$bin/parc-opt" "$work/model.mlir" --parc-make-train-step -o "$work/step.mlir"
printf '| ranks | rank in list | plan | predicted s (median) | measured s (median) | measured / predicted (median of rounds) |\n|---|---|---|---|---|---|\n'
for ranks in 1 2 4; do
  "$bin/parc-plan" --calibrate --ranks "$ranks" -o "$work/cluster$ranks.json" 2> /dev/null > /dev/null
  "$bin/parc-plan" "$work/model.mlir" --cluster "$work/cluster$ranks.json" \
    --gpus "$ranks" --global-batch 8 --dtype f32 --space dp,tp,sp --top 4 \
    --format json > "$work/summary.json"
  python3 - "$work/summary.json" > "$work/candidates.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
plans = [d["plan"]["planner"]["notes"][0]] + [a["configuration"] for a in d["alternatives"]]
for p in plans[:5]:
    kv = dict(x.split("=") for x in p.split())
    print(f"dp={kv['dp']},tp={kv['tp']},sp={kv['sp']},mb={kv['mb']}", p)
PY
  i=0
  while read -r fix description; do
    i=$((i + 1))
    "$bin/parc-plan" "$work/model.mlir" --cluster "$work/cluster$ranks.json" \
      --gpus "$ranks" --global-batch 8 --dtype f32 --space dp,tp,sp \
      --fix "$fix" -o "$work/plan$i.json" > /dev/null < /dev/null
    "$bin/parc-compile" "$work/step.mlir" --plan "$work/plan$i.json" -o "$work/out$i" > /dev/null
    echo "$fix" > "$work/fix$i"
    echo "$description" > "$work/description$i"
  done < "$work/candidates.txt"
  # Rounds over the plans, interleaved: the machine's noise falls on all
  # of them alike. Each round predicts from a calibration of its own.
  for round in $(seq "$rounds"); do
    "$bin/parc-plan" --calibrate --ranks "$ranks" -o "$work/round.json" 2> /dev/null > /dev/null
    for j in $(seq "$i"); do
      "$bin/parc-plan" "$work/model.mlir" --cluster "$work/round.json" \
        --gpus "$ranks" --global-batch 8 --dtype f32 --space dp,tp,sp \
        --fix "$(cat "$work/fix$j")" --format json < /dev/null |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["predicted"]["step_time_s"])' \
          >> "$work/predicted$ranks.$j"
      "$work/out$j/launch.sh" --steps 4 < /dev/null |
        sed -n 's/^step time: \([0-9.]*\) s.*/\1/p' >> "$work/measured$ranks.$j"
    done
  done
  for j in $(seq "$i"); do
    python3 - "$ranks" "$j" "$work/predicted$ranks.$j" "$work/measured$ranks.$j" "$(cat "$work/description$j")" <<'PY'
import statistics, sys
ranks, index, predicted, measured, description = sys.argv[1:6]
predicted = [float(line) for line in open(predicted)]
measured = [float(line) for line in open(measured)]
ratio = statistics.median(m / p for p, m in zip(predicted, measured))
print(f"| {ranks} | {index} | {description} | {statistics.median(predicted):.4f} | "
      f"{statistics.median(measured):.4f} | {ratio:.2f} |")
PY
  done
done
