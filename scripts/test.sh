#!/usr/bin/env bash
# Installs dependencies, builds parc, runs each fuzzer for 5 seconds
# (scripts/fuzz.sh) and every test (lit + GoogleTest) through ctest, whose
# last line counts passed and failed tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PARC_BUILD_DIR:-$root/build}

"$root/scripts/setup-deps.sh"
"$root/scripts/build.sh"
# A fixed seed: CI repeats the same smoke instead of drawing new inputs.
PARC_FUZZ_SEED=1 PARC_FUZZ_DIR="$build/fuzz" "$root/scripts/fuzz.sh" 5
cd "$build"
ctest --output-on-failure -j "$(nproc)"
