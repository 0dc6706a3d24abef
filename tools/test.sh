#!/bin/bash
# test.sh - build and run the whole test suite. GPU tests (label gpu) report "skipped" without a
# CUDA device; pass ctest arguments through, e.g. `bash tools/test.sh -L gpu`.
# Two builds: build/ with DPAMR_MPI=ON when an MPI compiler is installed (every test, MPI included),
# and build-nompi/, the default configuration (unit, end-to-end and error tests).
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v mpicc >/dev/null && command -v mpiexec >/dev/null; then
    bash tools/build.sh build -DDPAMR_MPI=ON
else
    echo "test.sh: no MPI (mpicc, mpiexec) found: the MPI tests are not built" >&2
    bash tools/build.sh build -DDPAMR_MPI=OFF
fi
ctest --test-dir build --output-on-failure "$@"
if [ $# -eq 0 ]; then
    echo "== the default configuration (no MPI): build-nompi/"
    bash tools/build.sh build-nompi -DDPAMR_MPI=OFF
    ctest --test-dir build-nompi --output-on-failure -L "unit|e2e|errors" -E "paraview|e2e_bench"
fi
