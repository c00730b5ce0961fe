#!/usr/bin/env bash
# Installs dependencies, builds parc and runs every test (lit + GoogleTest)
# through ctest, whose last line counts passed and failed tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PARC_BUILD_DIR:-$root/build}

"$root/scripts/setup-deps.sh"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)"
