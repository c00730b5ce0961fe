#!/usr/bin/env bash
# Runs what scripts/gpu-pack.sh packed, on a GPU machine: parcrt-cuda-check
# (cuda backend against cpu backend, op by op), then each packed train step
# for 5 steps on --backend cuda and --backend cpu, whose losses must equal
# the reference evaluator's (relative 1e-4 in f32, 2e-3 in bf16-mixed); the
# final weights' largest relative difference from the reference is printed.
# Finds CUDA's runtime, cuBLAS and NCCL on the machine (NCCL also in a
# Python environment's nvidia-nccl package). Results go to $OUT (default
# /tmp/gpu-run). Exit status 1 when a check fails.
#
#   scripts/gpu-run-pack.sh PACK
set -uo pipefail
pack=$(realpath "$1")
out=${OUT:-/tmp/gpu-run}
mkdir -p "$out"
here=$(mktemp -d)
tar -C "$here" -xJf "$pack"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

paths=$here/lib
for library in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  found=$(find /usr/local /opt /usr/lib -name "$library" 2>/dev/null | head -1)
  echo "$library: ${found:-not found}"
  if [ -n "$found" ]; then paths=$paths:$(dirname "$found"); fi
done
export LD_LIBRARY_PATH=$paths${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# A single rank initializes MPI as an isolated singleton: no mpirun, no
# daemon, plugins from the pack.
export OMPI_MCA_mca_base_component_path=$here/openmpi
export OMPI_MCA_ess_singleton_isolated=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0

timeout 300 "$here/parcrt-cuda-check" > "$out/cuda-check.log" 2>&1 || status=1
echo "parcrt-cuda-check: $(grep -c '^PASS ' "$out/cuda-check.log") passed," \
     "$(grep -c '^FAIL ' "$out/cuda-check.log") failed"
grep -E '^(FAIL|SKIP)' "$out/cuda-check.log"

for dir in "$here"/programs/*/; do
  name=$(basename "$dir")
  rtol=1e-4
  [[ $name == *bf16* ]] && rtol=2e-3
  for backend in cuda cpu; do
    log=$out/$name.$backend.log
    # The final state is compared where the pack has the reference's.
    out_flags=()
    [ -f "$dir/reference.safetensors" ] &&
      out_flags=(--out "$out/$name.$backend.safetensors")
    (cd "$dir" && timeout 120 ./program --steps 5 --backend "$backend" \
       "${out_flags[@]}") > "$log" 2>&1 || status=1
    python3 - "$dir/reference.log" "$log" "$rtol" "$dir/reference.safetensors" \
      "$out/$name.$backend.safetensors" "$name $backend" "$here" <<'PY' || status=1
import re, sys
sys.path.insert(0, sys.argv[7])
import numpy as np
import safetensors_file
def losses(path):
    return [float(m.group(1)) for m in
            re.finditer(r"^step \d+: loss = (\S+)", open(path).read(), re.M)]
want, got, rtol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
worst = max((abs(g - w) / abs(w) for g, w in zip(got, want)), default=0)
ok = len(got) == len(want) and worst <= rtol
import os
reference = (safetensors_file.read(sys.argv[4])
             if os.path.exists(sys.argv[4]) else {})
result = safetensors_file.read(sys.argv[5]) if ok and reference else {}
errors = sorted((float(np.abs(np.float64(result[k]) - np.float64(v)).max()
                       / max(np.abs(np.float64(v)).max(), 1e-30)), k)
                for k, v in reference.items() if k in result)
print(f"{sys.argv[6]}: losses {got} vs reference {want}: "
      f"{'PASS' if ok else 'FAIL'} (worst {worst:.2g}, rtol {rtol:g}); "
      f"largest weight difference {errors[-1] if errors else 'n/a'}")
sys.exit(0 if ok else 1)
PY
  done
done
# Timings: each bench program's step on the cuda backend (6 steps), on the
# cpu backend (3 steps, every core), one after the other; then 3 traced
# cuda steps for the time per op (a traced call synchronizes, so those
# steps are slower than the untraced ones).
for dir in "$here"/bench/*/; do
  name=$(basename "$dir")
  for run in "cuda 6 cuda" "cpu 3 cpu" "cuda 3 cuda-traced"; do
    read -r backend steps label <<< "$run"
    trace=()
    [ "$label" = cuda-traced ] && trace=(--trace "$out/$name.trace.json")
    (cd "$dir" && timeout 300 ./program --steps "$steps" --backend "$backend" \
       "${trace[@]}") > "$out/$name.$label.log" 2>&1 || status=1
    echo "$name $label: $(grep '^step time' "$out/$name.$label.log" ||
                          tail -1 "$out/$name.$label.log")"
  done
  [ -f "$out/$name.trace.json" ] && python3 "$here/trace-ops.py" "$out/$name.trace.json"
done
exit "$status"
