#!/usr/bin/env bash
# Builds libFuzzer harnesses (clang, AddressSanitizer, UndefinedBehaviorSanitizer)
# for the inputs parc reads without MLIR: plan and cluster files
# (PlanFilesFuzzer), safetensors weights (SafetensorsFuzzer) and a compiled
# program's flags (LauncherFlagsFuzzer), and runs each from its seed corpus
# in fuzz/corpus/.
#
#   scripts/fuzz.sh [SECONDS_PER_FUZZER]   (default 60; CI's smoke runs 5)
#
# A crash or a sanitizer report stops the script with the reproducer that
# libFuzzer writes (crash-*) in build-fuzz/. Findings join the corpus.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
out=${PARC_FUZZ_DIR:-$root/build-fuzz}
llvm=/usr/lib/llvm-22
mkdir -p "$out"
flags=(-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -fno-rtti
       -I"$root/include" -I"$root/runtime/include" -I"$llvm/include")
llvmLibs=(-L"$llvm/lib" -Wl,-rpath,"$llvm/lib" -lLLVM)

build() {
  local name=$1
  shift
  echo "building $name"
  clang++ "${flags[@]}" "$root/fuzz/$name.cpp" "$@" -o "$out/$name"
}
build PlanFilesFuzzer "$root/lib/Plan/Plan.cpp" "$root/lib/Plan/Cluster.cpp" \
  "$root/lib/Plan/StrictJson.cpp" "${llvmLibs[@]}"
build SafetensorsFuzzer "$root/runtime/io/Safetensors.cpp" "$root/runtime/io/Values.cpp"
build LauncherFlagsFuzzer -I"$root/runtime" "$root/runtime/main/Options.cpp"

for target in plan-files:PlanFilesFuzzer safetensors:SafetensorsFuzzer \
    launcher-flags:LauncherFlagsFuzzer; do
  corpus=${target%%:*} name=${target#*:}
  # libFuzzer adds what it finds to the first directory: a scratch copy
  # keeps the repository's seeds as they are.
  work="$out/corpus-$corpus"
  mkdir -p "$work"
  cp -n "$root/fuzz/corpus/$corpus"/* "$work/" 2>/dev/null || true
  echo "fuzzing $name for ${seconds}s"
  (cd "$out" && ASAN_OPTIONS=detect_leaks=1 "./$name" -max_total_time="$seconds" \
     -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
     "$work" 2>&1 | tail -4)
done
