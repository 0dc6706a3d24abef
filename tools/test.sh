#!/bin/bash
# test.sh - build and run the whole test suite. GPU tests (label gpu) report "skipped" without a
# CUDA device; pass ctest arguments through, e.g. `bash tools/test.sh -L gpu`.
# Two builds: build/ with DPAMR_MPI=ON when an MPI compiler is installed (every test, MPI included),
# and build-nompi/, the default configuration (unit, end-to-end and error tests); then build-asan/
# (AddressSanitizer + UBSan, CPU only: unit, end-to-end and error tests) and build-fuzz/ (clang's
# libFuzzer: the deck parser and the HDF5 loaders, about 25 s each; docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v mpicc >/dev/null && command -v mpiexec >/dev/null; then
    bash tools/build.sh build -DDPAMR_MPI=ON
else
    echo "test.sh: no MPI (mpicc, mpiexec) found: the MPI tests are not built" >&2
    bash tools/build.sh build -DDPAMR_MPI=OFF
fi
ctest --test-dir build --output-on-failure "$@"
# scratch of tests that passed: kept after a failure (set -e stops before this), else removed, so the
# builds below do not add theirs to it (each holds outputs of up to a gigabyte)
rm -rf build/tests/work
if [ $# -eq 0 ]; then
    echo "== the default configuration (no MPI): build-nompi/"
    bash tools/build.sh build-nompi -DDPAMR_MPI=OFF
    ctest --test-dir build-nompi --output-on-failure -L "unit|e2e|errors" -E "paraview|e2e_bench"
    rm -rf build-nompi/tests/work
    echo "== AddressSanitizer + UBSan (Debug, CPU only): build-asan/"
    # any sanitizer report (a leak too, at exit) ends the process with an error: the test fails
    san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DDPAMR_CUDA=OFF -DDPAMR_MPI=OFF \
        "-DCMAKE_C_FLAGS=$san" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
    cmake --build build-asan -j "$(nproc)"
    ctest --test-dir build-asan --output-on-failure -L "unit|e2e|errors" -E "paraview|e2e_bench"
    rm -rf build-asan/tests/work
    if command -v clang >/dev/null; then
        echo "== fuzz targets (clang libFuzzer, ASan + UBSan, about 25 s each): build-fuzz/"
        CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DDPAMR_CUDA=OFF -DDPAMR_MPI=OFF -DDPAMR_FUZZ=ON \
            "-DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
            "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
        cmake --build build-fuzz -j "$(nproc)"
        ctest --test-dir build-fuzz --output-on-failure -L fuzz
    else
        echo "test.sh: no clang found: the fuzz targets are not built (tools/deps.sh installs clang)" >&2
    fi
fi
