#!/usr/bin/env bash
# Packs, on the development machine, what checks the cuda backend on a GPU
# machine that has CUDA, cuBLAS and NCCL but not parc's toolchain (MLIR, Open
# MPI, oneDNN): parcrt-cuda-check (every backend op, cuda against cpu), one
# rank's compiled train steps of gpt-tiny in f32 and bf16-mixed with the
# reference evaluator's results, and the shared libraries they load that such
# a machine lacks (Open MPI and its plugins, oneDNN, hwloc, ...), and a
# ResNet-18 step at CIFAR size for the convolutions, and a GPT at seq 1024
# timed on both backends (the time per op of its cuda step: attention's
# share). The device side is scripts/gpu-run-pack.sh.
#
#   scripts/gpu-pack.sh [PACK]   (default build/gpu-pack.tar.xz, ~15 MB)
#
# Then, on the GPU machine, from a checkout that carries PACK:
#   scripts/gpu-run-pack.sh PACK
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PARC_BUILD_DIR:-$root/build}
pack=$(realpath -m "${1:-$build/gpu-pack.tar.xz}")
"$root/scripts/build.sh" parcrt-cuda-check parc-model parc-opt parc-compile parc-run
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$build/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

mkdir -p "$work/lib" "$work/openmpi" "$work/programs"
cp "$build/runtime/cuda/parcrt-cuda-check" "$work/"
echo '{"mesh": {"dp": 1}}' > "$work/plan.json"
# NAME MODEL-ARGUMENTS TRAIN-STEP-OPTIONS [losses]: a compiled train step
# and the reference's 5 steps of it (its losses, and unless `losses` its
# final state).
pack_program() {
  local dir=$work/programs/$1
  "$bin/parc-model" $2 -o "$work/model.mlir"
  "$bin/parc-opt" "$work/model.mlir" --parc-make-train-step="$3" \
    -o "$work/step.mlir"
  "$bin/parc-compile" "$work/step.mlir" --plan "$work/plan.json" \
    -o "$work/compiled" > /dev/null
  mkdir -p "$dir"
  cp "$work/compiled/program" "$work/compiled/manifest.json" "$dir/"
  local out=()
  [ "${4:-}" = losses ] || out=(--out "$dir/reference.safetensors")
  "$bin/parc-run" --reference "$work/step.mlir" --steps 5 "${out[@]}" |
    grep '^step ' > "$dir/reference.log"
}
for variant in f32 bf16-mixed; do
  pack_program gpt-tiny-$variant gpt-tiny "precision=$variant"
done
# Convolutions, poolings and batch norms (the cuda backend's im2col GEMMs);
# its 11.7 M parameters' final state would not fit the pack.
pack_program resnet18-cifar-f32 "resnet18 --image 32 --classes 10 --batch 8" \
  "optimizer=sgd lr=0.001 momentum=0.9" losses
# A GPT at the sizes flash attention is for (seq 1024, head dim 64), timed
# on both backends by the device side: no reference (the evaluator would
# take hours at this size).
mkdir -p "$work/bench/gpt-seq1024"
"$bin/parc-model" gpt --layers 4 --hidden 768 --heads 12 --seq 1024 \
  --batch 8 --vocab 8192 -o "$work/model.mlir"
"$bin/parc-opt" "$work/model.mlir" --parc-make-train-step -o "$work/step.mlir"
"$bin/parc-compile" "$work/step.mlir" --plan "$work/plan.json" \
  -o "$work/compiled" > /dev/null
cp "$work/compiled/program" "$work/compiled/manifest.json" \
  "$work/bench/gpt-seq1024/"
cp "$root/test/compare-tensors.py" "$root/test/safetensors_file.py" \
  "$root/scripts/trace-ops.py" "$work/"

# Open MPI's plugins, less those for fabrics a single rank does not use
# (UCX, libfabric, PSM, verbs), whose libraries would not fit the pack.
fabric='liboshmem|libuc[mpst]|libfabric|libpsm|libibverbs|librdmacm|libefa|mca_common_(ucx|ofi|verbs)|libnl-'
plugins=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
for plugin in "$plugins"/*.so; do
  ldd "$plugin" 2>/dev/null | grep -qE "$fabric" || cp "$plugin" "$work/openmpi/"
done
# Every library these load, except the C runtime and CUDA's own (the GPU
# machine's versions serve).
for object in "$work/parcrt-cuda-check" "$work"/programs/*/program \
              "$work"/bench/*/program "$work"/openmpi/*.so; do
  ldd "$object" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u |
  grep -vE "/lib(c|m|dl|pthread|rt|gcc_s|stdc\+\+)\.so|/usr/local/cuda|$fabric" |
  while read -r library; do cp -L "$library" "$work/lib/"; done
strip "$work/parcrt-cuda-check" "$work"/programs/*/program \
  "$work"/bench/*/program
rm -r "$work/model.mlir" "$work/step.mlir" "$work/plan.json" "$work/compiled"
tar -C "$work" -cJf "$pack" .
echo "wrote $pack ($(du -h "$pack" | cut -f1))"
