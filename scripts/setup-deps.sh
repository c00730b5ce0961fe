#!/usr/bin/env bash
# Installs every Debian package parc needs to build and test. Idempotent: a quick
# no-op when all packages are present.
set -euo pipefail

packages=(
  # Compiler infrastructure: MLIR/LLVM 22, lit and FileCheck.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  cmake ninja-build g++ ccache pkg-config
  # Libraries.
  nlohmann-json3-dev libgtest-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  libopenblas-dev libopenmpi-dev openmpi-bin coinor-libcbc-dev
  # oneDNN: the cpu backend's GEMMs and vectorized activations
  # (runtime/cpu/Dnnl.h).
  libdnnl-dev
  # Test fixtures.
  python3-onnx python3-numpy
  # Fuzzing (scripts/fuzz.sh): clang with libFuzzer and the sanitizers.
  # libomp-dev: clang's OpenMP runtime, for libparcrt's threads in that build.
  clang libclang-rt-14-dev libomp-dev
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
