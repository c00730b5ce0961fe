#!/usr/bin/env bash
# ResNet-18 at CIFAR size (32 x 32, 10 classes, batch 16), one train step
# (SGD with momentum 0.9, batch norm in training mode) on 1 rank: parc's
# compiled program against the same network in PyTorch eager
# (torch_resnet.py), on the same threads, interleaved round by round; prints
# medians and torch / parc (above 1: parc is faster).
#
#   bench/cnn/torch-peer.sh [BUILD_DIR] [ROUNDS]
#
# Environment: STEPS (10), THREADS ("1 2"), PARC_BENCH_VENV (the venv
# bench/cpu-runtime/torch-peer.sh makes; PyTorch is installed into it from
# PyPI when missing). Step times are means over the steps after the first.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
rounds=${2:-5}
steps=${STEPS:-10}
venv=${PARC_BENCH_VENV:-$HOME/.cache/parc-bench-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q torch numpy
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo '{"mesh": {"dp": 1}}' > "$work/plan.json"
"$build/bin/parc-model" resnet18 --image 32 --classes 10 --batch 16 -o "$work/model.mlir"
"$build/bin/parc-opt" "$work/model.mlir" \
  --parc-make-train-step="optimizer=sgd lr=0.01 momentum=0.9" -o "$work/step.mlir"
"$build/bin/parc-compile" "$work/step.mlir" --plan "$work/plan.json" -o "$work/train" > /dev/null
step_time() { awk '/^step time/ {print $3}'; }
for threads in ${THREADS:-1 2}; do
  times="$work/times.$threads"
  for round in $(seq "$rounds"); do
    echo "parc $("$work/train/launch.sh" --steps "$steps" --threads "$threads" | step_time)" >> "$times"
    echo "torch $("$venv/bin/python" "$root/bench/cnn/torch_resnet.py" --threads "$threads" --steps "$steps" | step_time)" >> "$times"
  done
  python3 - "$times" "$threads" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, seconds = line.split()
    runs.setdefault(name, []).append(float(seconds))
m = {name: statistics.median(values) for name, values in runs.items()}
print(f"{sys.argv[2]} thread(s), medians of {len(runs['parc'])}: parc {m['parc']:.4f} s, "
      f"torch {m['torch']:.4f} s, torch / parc {m['torch'] / m['parc']:.2f}")
PY
done
