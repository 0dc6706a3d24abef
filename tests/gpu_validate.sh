#!/bin/bash
# gpu_validate.sh DPAMR WORKDIR [--no-corrupt] DECK... - the GPU validator against the CPU validator.
# For every deck and both GPU variants (cdp, hostlaunch): a run with validate=gpu and one with
# validate=cpu print the same report (every level's tile count, sums and hashes, the conservation
# maximum, tree and total hash, the verdict), write the same datasets, and the gpu run's file passes
# `dpamr check` (which recomputes every recorded value, attributes included, on the CPU); the gpu run
# must say its report came from the GPU's passes, with their CUDA-event time. Then (unless
# --no-corrupt) the store is damaged on the device before the validation and the download
# (DPAMR_TEST_DEVICE_CORRUPT = nan, key, parent: the last tile's first cell, key, parent link): both
# runs must fail (exit 2, no file) with the same report and first failure, and the GPU's passes must
# count as many failed checks as the CPU validator. Exit 77 (skipped) without a usable CUDA device.
set -uo pipefail
dpamr=$1 work=$2
shift 2
source "$(dirname "$0")/lib.sh"
skip_without_gpu "$dpamr"
corrupt=1
if [ "${1:-}" = --no-corrupt ]; then corrupt=0; shift; fi
fresh_dir "$work"
# the report lines of valid_print
report() { grep -E '^  level +[0-9]+: +[0-9]+ tiles +[0-9]+ cells|^  conservation|^  tree hash|^validation:' "$1"; }
for deck in "$@"; do
    name=$(basename "$deck" .inp)
    extra=()
    if [ ! -e "${deck%.inp}.mesh.hdf" ]; then  # test decks make their level-0 mesh here
        "$dpamr" mesh "$deck" mesh_file="$work/$name.mesh.hdf" >/dev/null || { fail "$name: dpamr mesh"; continue; }
        extra=(mesh_file="$work/$name.mesh.hdf")
    fi
    for v in cdp hostlaunch; do
        tag="$name $v"
        g=$work/$name-$v-gpu c=$work/$name-$v-cpu
        if ! "$dpamr" run "$deck" "${extra[@]}" variant=$v validate=gpu output="$g.hdf" >"$g.log" 2>&1; then
            fail "$tag validate=gpu:"; tail -5 "$g.log"; continue
        fi
        if ! "$dpamr" run "$deck" "${extra[@]}" variant=$v validate=cpu output="$c.hdf" >"$c.log" 2>&1; then
            fail "$tag validate=cpu:"; tail -5 "$c.log"; continue
        fi
        # (the MPI build's dpamr runs as one rank and says "rank 0: ")
        grep -Eq "^(rank 0: )?validated on the GPU: passed; kernels [0-9.]* ms \(CUDA events\)" "$g.log" ||
            { fail "$tag: the report did not come from the GPU's passes:"; grep -i valid "$g.log"; }
        grep -Eq "^(rank 0: )?validate=cpu: validated on the CPU" "$c.log" || fail "$tag: validate=cpu did not say so"
        [ "$(report "$g.log" | wc -l)" -ge 4 ] || fail "$tag: no report printed"
        if diff <(report "$c.log") <(report "$g.log") >"$g.diff"; then
            echo "ok   $tag: the same report ($(report "$g.log" | grep 'tree hash'))"
        else
            fail "$tag: reports differ (< cpu, > gpu):"; cat "$g.diff"
        fi
        h5cmp "$c.hdf" "$g.hdf" --ignore /dpamr/deck >/dev/null || fail "$tag: the files' datasets differ"
        "$dpamr" check "$g.hdf" >"$g.check" 2>&1 || { fail "$tag: dpamr check of the validate=gpu file:"; tail -3 "$g.check"; }
        # the two validators' times and the phases, for the record
        grep -E "^(rank 0: )?validated on the GPU|^phases:" "$g.log" | sed "s/^/     $tag validate=gpu: /"
        grep -E "^(rank 0: )?validate=cpu|^phases:" "$c.log" | sed "s/^/     $tag validate=cpu: /"
        rm -f "$g.hdf" "$c.hdf"
        [ $corrupt = 1 ] || continue
        for kind in nan key parent; do
            for mode in gpu cpu; do
                DPAMR_TEST_DEVICE_CORRUPT=$kind "$dpamr" run "$deck" "${extra[@]}" variant=$v validate=$mode \
                    output="$work/bad.hdf" >"$work/bad-$mode.log" 2>&1
                rc=$?
                [ $rc -eq 2 ] || { fail "$tag corrupt=$kind validate=$mode: exit $rc, expected 2"; tail -3 "$work/bad-$mode.log"; }
                [ ! -e "$work/bad.hdf" ] || fail "$tag corrupt=$kind validate=$mode: a file was written"
            done
            if ! diff <(report "$work/bad-cpu.log") <(report "$work/bad-gpu.log") >"$work/bad.diff"; then
                fail "$tag corrupt=$kind: reports differ (< cpu, > gpu):"; cat "$work/bad.diff"
            fi
            ncpu=$(sed -n 's/^validation: FAILED (\([0-9]*\) checks).*/\1/p' "$work/bad-cpu.log")
            ngpu=$(sed -n 's/^\(rank 0: \)\{0,1\}validated on the GPU: \([0-9]*\) failed checks.*/\2/p' "$work/bad-gpu.log")
            if [ -n "$ncpu" ] && [ "$ncpu" = "$ngpu" ]; then
                echo "ok   $tag corrupt=$kind: caught alike, $ngpu failed checks: $(grep '^validation:' "$work/bad-gpu.log" | cut -c1-160)"
            else
                fail "$tag corrupt=$kind: the CPU validator counts '$ncpu' failed checks, the GPU's passes '$ngpu'"
                grep -E "^(rank 0: )?validat" "$work/bad-gpu.log" "$work/bad-cpu.log"
            fi
        done
    done
done
finish "gpu_validate $*"
