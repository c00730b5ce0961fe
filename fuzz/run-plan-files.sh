#!/usr/bin/env bash
# Fuzzes the plan.json and cluster.json readers (libFuzzer, ASan, UBSan) for
# SECONDS (default 120), seeded with the test fixtures.
#
#   fuzz/run-plan-files.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-120}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined \
  -I "$root/include" -I /usr/lib/llvm-22/include \
  "$root/fuzz/PlanFilesFuzzer.cpp" "$root/lib/Plan/StrictJson.cpp" \
  "$root/lib/Plan/Plan.cpp" "$root/lib/Plan/Cluster.cpp" \
  -L /usr/lib/llvm-22/lib -lLLVM -Wl,-rpath,/usr/lib/llvm-22/lib \
  -o "$work/fuzzer"
mkdir "$work/corpus"
cp "$root"/test/Transforms/sharding/Inputs/*.json \
   "$root"/test/Transforms/sharding/Inputs/bad/*.json \
   "$root"/test/tools/parc-plan/Inputs/*.json "$work/corpus/"
"$work/fuzzer" -max_total_time="$seconds" -max_len=4096 "$work/corpus" 2>&1 |
  tail -5
