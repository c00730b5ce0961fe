#!/usr/bin/env bash
# Reproduces the results recorded in bench/README.md. Ratios compare runs
# made in the same invocation; absolute times on a shared machine mean
# little.
#
#   bench/run.sh            all benchmarks
#   bench/run.sh gemm|tp|memory
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PARC_BUILD_DIR:-$root/build}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
which=${1:-all}

"$root/scripts/build.sh" parc-compile parc-model blas-gemm-chain >/dev/null

step_time() { sed -n 's/^step time: \([0-9.]*\) s.*/\1/p'; }

if [ "$which" = all ] || [ "$which" = gemm ]; then
  echo "== GEMM chain (MLP step shapes, hidden 4096, batch 512, f32), 1 rank"
  "$bin/parc-compile" "$root/bench/gemm-chain.mlir" -o "$work/gemm" >/dev/null
  parc=$("$work/gemm/launch.sh" --steps 4 | step_time)
  blas=$("$build/bench/blas-gemm-chain" 3 | sed -n 's/^blas: \([0-9.]*\) s.*/\1/p')
  echo "parc executable: $parc s per step"
  echo "OpenBLAS harness: $blas s per step"
  echo "parc / harness speed: $(python3 -c "print(f'{$blas / $parc:.3f}')")x"
fi

if [ "$which" = all ] || [ "$which" = tp ]; then
  echo "== MLP (hidden 1024, ffn 4096, batch 256), TP=2 vs 1 rank, 1 BLAS thread per rank"
  "$bin/parc-model" mlp --layers 2 --hidden 1024 --ffn 4096 --vocab 1024 \
    --batch 256 -o "$work/mlp.mlir"
  printf '{"mesh": {"tp": 2}, "shardings": {"fc1.weight": [[], ["tp"]]}}\n' \
    > "$work/tp2.json"
  "$bin/parc-compile" "$work/mlp.mlir" -o "$work/one" >/dev/null
  "$bin/parc-compile" "$work/mlp.mlir" --plan "$work/tp2.json" -o "$work/tp" >/dev/null
  one=$(OMP_NUM_THREADS=1 "$work/one/launch.sh" --steps 6 | step_time)
  two=$(OMP_NUM_THREADS=1 "$work/tp/launch.sh" --steps 6 | step_time)
  echo "1 rank: $one s per step"
  echo "2 ranks (TP): $two s per step"
  echo "speedup: $(python3 -c "print(f'{$one / $two:.3f}')")x"
fi

if [ "$which" = all ] || [ "$which" = memory ]; then
  echo "== Memory plan: peak arena bytes per rank vs all tensors"
  for model in mlp-tiny gpt-tiny gpt2-small; do
    "$bin/parc-model" "$model" -o "$work/$model.mlir"
    echo "$model: $("$bin/parc-compile" "$work/$model.mlir" --emit=obj \
      -o "$work/$model" | sed -n 's/^peak arena bytes per rank: //p')"
  done
fi
