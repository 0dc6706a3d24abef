#!/bin/bash
# build.sh [BUILD_DIR [CMAKE_ARGS...]] - configure and build dpamr (Release; CUDA engines when nvcc
# is found). Extra arguments go to cmake, e.g. `bash tools/build.sh build -DDPAMR_MPI=ON`.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" -j "$(nproc)"
