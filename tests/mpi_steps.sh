#!/bin/bash
# mpi_steps.sh MPIEXEC DPAMR DPAMR_SERIAL SRC WORKDIR [VARIANT] - time steps on several ranks, each
# rank regridding its part with VARIANT (default cpu; a GPU variant exits 77 without a device):
#  - inputs/moving2d.inp (fill = prolong, 24 steps, a file every 4) and inputs/moving3d.inp (fill =
#    model, 8 steps) with -np 1, 2 and 3 (a GPU variant: 2 and 3, the ranks sharing the device):
#    every output step's file has the datasets of dpamr_serial's variant=cpu run (the driver built
#    without MPI) byte for byte (h5compare.py: all but /dpamr/provenance, whose rank table differs),
#    the same series file, and the same per-step lines (counts, conservation, total hash; the times
#    taken out);
#  - tests/decks/skew2d.inp on 3 ranks, one of whose parts holds no root tile: the same files;
#  - restart with 2 ranks from step 12's file: the continued series equals the uninterrupted one;
#  - variant cpu only: with a parallel HDF5 (the runs above write collectively), np 2 with
#    mpi_write=gather too; still refused with 2 ranks: balance = 2:1.
set -uo pipefail
mpiexec=$1 dpamr=$2 serial=$3 src=$4 work=$5 variant=${6:-cpu}
source "$(dirname "$0")/lib.sh"
source "$tests/mpi_flags.sh"
nps="1 2 3" ign=()
if [ "$variant" != cpu ]; then
    skip_without_gpu "$serial" "variant=$variant needs a CUDA device"
    nps="2 3" ign=(--ignore /dpamr/deck) # the deck as run names the variant
fi
fresh_dir "$work"
d2=$src/inputs/moving2d.inp d3=$src/inputs/moving3d.inp
mrun() { # DIR NP ARGS...: mpirun dpamr run in DIR, log.txt and err.txt there
    local dir=$1 np=$2
    shift 2
    (cd "$dir" && timeout -k 5 120 "$mpiexec" "${mpiflags[@]}" -np "$np" "$dpamr" run "$@" >log.txt 2>err.txt)
}
lines() { # LOG: the per-step lines without their times (and a GPU variant's transfers and launches)
    grep -E "^step [0-9]+ t=|^  step [0-9]+ validated|^wrote " "$1" | sed -E 's/ in [0-9.]+ ms$//;
        s/, regrid [0-9.]+ ms \([^)]*\)//; s/, device events; transfer [0-9.]+ ms//; s/, [0-9]+ device launch\(es\)//'
}
# same NAME SERIALDIR DIR IGNORE...: every step file and the series of SERIALDIR in DIR, and the lines
same() {
    local name=$1 a=$2 b=$3
    shift 3
    local n=0
    for f in "$a"/*.hdf; do
        [ -f "$b/$(basename "$f")" ] || { fail "$name: $(basename "$f") not written"; continue; }
        h5cmp "$f" "$b/$(basename "$f")" "$@" >/dev/null || fail "$name: $(basename "$f") differs from the serial run"
        n=$((n + 1))
    done
    cmp -s "$a"/*.series "$b"/*.series || fail "$name: the series file differs"
    ls "$b" | grep -q "\.tmp\." && fail "$name: temporary file left behind"
    echo "$name: $n step files and the series identical to the serial run"
}
run_deck() { # DECK TAG ARGS...: the serial cpu run, then each np of nps with the variant
    local deck=$1 tag=$2
    shift 2
    mkdir -p "$work/$tag.serial"
    (cd "$work/$tag.serial" && "$serial" run "$deck" variant=cpu output=s_%05d.hdf "$@" >log.txt) ||
        { fail "$tag: the serial run"; return; }
    for np in $nps; do
        mkdir -p "$work/$tag.np$np"
        mrun "$work/$tag.np$np" "$np" "$deck" variant="$variant" output=s_%05d.hdf "$@" ||
            { fail "$tag: mpirun -np $np"; cat "$work/$tag.np$np/err.txt"; continue; }
        same "$tag np $np" "$work/$tag.serial" "$work/$tag.np$np" "${ign[@]}"
        diff <(lines "$work/$tag.serial/log.txt") <(lines "$work/$tag.np$np/log.txt") | head -6 ||
            fail "$tag np $np: the per-step lines differ from the serial run's"
    done
}

echo "== moving2d, 24 steps, a file every 4: np $nps, variant $variant, against the serial cpu run"
run_deck "$d2" m2 steps=24 output_every=4
nv=$(grep -c "^  step [0-9]* validated.*conserved" "$work/m2.np3/log.txt")
[ "$nv" -eq 7 ] || fail "moving2d np 3: expected 7 validated and conserved output steps, the log says $nv"
echo "== moving3d, 8 steps: np $nps, variant $variant, against the serial cpu run"
run_deck "$d3" m3 steps=8

echo "== a rank whose part holds no root tile (tests/decks/skew2d.inp on 3 ranks): its steps are empty"
if "$serial" mesh "$src/tests/decks/skew2d.inp" mesh_file="$work/skew2d.mesh.hdf" >/dev/null; then
    run_deck "$src/tests/decks/skew2d.inp" sk mesh_file="$work/skew2d.mesh.hdf"
    grep -q "\[0,0)" "$work/sk.np3/log.txt" || fail "skew2d np 3: no empty part in the partition line"
    # each rank's own time in a step file's rank table (the provenance keeps the slowest's): the
    # rank without tiles refined nothing, so its time is below the slowest
    $py - "$work/sk.np3/s_00002.hdf" <<'PY' || fail "skew2d np 3: the rank table's times"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
t = f["/dpamr/provenance/ranks"][()]
empty = [r for r in t if r["tiles"] == 0]
assert empty and all(r["refine_ms"] < t["refine_ms"].max() for r in empty), t
assert f["/dpamr/provenance"].attrs["refine_ms"] == t["refine_ms"].max(), (f["/dpamr/provenance"].attrs["refine_ms"], t)
print(f"ok   skew2d np 3: each rank's own time in the rank table ({', '.join('%.3f' % x for x in t['refine_ms'])} ms)")
PY
else
    fail "skew2d: dpamr mesh"
fi

if [ "$variant" = cpu ] && "$dpamr" --version | grep -q "parallel HDF5: yes"; then # the runs above wrote collectively
    echo "== moving2d, np 2, mpi_write=gather"
    mkdir -p "$work/gather"
    if mrun "$work/gather" 2 "$d2" variant=cpu output=s_%05d.hdf steps=24 output_every=4 mpi_write=gather; then
        same "gather np 2" "$work/m2.serial" "$work/gather" --ignore /dpamr/deck
    else
        fail "mpi_write=gather with 2 ranks"; cat "$work/gather/err.txt"
    fi
fi

echo "== restart with 2 ranks from step 12: the uninterrupted series"
mkdir -p "$work/restart"
for j in 00000 00004 00008 00012; do cp "$work/m2.serial/s_$j.hdf" "$work/restart/"; done
if mrun "$work/restart" 2 "$d2" variant="$variant" output=s_%05d.hdf steps=24 output_every=4 mesh_file=s_00012.hdf; then
    grep -q "continues the series from step 12" "$work/restart/log.txt" || fail "restart: no continuation line"
    same "restart np 2" "$work/m2.serial" "$work/restart" --ignore /dpamr/deck
else
    fail "restart with 2 ranks"; cat "$work/restart/err.txt"
fi

[ "$variant" = cpu ] || { finish "mpi_steps $variant"; exit; }
echo "== refused with 2 ranks"
mkdir -p "$work/refused"
for what in "balance=2:1|balance = 2:1 runs on one rank in this version"; do
    key=${what%%|*} msg=${what#*|}
    if mrun "$work/refused" 2 "$d2" output=s_%05d.hdf steps=4 "$key"; then
        fail "$key with 2 ranks was not refused"
    elif ! grep -q "$msg" "$work/refused/err.txt"; then
        fail "$key with 2 ranks: expected '$msg'"; cat "$work/refused/err.txt"
    elif [ "$(grep -c "dpamr: error:" "$work/refused/err.txt")" -ne 1 ]; then
        fail "$key with 2 ranks: not one message"; cat "$work/refused/err.txt"
    else
        echo "refused: $key ($msg)"
    fi
    ls "$work/refused" | grep -q "\.hdf" && fail "$key: a file was written"
done
finish mpi_steps
