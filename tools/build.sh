#!/bin/bash
# build.sh [BUILD_DIR] - configure and build dpamr (Release; CUDA engines when nvcc is found).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(nproc)"
