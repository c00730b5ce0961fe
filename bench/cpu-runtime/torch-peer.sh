#!/usr/bin/env bash
# Issue 13's comparison: parc's compiled GPT train step (and forward pass)
# on one rank against the same model in PyTorch eager (and the forward in
# onnxruntime), on the same threads, interleaved round by round; prints the
# medians and torch / parc (above 1: parc is faster).
#
#   bench/cpu-runtime/torch-peer.sh [BUILD_DIR] [ROUNDS]
#   THREADS="1 2" SHAPES="4,256,8,128,8,4096 4,512,8,256,4,4096" STEPS=10
#
# A shape is layers,hidden,heads,seq,batch,vocab. PyTorch and onnxruntime
# come from PyPI into a venv ($PARC_BENCH_VENV, made on first use); tests
# never need them. Each run times --steps STEPS and reports the mean of the
# steps after the first (parc's launcher and torch_gpt.py alike): PyTorch's
# first few steps are slower (0.93 s mean of steps 2-4, 0.57 s of 2-10).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
rounds=${2:-5}
steps=${STEPS:-10}
venv=${PARC_BENCH_VENV:-$HOME/.cache/parc-bench-venv}
if [ ! -x "$venv/bin/python" ] ||
   ! "$venv/bin/python" -c "import torch, onnx, onnxruntime" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q torch numpy onnx onnxruntime
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo '{"mesh": {"dp": 1}}' > "$work/plan.json"
step_time() { awk '/^step time/ {print $3}'; }
for shape in ${SHAPES:-4,256,8,128,8,4096 4,512,8,256,4,4096}; do
  IFS=, read -r layers hidden heads seq batch vocab <<< "$shape"
  sizes=(--layers "$layers" --hidden "$hidden" --heads "$heads" --seq "$seq"
         --batch "$batch" --vocab "$vocab")
  "$build/bin/parc-model" gpt "${sizes[@]}" -o "$work/model.mlir"
  "$build/bin/parc-opt" "$work/model.mlir" --parc-make-train-step \
    -o "$work/step.mlir"
  "$build/bin/parc-compile" "$work/step.mlir" --plan "$work/plan.json" \
    -o "$work/train" > /dev/null
  "$build/bin/parc-compile" "$work/model.mlir" --plan "$work/plan.json" \
    -o "$work/forward" > /dev/null
  for threads in ${THREADS:-1 2}; do
    times="$work/times.$shape.$threads"
    for round in $(seq "$rounds"); do
      echo "parc-train $("$work/train/launch.sh" --steps "$steps" --threads "$threads" | step_time)" >> "$times"
      echo "torch-train $("$venv/bin/python" "$root/bench/cpu-runtime/torch_gpt.py" --threads "$threads" --steps "$steps" "${sizes[@]}" | step_time)" >> "$times"
      echo "parc-forward $("$work/forward/launch.sh" --steps "$steps" --threads "$threads" | step_time)" >> "$times"
      echo "torch-forward $("$venv/bin/python" "$root/bench/cpu-runtime/torch_gpt.py" --threads "$threads" --steps "$steps" --forward "${sizes[@]}" | step_time)" >> "$times"
      echo "ort-forward $("$venv/bin/python" "$root/bench/cpu-runtime/torch_gpt.py" --threads "$threads" --steps "$steps" --onnxruntime "${sizes[@]}" 2>/dev/null | step_time)" >> "$times"
    done
    python3 - "$times" "$shape" "$threads" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, seconds = line.split()
    runs.setdefault(name, []).append(float(seconds))
m = {name: statistics.median(values) for name, values in runs.items()}
print(f"shape {sys.argv[2]}, {sys.argv[3]} thread(s), medians of {len(runs['parc-train'])}:")
print(f"  train step: parc {m['parc-train']:.4f} s, torch {m['torch-train']:.4f} s, torch / parc {m['torch-train'] / m['parc-train']:.2f}")
print(f"  forward:    parc {m['parc-forward']:.4f} s, torch no_grad {m['torch-forward']:.4f} s ({m['torch-forward'] / m['parc-forward']:.2f}), "
      f"onnxruntime {m['ort-forward']:.4f} s ({m['ort-forward'] / m['parc-forward']:.2f})")
PY
  done
done
