#!/usr/bin/env bash
# f32 against bf16-mixed training on this machine: the 4-layer GPT (hidden
# 256, 8 heads, seq 128, batch 8, vocab 4096, AdamW) compiled for one rank
# from --parc-make-train-step and from
# --parc-make-train-step=precision=bf16-mixed, both run interleaved in
# ROUNDS rounds (default 5) of 4 steps; prints each round's step times, the
# median ratio bf16 / f32, and both compiled arenas.
#
#   [ROUNDS=5] bench/cpu-runtime/precision.sh [build-dir]
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
bin=$build/bin
rounds=${ROUNDS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
"$bin/parc-model" gpt --layers 4 --hidden 256 --heads 8 --seq 128 --batch 8 \
  --vocab 4096 -o "$work/model.mlir"
for precision in f32 bf16-mixed; do
  "$bin/parc-opt" "$work/model.mlir" --parc-make-train-step="precision=$precision" \
    -o "$work/$precision.mlir"
  "$bin/parc-compile" "$work/$precision.mlir" -o "$work/$precision" |
    sed -n "s/^peak arena bytes per rank: \([0-9]*\).*/$precision arena bytes: \1/p"
done
for round in $(seq "$rounds"); do
  for precision in f32 bf16-mixed; do
    "$work/$precision/launch.sh" --steps 4 < /dev/null |
      sed -n 's/^step time: \([0-9.]*\) s.*/\1/p' >> "$work/$precision.times"
  done
done
python3 - "$work/f32.times" "$work/bf16-mixed.times" <<'PY'
import statistics, sys
f32, bf16 = ([float(line) for line in open(path)] for path in sys.argv[1:3])
for round, (a, b) in enumerate(zip(f32, bf16), 1):
    print(f"round {round}: f32 {a:.3f} s, bf16-mixed {b:.3f} s, ratio {b / a:.2f}")
print(f"median bf16-mixed / f32: {statistics.median(b / a for a, b in zip(f32, bf16)):.2f}")
PY
