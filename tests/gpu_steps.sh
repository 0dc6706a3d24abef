#!/bin/bash
# gpu_steps.sh DPAMR SRC WORKDIR - time steps on the GPU (issue 15): the moving decks regridded by
# hostlaunch and cdp, pdl off and on, against cpu at EVERY output step, byte for byte (h5compare:
# every dataset; the stored deck differs by its variant override), the series files identical; the
# same with balance = 2:1 (the GPU's balance after every regrid); a
# restart on the GPU from a cpu step file; the same overflow message as cpu for a max_tiles below a
# step's need; `dpamr bench` on a moving deck timing every variant.
# Exit 77 (CTest: skipped) when no CUDA device is usable. GPU_STEPS_PARTS (default: all) runs some of
# its parts: compare (the moving decks; restart and overflow need it), balance, tile32 (tile_size 32 in
# 3D, past 48 KB of shared memory per block), restart, overflow, bench.
set -uo pipefail
dpamr=$1 src=$2 work=$3
source "$(dirname "$0")/lib.sh"
skip_without_gpu "$dpamr"
fresh_dir "$work"
d2=$src/inputs/moving2d.inp
d3=$src/inputs/moving3d.inp
parts=" ${GPU_STEPS_PARTS:-compare balance tile32 restart overflow bench} "
want() { [[ $parts == *" $1 "* ]]; }
variants=("hostlaunch pdl=off" "hostlaunch pdl=on" "cdp pdl=off" "cdp pdl=on" "hostlaunch pdl=on pdl_trigger=early")

# run NAME DECK ARGS...: `dpamr run DECK ARGS` in $work/NAME (fresh), output s_%05d.hdf
run() {
    local name=$1 deck=$2
    shift 2
    fresh_dir "$work/$name"
    if ! (cd "$work/$name" && "$dpamr" run "$deck" mesh_file="${deck%.inp}.mesh.hdf" output=s_%05d.hdf "$@" \
            >run.log 2>&1); then
        fail "$name: run failed"
        tail -20 "$work/$name/run.log"
        return 1
    fi
}

# same REF NAME: every step file of REF in NAME with the same datasets, and the same series
same() {
    local ref=$1 name=$2 n=0 f
    for f in "$work/$ref"/s_*.hdf; do
        h5cmp "$f" "$work/$name/$(basename "$f")" --ignore /dpamr/deck >/dev/null ||
            fail "$name: $(basename "$f") differs from $ref's"
        n=$((n + 1))
    done
    [ "$(ls "$work/$name"/s_*.hdf | wc -l)" -eq "$n" ] || fail "$name: not $n step files"
    cmp -s "$work/$ref/s.hdf.series" "$work/$name/s.hdf.series" || fail "$name: series differs from $ref's"
    echo "ok   $name: $n step files byte-identical to $ref (datasets), the same series"
}

want compare && for deck in "$d2" "$d3"; do
    base=$(basename "$deck" .inp)
    if [ "$base" = moving2d ]; then
        args=(steps=30 output_every=1)   # 31 files, every one compared
    else
        args=(output_every=2)            # its 20 steps, regrid_every 2: 11 files
    fi
    run "$base-cpu" "$deck" variant=cpu "${args[@]}" || continue
    for v in "${variants[@]}"; do
        name=$base-$(echo "$v" | tr ' =' '__')
        # shellcheck disable=SC2086
        run "$name" "$deck" variant=$v "${args[@]}" || continue
        same "$base-cpu" "$name"
        grep -q "the mesh stays on the device between steps" "$work/$name/run.log" || fail "$name: no resident line"
        grep -Eq "^step [0-9]+ t=.*device events; transfer" "$work/$name/run.log" || fail "$name: no step line"
        "$dpamr" check "$work/$name/s_00010.hdf" >/dev/null || fail "$name: dpamr check s_00010.hdf"
        # the rank table names the GPU the step ran on (device -1 is the cpu's)
        "$py" -c 'import sys, h5py; r = h5py.File(sys.argv[1], "r")["/dpamr/provenance/ranks"][()]
sys.exit(0 if len(r) == 1 and r["device"][0] >= 0 else 1)' "$work/$name/s_00010.hdf" ||
            fail "$name: s_00010.hdf's rank table does not name a GPU"
    done
done

want balance && echo "== balance = 2:1: the moving decks balanced after every regrid, every variant against cpu at every step"
want balance && for deck in "$d2" "$d3"; do
    base=$(basename "$deck" .inp)-bal
    if [ "$base" = moving2d-bal ]; then args=(steps=30 output_every=1); else args=(output_every=2); fi
    run "$base-cpu" "$deck" variant=cpu balance=2:1 "${args[@]}" || continue
    for v in "${variants[@]}"; do
        name=$base-$(echo "$v" | tr ' =' '__')
        # shellcheck disable=SC2086
        run "$name" "$deck" variant=$v balance=2:1 "${args[@]}" || continue
        same "$base-cpu" "$name"
        "$dpamr" check "$work/$name/s_00010.hdf" >/dev/null || fail "$name: dpamr check s_00010.hdf"
    done
done

if want tile32; then
    # tile_size 32 in 3D: a block's pass needs more than 48 KB of dynamic shared memory, an opt-in
    # that hostlaunch's launches and cdp's device graph launches of the next level must both carry
    echo "== tile_size 32 in 3D, the puff moving: every variant against cpu at every step"
    t32=$src/tests/decks/tile32_3d.inp
    mkdir -p "$work"
    if "$dpamr" mesh "$t32" mesh_file="$work/tile32_3d.mesh.hdf" >"$work/tile32_mesh.log" 2>&1; then
        for v in cpu "${variants[@]}"; do
            name=tile32-$(echo "$v" | tr ' =' '__')
            fresh_dir "$work/$name"
            # shellcheck disable=SC2086
            (cd "$work/$name" && "$dpamr" run "$t32" variant=$v mesh_file="$work/tile32_3d.mesh.hdf" steps=4 dt=0.02 \
                "model.puff.velocity=1 0.5 0" output=s_%05d.hdf output_every=1 >run.log 2>&1) ||
                { fail "$name: run failed"; tail -5 "$work/$name/run.log"; continue; }
            [ "$v" = cpu ] || same tile32-cpu "$name"
        done
        grep -q "changed [1-9]" "$work/tile32-cpu/run.log" || fail "tile32: no step changed a tile"
    else
        fail "tile32: dpamr mesh failed"; tail -3 "$work/tile32_mesh.log"
    fi
fi

want restart && echo "== restart on the GPU from a cpu step file"
want restart && for v in hostlaunch cdp; do
    fresh_dir "$work/restart-$v"
    cp "$work/moving2d-cpu"/s_000{00..10}.hdf "$work/restart-$v/"
    if (cd "$work/restart-$v" && "$dpamr" run "$d2" variant=$v steps=30 output_every=1 output=s_%05d.hdf \
            mesh_file=s_00010.hdf >run.log 2>&1); then
        same moving2d-cpu "restart-$v"
    else
        fail "restart $v"; tail -5 "$work/restart-$v/run.log"
    fi
done

if want overflow; then
    echo "== a step past max_tiles: the cpu's message"
    # max_tiles = the first build's tiles: the first step that needs more overflows on every variant alike
    t0=$(grep -Eo "^step 0 t=0: built [0-9]+ tiles" "$work/moving2d-cpu/run.log" | grep -Eo "[0-9]+ tiles" | grep -Eo "[0-9]+")
    msg=()
    for v in cpu hostlaunch cdp; do
        fresh_dir "$work/over-$v"
        if (cd "$work/over-$v" && "$dpamr" run "$d2" variant=$v steps=30 max_tiles="$t0" output=s_%05d.hdf \
                >run.log 2>err.log); then
            fail "over-$v: max_tiles=$t0 did not overflow"
            continue
        fi
        [ "$(grep -c 'dpamr: error' "$work/over-$v/err.log")" -eq 1 ] || fail "over-$v: not one message"
        m=$(grep -o "tile store overflow regridding level.*" "$work/over-$v/err.log")
        [ -n "$m" ] || { fail "over-$v: no overflow message"; cat "$work/over-$v/err.log"; }
        msg+=("$m")
        echo "ok   over-$v: $m"
    done
    [ "${#msg[@]}" -eq 3 ] && [ "${msg[0]}" = "${msg[1]}" ] && [ "${msg[0]}" = "${msg[2]}" ] ||
        fail "the overflow messages differ between variants"
fi

if want bench; then
    echo "== dpamr bench on a moving deck: every variant"
    fresh_dir "$work/bench"
    if (cd "$work/bench" && "$dpamr" bench "$d2" steps=6 bench_repeats=2 bench_warmup=1 bench_out=sb >bench.log 2>&1); then
        for v in "cpu" "hostlaunch pdl=off" "hostlaunch pdl=on" "cdp pdl=off" "cdp pdl=on"; do
            grep -q "^regrid per step ($v): median" "$work/bench/bench.log" || fail "bench: no summary for $v"
        done
        grep -Eq "^gate: [0-9]+ run\(s\) of 6 steps, the last step's mesh byte-identical" "$work/bench/bench.log" ||
            fail "bench gate"
        [ "$(tail -n +2 "$work/bench/sb.csv" | wc -l)" -eq 30 ] || fail "bench CSV: not 6 rows x 5 variants"
        check_level_ms "$work/bench/sb.json" || fail "bench JSON: level_ms"
        grep -q "^rebuild per level, ms" "$work/bench/bench.log" || fail "bench: no per-level table"
        grep -q "^regrid per step by phase, ms" "$work/bench/bench.log" || fail "bench: no phase table"
        sed -n '/^  step/,$p' "$work/bench/bench.log"
    else
        fail "bench"; cat "$work/bench/bench.log"
    fi
fi
finish gpu_steps
