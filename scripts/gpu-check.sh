#!/usr/bin/env bash
# Checks the cuda backend of libparcrt on a machine with a GPU (one GPU is
# enough: the check runs as a single rank). Configures and builds with
# scripts/build.sh (only what the check needs, or everything with --all),
# then runs parcrt-cuda-check, which runs every backend op on tiny inputs
# through the cuda and the cpu backend and compares them, and prints a
# summary. Exit status: 0 when every case passes or no GPU is usable (the
# check prints SKIP and why), 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PARC_BUILD_DIR:-$root/build}

targets=(parcrt-cuda-check)
if [ "${1:-}" = "--all" ]; then
  targets=()
fi

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    || true
else
  echo "gpu-check: nvidia-smi not found (the check will say whether a GPU is usable)"
fi

# Configure (once) and list the targets: the check exists only where CMake
# found the CUDA toolkit, NCCL and MPI.
if ! "$root/scripts/build.sh" -t targets all | grep -q '^parcrt-cuda-check:'; then
  echo "gpu-check: no parcrt-cuda-check target in $build" \
       "(CUDA toolkit, NCCL or MPI not found at configure time)" >&2
  exit 1
fi
"$root/scripts/build.sh" "${targets[@]}"

check=$build/runtime/cuda/parcrt-cuda-check
# Open MPI refuses to run as root unless told; the check initializes MPI as
# a singleton (no mpirun needed).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
"$check" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

echo
echo "== gpu-check summary =="
if grep -q '^SKIP:' "$log"; then
  grep '^SKIP:' "$log"
  echo "nothing checked (exit status $status)"
  exit "$status"
fi
passed=$(grep -c '^PASS ' "$log" || true)
failed=$(grep -c '^FAIL ' "$log" || true)
echo "cases per op (cuda backend vs cpu backend, 1-rank mesh; 'nccl' ="
echo "collectives through one-rank NCCL communicators):"
grep -E '^(PASS|FAIL) ' "$log" |
  awk '{ op = $2; if (op == "nccl") op = "nccl " $3;
         total[op]++; if ($1 == "FAIL") bad[op]++ }
       END { for (op in total)
               printf "  %-22s %3d case(s)%s\n", op, total[op],
                      bad[op] ? ", " bad[op] " FAILED" : "" }' | sort
echo "passed: $passed, failed: $failed, exit status: $status"
if [ "$status" -eq 0 ] && [ "$failed" -ne 0 ]; then
  status=1
fi
exit "$status"
