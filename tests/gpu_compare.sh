#!/bin/bash
# gpu_compare.sh DPAMR DECK WORKDIR - cdp and host (pdl on and off, and restarting from a file)
# against cpu, byte for byte.
# Exit 77 (CTest: skipped) when no CUDA device is usable.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3; $py -c "import h5py" 2>/dev/null || py=python3  # Debian's, else the PATH one (GPU machine)
cmp="$py $here/h5compare.py"
if ! "$dpamr" gpu; then echo "SKIPPED: no usable CUDA device"; exit 77; fi
rm -rf "$work" && mkdir -p "$work"
mesh=${deck%.inp}.mesh.hdf
extra=()
if [ ! -e "$mesh" ]; then  # test decks make their level-0 mesh here
    "$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf"
    extra=(mesh_file="$work/mesh.hdf")
fi
"$dpamr" run "$deck" "${extra[@]}" variant=cpu output="$work/cpu.hdf"
for v in cdp host; do
    for pdl in on off; do
        "$dpamr" run "$deck" "${extra[@]}" variant=$v pdl=$pdl output="$work/$v-$pdl.hdf"
        $cmp "$work/cpu.hdf" "$work/$v-$pdl.hdf" --ignore /dpamr/deck
        "$dpamr" check "$work/$v-$pdl.hdf" >/dev/null
    done
done
# the early PDL trigger changes scheduling only
"$dpamr" run "$deck" "${extra[@]}" variant=host pdl=on pdl_trigger=early output="$work/host-early.hdf"
$cmp "$work/cpu.hdf" "$work/host-early.hdf" --ignore /dpamr/deck
# restarts on the GPU: continue a level-2 cpu file to max_level, and reload a finished file
"$dpamr" run "$deck" "${extra[@]}" variant=cpu max_level=2 output="$work/part.hdf" >/dev/null
for v in cdp host; do
    "$dpamr" run "$deck" variant=$v mesh_file="$work/part.hdf" output="$work/restart-$v.hdf"
    $cmp "$work/cpu.hdf" "$work/restart-$v.hdf" --ignore /dpamr/deck
    "$dpamr" run "$deck" variant=$v mesh_file="$work/cpu.hdf" output="$work/again-$v.hdf" >/dev/null
    $cmp "$work/cpu.hdf" "$work/again-$v.hdf" --ignore /dpamr/deck
done
echo "gpu OK: cdp and host, pdl on and off, and restarts, byte-identical to cpu on $deck"
