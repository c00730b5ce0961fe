#!/usr/bin/env bash
# The GPT train step of issue 13 (4 layers, hidden 256, 8 heads, seq 128,
# batch 8, vocab 4096, AdamW; 1 rank, 1 thread) compiled by two parc builds
# and run interleaved: prints each run's `step time` and the medians' ratio.
# The results of the two must be identical (a kernel change that alters
# them is a bug); the script checks that too. A graph change that sums in
# another order may differ by f32 rounding: RTOL sets the tolerance; one that
# lays a parameter out otherwise compares its elements in row-major order.
#
#   [RTOL=1e-4] bench/cpu-runtime/compare-builds.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [RUNS]
#
# e.g. git worktree add /tmp/before REV && (cd /tmp/before && scripts/build.sh)
set -euo pipefail
before=$1 after=$2 runs=${3:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The before build may be one that still ran on OpenBLAS.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
echo '{"mesh": {"dp": 1}}' > "$work/plan.json"
# Each build makes its own train step: the graph is part of what changes.
for side in before after; do
  build=${!side}
  "$build/bin/parc-model" gpt --layers 4 --hidden 256 --heads 8 --seq 128 \
    --batch 8 --vocab 4096 -o "$work/$side.model.mlir"
  "$build/bin/parc-opt" "$work/$side.model.mlir" --parc-make-train-step \
    -o "$work/$side.step.mlir"
  "$build/bin/parc-compile" "$work/$side.step.mlir" --plan "$work/plan.json" \
    -o "$work/$side" > /dev/null
done
for run in $(seq "$runs"); do
  for side in before after; do
    seconds=$("$work/$side/launch.sh" --steps 4 --out "$work/$side.safetensors" |
              awk '/^step time/ {print $3}')
    echo "$side $seconds" | tee -a "$work/times"
  done
done
/usr/bin/python3 "$root/test/compare-tensors.py" "$work/before.safetensors" \
  "$work/after.safetensors" --rtol "${RTOL:-0}" --same-elements |
  sort -g -k4 | tail -2
echo
python3 - "$work/times" <<'PY'
import statistics, sys
times = {"before": [], "after": []}
for line in open(sys.argv[1]):
    side, seconds = line.split()
    times[side].append(float(seconds))
b, a = statistics.median(times["before"]), statistics.median(times["after"])
print(f"median step time: before {b:.4f} s, after {a:.4f} s, before / after {b / a:.2f}x")
PY
