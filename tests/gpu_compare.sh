#!/bin/bash
# gpu_compare.sh DPAMR DECK WORKDIR - cdp and hostlaunch (pdl on and off, and restarting from a file)
# against cpu, byte for byte (with the deck's balance, e.g. tests/decks/balance2d.inp).
# Exit 77 (CTest: skipped) when no CUDA device is usable.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
skip_without_gpu "$dpamr"
fresh_dir "$work"
mesh=${deck%.inp}.mesh.hdf
extra=()
if [ ! -e "$mesh" ]; then  # test decks make their level-0 mesh here
    "$dpamr" mesh "$deck" mesh_file="$work/mesh.hdf"
    extra=(mesh_file="$work/mesh.hdf")
fi
"$dpamr" run "$deck" "${extra[@]}" variant=cpu output="$work/cpu.hdf"
# every cdp grain (one child grid per tile, per group of 1, 5 and 32 tiles, per level) and hostlaunch
for v in "cdp cdp_grain=tile" "cdp cdp_grain=group cdp_group=1" "cdp cdp_grain=group cdp_group=5" \
         "cdp cdp_grain=group cdp_group=32" "cdp cdp_grain=level" hostlaunch; do
    name=$(echo "$v" | tr ' =' '__')
    for pdl in on off; do
        "$dpamr" run "$deck" "${extra[@]}" variant=$v pdl=$pdl output="$work/$name-$pdl.hdf"
        h5cmp "$work/cpu.hdf" "$work/$name-$pdl.hdf" --ignore /dpamr/deck
        "$dpamr" check "$work/$name-$pdl.hdf" >/dev/null
        rm -f "$work/$name-$pdl.hdf"
    done
done
# the early PDL trigger changes scheduling only
"$dpamr" run "$deck" "${extra[@]}" variant=hostlaunch pdl=on pdl_trigger=early output="$work/host-early.hdf"
h5cmp "$work/cpu.hdf" "$work/host-early.hdf" --ignore /dpamr/deck
# restarts on the GPU: continue a level-2 cpu file to max_level, and reload a finished file
"$dpamr" run "$deck" "${extra[@]}" variant=cpu max_level=2 output="$work/part.hdf" >/dev/null
"$dpamr" run "$deck" variant=cpu mesh_file="$work/part.hdf" output="$work/restart-cpu.hdf" >/dev/null
# without balance the restart reaches the same mesh; with balance = 2:1 the criterion then refines the
# tiles level 2's balance added, so the reference is the cpu's restart
grep -Eq '^balance *= *2:1' "$deck" || h5cmp "$work/cpu.hdf" "$work/restart-cpu.hdf" --ignore /dpamr/deck
for v in cdp host; do  # host: the old name of hostlaunch, still accepted
    # cdp's default grain (level) restarts; the other grains start from the same code path
    "$dpamr" run "$deck" variant=$v mesh_file="$work/part.hdf" output="$work/restart-$v.hdf"
    h5cmp "$work/restart-cpu.hdf" "$work/restart-$v.hdf" --ignore /dpamr/deck
    "$dpamr" run "$deck" variant=$v mesh_file="$work/cpu.hdf" output="$work/again-$v.hdf" >/dev/null
    h5cmp "$work/cpu.hdf" "$work/again-$v.hdf" --ignore /dpamr/deck
done
echo "gpu OK: cdp (every grain) and hostlaunch, pdl on and off, and restarts, byte-identical to cpu on $deck"
