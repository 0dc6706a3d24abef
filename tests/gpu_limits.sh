#!/bin/bash
# gpu_limits.sh DPAMR DECK WORKDIR - the failure paths of the GPU engines are loud, never a
# truncated mesh: a forced small pending-launch pool, a tile store too small (cdp and host),
# and the depth cap. Exit 77 (skipped) without a CUDA device.
set -uo pipefail
dpamr=$1 deck=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3; $py -c "import h5py" 2>/dev/null || py=python3  # Debian's, else the PATH one (GPU machine)
cmp="$py $here/h5compare.py"
if ! "$dpamr" gpu; then echo "SKIPPED: no usable CUDA device"; exit 77; fi
rm -rf "$work" && mkdir -p "$work"
"$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf" >/dev/null || exit 1
m=mesh_file="$work/mesh.hdf"
fails=0
expect_error() {
    local name=$1 pattern=$2
    shift 2
    "$@" >"$work/stdout" 2>"$work/stderr"
    local rc=$?
    if [ $rc -eq 0 ] || ! grep -q -- "$pattern" "$work/stderr" || [ -e "$work/out.hdf" ]; then
        echo "FAIL $name (exit $rc):"; cat "$work/stderr"; fails=$((fails + 1))
    else
        echo "ok   $name: $(cat "$work/stderr")"
    fi
}
expect_error "forced small pool (cdp)" "device-side launches failed.*pool.*computed bound" \
    "$dpamr" run "$deck" "$m" variant=cdp pool=16 output="$work/out.hdf"
expect_error "tile store overflow (cdp)" "tile store overflow.*max_tiles" \
    "$dpamr" run "$deck" "$m" variant=cdp max_tiles=200 output="$work/out.hdf"
expect_error "tile store overflow (host)" "tile store overflow.*max_tiles" \
    "$dpamr" run "$deck" "$m" variant=host max_tiles=200 output="$work/out.hdf"
# the depth cap: no tile beyond max_level, and the same mesh as the cpu at that cap
for v in cpu cdp host; do
    "$dpamr" run "$deck" "$m" variant=$v max_level=3 output="$work/cap-$v.hdf" >/dev/null || fails=$((fails + 1))
done
levels=$($py -c "import h5py; print(h5py.File('$work/cap-cdp.hdf','r')['/dpamr/tiles/level'][()].max())")
if [ "$levels" != "3" ]; then echo "FAIL depth cap: finest level $levels, expected 3"; fails=$((fails + 1)); fi
$cmp "$work/cap-cpu.hdf" "$work/cap-cdp.hdf" --ignore /dpamr/deck || fails=$((fails + 1))
$cmp "$work/cap-cpu.hdf" "$work/cap-host.hdf" --ignore /dpamr/deck || fails=$((fails + 1))
# the pool the run reports is the computed bound, and it held every launch
"$dpamr" run "$deck" "$m" variant=cdp output="$work/ok.hdf" | tee "$work/ok.log" | grep "pending-launch pool"
grep -q "failed: 0" "$work/ok.log" || { echo "FAIL launches failed at the computed pool"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "gpu limits OK" || { echo "$fails case(s) failed"; exit 1; }
