#!/bin/bash
# test.sh - build and run the whole test suite. GPU tests (label gpu) report "skipped" without a
# CUDA device; pass ctest arguments through, e.g. `bash tools/test.sh -L gpu`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh build
ctest --test-dir build --output-on-failure "$@"
