#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ (clang, AddressSanitizer,
# UndefinedBehaviorSanitizer, coverage instrumentation of parc's own code)
# and runs each from its seed corpus in fuzz/corpus/: MLIR text through the
# passes and the evaluator (MlirPassesFuzzer), ONNX files through the
# importer, the passes and the evaluator (OnnxImportFuzzer), plan and
# cluster files (PlanFilesFuzzer), safetensors weights (SafetensorsFuzzer)
# and a compiled program's flags (LauncherFlagsFuzzer).
#
#   scripts/fuzz.sh [SECONDS_PER_FUZZER] [FUZZER...]   (default 60, all)
#
# A crash, a sanitizer report, a leak or an input slower than 10 s stops the
# script with the reproducer that libFuzzer writes (crash-*, timeout-*) in
# the build directory. Findings worth keeping join the corpus.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
# Absolute: the fuzzers run from inside it.
out=$(realpath -m "${PARC_FUZZ_DIR:-$root/build-fuzz}")
all=(mlir:MlirPassesFuzzer onnx:OnnxImportFuzzer plan-files:PlanFilesFuzzer
     safetensors:SafetensorsFuzzer launcher-flags:LauncherFlagsFuzzer)
targets=()
for each in "${all[@]}"; do
  if [ $# -eq 0 ] || [[ " $* " == *" ${each#*:} "* ]]; then
    targets+=("$each")
  fi
done

sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
if [ ! -f "$out/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -G Ninja -S "$root" -B "$out" \
    -DCMAKE_BUILD_TYPE=Debug -DPARC_FUZZERS=ON \
    -DCMAKE_C_FLAGS="-O1 $sanitizers -fsanitize=fuzzer-no-link" \
    -DCMAKE_CXX_FLAGS="-O1 $sanitizers -fsanitize=fuzzer-no-link" \
    -DCMAKE_C_FLAGS_DEBUG=-gline-tables-only \
    -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
    -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >"$out.configure.log" ||
    { cat "$out.configure.log"; exit 1; }
fi
# Paths relative to the checkout, so that clones elsewhere (CI) share ccache
# entries.
CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1 ninja -C "$out" "${targets[@]#*:}"

for target in "${targets[@]}"; do
  corpus=${target%%:*} name=${target#*:}
  # libFuzzer adds what it finds to the first directory: a scratch copy
  # keeps the repository's seeds as they are.
  work="$out/corpus-$corpus"
  mkdir -p "$work"
  cp -n "$root/fuzz/corpus/$corpus"/* "$work/" 2>/dev/null || true
  extra=()
  # A fixed seed (PARC_FUZZ_SEED) makes a short run repeat itself.
  if [ -n "${PARC_FUZZ_SEED:-}" ]; then
    extra+=(-seed="$PARC_FUZZ_SEED")
  fi
  if [ -f "$root/fuzz/$corpus.dict" ]; then
    extra+=(-dict="$root/fuzz/$corpus.dict")
  fi
  echo "fuzzing $name for ${seconds}s"
  log="$out/$name.log"
  # LLVM's allocators poison their free memory in code compiled here but
  # not in Debian's MLIR libraries (gcc, no ASan): the poisoning would
  # report every allocation those libraries inline.
  if ! (cd "$out" && ASAN_OPTIONS=detect_leaks=1:allow_user_poisoning=0 \
          "./fuzz/$name" \
          -max_total_time="$seconds" -max_len=262144 -timeout=10 \
          -rss_limit_mb=4096 -print_final_stats=1 "${extra[@]}" \
          "$work" >"$log" 2>&1); then
    tail -60 "$log"
    echo "fuzz: $name failed; its reproducer is in $out" >&2
    exit 1
  fi
  tail -4 "$log"
done
