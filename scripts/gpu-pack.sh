#!/usr/bin/env bash
# Packs, on the development machine, what checks the cuda backend on a GPU
# machine that has CUDA, cuBLAS and NCCL but not parc's toolchain (MLIR, Open
# MPI, oneDNN): parcrt-cuda-check (every backend op, cuda against cpu), one
# rank's compiled train steps of gpt-tiny in f32 and bf16-mixed with the
# reference evaluator's results, and the shared libraries they load that such
# a machine lacks (Open MPI and its plugins, oneDNN, hwloc, ...). The device
# side is scripts/gpu-run-pack.sh.
#
#   scripts/gpu-pack.sh [PACK]   (default build/gpu-pack.tar.xz, ~11 MB)
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
"$bin/parc-model" gpt-tiny -o "$work/gpt.mlir"
echo '{"mesh": {"dp": 1}}' > "$work/plan.json"
for variant in f32 bf16-mixed; do
  dir=$work/programs/gpt-tiny-$variant
  "$bin/parc-opt" "$work/gpt.mlir" \
    --parc-make-train-step="precision=$variant" -o "$work/step.mlir"
  "$bin/parc-compile" "$work/step.mlir" --plan "$work/plan.json" \
    -o "$work/compiled" > /dev/null
  mkdir -p "$dir"
  cp "$work/compiled/program" "$work/compiled/manifest.json" "$dir/"
  "$bin/parc-run" --reference "$work/step.mlir" --steps 5 \
    --out "$dir/reference.safetensors" | grep '^step ' > "$dir/reference.log"
done
cp "$root/test/compare-tensors.py" "$root/test/safetensors_file.py" "$work/"

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
              "$work"/openmpi/*.so; do
  ldd "$object" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u |
  grep -vE "/lib(c|m|dl|pthread|rt|gcc_s|stdc\+\+)\.so|/usr/local/cuda|$fabric" |
  while read -r library; do cp -L "$library" "$work/lib/"; done
strip "$work/parcrt-cuda-check" "$work"/programs/*/program
rm -r "$work/gpt.mlir" "$work/step.mlir" "$work/plan.json" "$work/compiled"
tar -C "$work" -cJf "$pack" .
echo "wrote $pack ($(du -h "$pack" | cut -f1))"
