#!/bin/bash
# gpu_limits.sh DPAMR DECK WORKDIR - the failure paths of the GPU engines are loud, never a
# truncated mesh: a forced small pending-launch pool, a tile store too small (cdp and hostlaunch; by
# max_tiles, and by the device's memory with max_tiles = 0), and the depth cap. Exit 77 (skipped) without a CUDA device.
set -uo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
skip_without_gpu "$dpamr"
fresh_dir "$work"
"$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf" >/dev/null || exit 1
m=mesh_file="$work/mesh.hdf"
# tile and group: a pool below what the run needs fails loudly, naming the grain and the bound (the
# device runtime grants at least 32 slots whatever is asked: measured on the H200, CUDA 13.0).
# level: one device-side launch per level step after the first (the host launches the first), at most
# 22, so the runtime's minimum holds any level chain: pool=1 is granted 32 and every launch succeeds. Every grain reports a full store.
for g in "tile:16" "group:2:cdp_group=4"; do
    IFS=: read -r grain pool extra <<<"$g"
    expect_error "forced small pool (cdp $grain)" "device-side launches failed.*pool of [0-9]* is too small.*cdp_grain=$grain.*computed bound" \
        "$dpamr" run "$deck" "$m" variant=cdp cdp_grain=$grain ${extra:+$extra} pool=$pool output="$work/out.hdf"
done
"$dpamr" run "$deck" "$m" variant=cdp cdp_grain=level pool=1 output="$work/level-pool1.hdf" >"$work/stdout" 2>&1
if grep -q "pending-launch pool: 32 granted (asked 1; computed bound 11); device launches: 11, failed: 0" "$work/stdout"; then
    echo "ok   cdp level at pool=1: $(grep pending-launch "$work/stdout")"
else
    fail "cdp level at pool=1:"; cat "$work/stdout"
fi
for g in tile "group cdp_group=4" level; do
    expect_error "tile store overflow (cdp $g)" "tile store overflow.*max_tiles" \
        "$dpamr" run "$deck" "$m" variant=cdp cdp_grain=$g max_tiles=200 output="$work/out.hdf"
done
expect_error "tile store overflow (hostlaunch)" "tile store overflow.*max_tiles" \
    "$dpamr" run "$deck" "$m" variant=hostlaunch max_tiles=200 output="$work/out.hdf"
# capacity from the device's memory (max_tiles = 0; DPAMR_TEST_DEVICE_FREE=BYTES stands for a device
# with that much free). 8 MB (4 MB usable) holds a few thousand of deep2d's 34895 tiles: every engine
# stops before writing, naming the device's memory and what it holds.
for v in "cdp cdp_grain=tile" "cdp cdp_grain=group cdp_group=4" "cdp cdp_grain=level" hostlaunch; do
    expect_error "device memory too small ($v)" \
        "tile store overflow on the device: .*the device's 7.6 MiB free hold at most [0-9]* tiles of this deck.*lower max_level" \
        env DPAMR_TEST_DEVICE_FREE=8000000 "$dpamr" run "$deck" "$m" variant=$v max_tiles=0 output="$work/out.hdf"
done
# max_tiles asking more than the device has: refused before any allocation, asked and available named
expect_error "max_tiles past the device's memory" \
    "the device lacks memory for this run: max_tiles = 1000000; the tile store and the engine's scratch for 1000000 tiles need .* GiB, the device has .* GiB free" \
    env DPAMR_TEST_DEVICE_FREE=100000000 "$dpamr" run "$deck" "$m" variant=hostlaunch max_tiles=1000000 output="$work/out.hdf"
# 1 GB (500 MB usable) holds it: the capacity line names the device, and the mesh is the cpu's
"$dpamr" run "$deck" "$m" variant=cpu output="$work/full-cpu.hdf" >/dev/null || fail "the full cpu run"
for v in "cdp cdp_grain=tile" "cdp cdp_grain=group cdp_group=4" "cdp cdp_grain=level" hostlaunch; do
    name=$(echo "$v" | tr ' =' '__')
    DPAMR_TEST_DEVICE_FREE=1000000000 "$dpamr" run "$deck" "$m" variant=$v max_tiles=0 output="$work/mem-$name.hdf" \
        >"$work/mem.log" 2>&1 || { fail "device-limited capacity ($v): the run"; cat "$work/mem.log"; continue; }
    grep -q "tile store capacity [0-9]*: the device's 953.7 MiB free hold at most [0-9]* tiles" "$work/mem.log" ||
        { fail "device-limited capacity ($v): no capacity line naming the device"; cat "$work/mem.log"; }
    h5cmp "$work/full-cpu.hdf" "$work/mem-$name.hdf" --ignore /dpamr/deck || fail "device-limited capacity ($v): differs from cpu"
    echo "ok   device-limited capacity ($v): $(grep "tile store capacity" "$work/mem.log")"
done
# the transfers staged in chunks of an odd size (DPAMR_TEST_STAGE_CHUNK; deep2d's 10 MB download is
# below the size staged otherwise): chunks cross no array's end, the last one of each is short
for v in "cdp cdp_grain=tile" "cdp cdp_grain=level" hostlaunch; do
    name=$(echo "$v" | tr ' =' '__')
    DPAMR_TEST_STAGE_CHUNK=12345 "$dpamr" run "$deck" "$m" variant=$v output="$work/stage-$name.hdf" >"$work/stage.log" 2>&1 ||
        { fail "staged transfers ($v): the run"; cat "$work/stage.log"; continue; }
    grep -q "pageable" "$work/stage.log" && fail "staged transfers ($v): went pageable: $(grep pageable "$work/stage.log")"
    h5cmp "$work/full-cpu.hdf" "$work/stage-$name.hdf" --ignore /dpamr/deck || fail "staged transfers ($v): differs from cpu"
done
echo "ok   staged transfers in chunks of 12345 bytes: cdp tile, cdp level, hostlaunch match cpu"
# the depth cap: no tile beyond max_level, and the same mesh as the cpu at that cap
"$dpamr" run "$deck" "$m" variant=cpu max_level=3 output="$work/cap-cpu.hdf" >/dev/null || fail "depth cap: the cpu run"
for v in "cdp cdp_grain=tile" "cdp cdp_grain=group" "cdp cdp_grain=level" hostlaunch; do
    name=$(echo "$v" | tr ' =' '__')
    "$dpamr" run "$deck" "$m" variant=$v max_level=3 output="$work/cap-$name.hdf" >/dev/null || fail "depth cap ($v): the run"
    levels=$($py -c "import h5py, numpy as np; print(np.flatnonzero(np.diff(h5py.File('$work/cap-$name.hdf','r')['/dpamr/level_start'][()])).max())")
    if [ "$levels" != "3" ]; then fail "depth cap ($v): finest level $levels, expected 3"; fi
    h5cmp "$work/cap-cpu.hdf" "$work/cap-$name.hdf" --ignore /dpamr/deck || fail "depth cap ($v): differs from cpu"
done
# the pool each grain reports is its computed bound, and it held every launch
for grain in tile group level; do
    "$dpamr" run "$deck" "$m" variant=cdp cdp_grain=$grain output="$work/ok-$grain.hdf" | tee "$work/ok.log" |
        grep "pending-launch pool"
    grep -q "failed: 0" "$work/ok.log" || fail "launches failed at the computed pool ($grain)"
done
# level: the bound is one launch per level step after the first (deep2d: levels 0..12, 12 steps)
grep -q "pending-launch pool: 32 granted (asked 11; computed bound 11); device launches: 11" "$work/ok.log" ||
    fail "level grain: pool and launches are not the 11 device-launched level steps"
finish "gpu limits"
