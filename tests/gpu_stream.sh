#!/bin/bash
# gpu_stream.sh DPAMR WORKDIR DECK... - the streamed output of the GPU variants (gpu_stream_t,
# device/tile_store.cu; DPAMR: a serial driver, `dpamr` without MPI or `dpamr_serial`): on every deck
# and both GPU variants the streamed file has the datasets of cpu's, byte for byte, with the default
# pieces (64 MiB), with pieces of a few tiles (DPAMR_TEST_STAGE_CHUNK: many pieces, the two pinned
# buffers reused many times) and not streamed (DPAMR_TEST_NO_STREAM); `dpamr check` passes; a store
# damaged on the device fails validation with the CPU validator's words after the cells were
# downloaded after all, and leaves no file; a write that fails part-way leaves no file.
# Exit 77 (CTest: skipped) when no CUDA device is usable.
set -uo pipefail
dpamr=$1 work=$2
shift 2
source "$(dirname "$0")/lib.sh"
skip_without_gpu "$dpamr"
fresh_dir "$work"
for deck in "$@"; do
    name=$(basename "$deck" .inp)
    mesh=${deck%.inp}.mesh.hdf
    extra=()
    if [ ! -e "$mesh" ]; then
        "$dpamr" mesh "$deck" mesh_file="$work/$name.mesh.hdf" >/dev/null
        extra=(mesh_file="$work/$name.mesh.hdf")
    fi
    "$dpamr" run "$deck" "${extra[@]}" variant=cpu output="$work/cpu.hdf" >/dev/null || fail "$name: cpu run"
    for v in hostlaunch cdp; do
        for mode in default pieces nostream; do
            envs=()
            [ $mode = pieces ] && envs=(DPAMR_TEST_STAGE_CHUNK=65536)
            [ $mode = nostream ] && envs=(DPAMR_TEST_NO_STREAM=1)
            o=$work/$name-$v-$mode.hdf
            if ! env "${envs[@]}" "$dpamr" run "$deck" "${extra[@]}" variant=$v output="$o" >"$work/stdout" 2>&1; then
                fail "$name $v $mode: run failed: $(tail -2 "$work/stdout")"; continue
            fi
            if [ $mode = nostream ]; then
                grep -q "streamed into the file" "$work/stdout" && fail "$name $v $mode: streamed"
            else
                grep -q "^phases: .*download .*(the cells streamed into the file)" "$work/stdout" ||
                    fail "$name $v $mode: not streamed: $(grep '^phases' "$work/stdout")"
            fi
            h5cmp "$work/cpu.hdf" "$o" --ignore /dpamr/deck || fail "$name $v $mode: datasets differ from cpu"
            "$dpamr" check "$o" >/dev/null || fail "$name $v $mode: check"
            rm -f "$o"
        done
    done
    echo "ok   $name: streamed (default and small pieces) and not streamed, hostlaunch and cdp, as cpu"
done
deck=$1
name=$(basename "$deck" .inp)
extra=()
[ -e "${deck%.inp}.mesh.hdf" ] || extra=(mesh_file="$work/$name.mesh.hdf")
# damage on the device: the CPU validator's report (the cells came down after all), exit 2, no file
expect_error "damaged store, streamed" "validation failed; .*out.hdf not written" \
    env DPAMR_TEST_DEVICE_CORRUPT=nan "$dpamr" run "$deck" "${extra[@]}" variant=hostlaunch output="$work/out.hdf"
grep -q "non-finite\|NaN\|not finite" "$work/stdout" "$work/stderr" || fail "damaged store: no words on the NaN"
# a write failing part-way (an injected failure of the cells' dataset): one message, no file
expect_error "write fails, streamed" "cannot write .*out.hdf" \
    env DPAMR_FAIL_WRITE=0:write:rho "$dpamr" run "$deck" "${extra[@]}" variant=hostlaunch output="$work/out.hdf"
ls "$work"/out.hdf* >/dev/null 2>&1 && fail "a temporary file left behind"
finish "gpu_stream"
