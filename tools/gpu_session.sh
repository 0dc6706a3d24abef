#!/bin/bash
# gpu_session.sh [bench decks...] - what one call on the GPU machine does: configure and build for
# sm_90 (CMAKE_ARGS adds options, e.g. -DDPAMR_MPI=ON), run `dpamr bench` on the given decks (it checks
# every variant byte-identical before timing), then the tests of CTEST_LABEL (default gpu, which includes
# gpu_validate_bench: the GPU validator against the CPU's on bench2d and bench3d; TESTS=0
# skips them; CTEST_EXCLUDE=regex leaves tests out), then, with PROFILE="DECK...", Nsight Compute on those decks (tools/gpu_profile.sh).
# Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv; nvcc --version | tail -2; } \
    2>&1 | tee "$out/machine.txt"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 ${CMAKE_ARGS:-} >"$out/build.log" 2>&1 &&
    cmake --build build-gpu -j16 >>"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
# each argument: a deck path, optionally followed by overrides after a colon ("deck.inp:key=v,key=v")
for arg in "$@"; do
    deck=${arg%%:*} over=""
    [ "$arg" != "$deck" ] && over=${arg#*:}
    name=$(basename "$deck" .inp)${over:+_$(echo "$over" | tr ',=' '__')}
    if [ ! -e "${deck%.inp}.mesh.hdf" ]; then  # test decks: make their level-0 mesh first
        mkdir -p build-gpu/meshes
        # an absolute path: a relative mesh_file= is read from the deck's folder
        ./build-gpu/dpamr mesh "$deck" mesh_file="$PWD/build-gpu/meshes/$name.mesh.hdf" >"$out/mesh_$name.log" 2>&1 ||
            { tail -3 "$out/mesh_$name.log"; continue; }
        over="${over:+$over,}mesh_file=$PWD/build-gpu/meshes/$name.mesh.hdf"
    fi
    ./build-gpu/dpamr bench "$deck" ${over//,/ } bench_out="${BENCH_OUT_DIR:-$out}/bench_$name" 2>&1 | tee "$out/bench_$name.log"
done

[ "${TESTS:-1}" = 1 ] && ctest --test-dir build-gpu --output-on-failure -L "${CTEST_LABEL:-gpu}" ${CTEST_EXCLUDE:+-E "$CTEST_EXCLUDE"} -j4 2>&1 | tee "$out/ctest.log" | tail -25
for deck in ${PROFILE:-}; do bash tools/gpu_profile.sh ./build-gpu/dpamr "$deck" "$out/profile"; done
