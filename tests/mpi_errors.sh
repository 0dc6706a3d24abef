#!/bin/bash
# mpi_errors.sh MPIEXEC DPAMR DECK WORKDIR [VARIANT] - a failure on one rank ends every rank, with one clear
# message naming the rank, a non-zero exit, no output file and no hang:
#   1. a mesh file that only rank 0 reads is not HDF5;
#   2. only one rank's part overflows max_tiles (its subtree holds the refinement);
#   3. a deck error, found on every rank, is printed once; mpi_write=collective without a parallel
#      HDF5 is refused, and with one a name too long for a collective open (auto gathers it).
# VARIANT (default cpu): cdp or host run case 2 on the GPU (a device-side overflow); exit 77 without one.
set -uo pipefail
mpiexec=$1 dpamr=$2 deck=$3 work=$4 variant=${5:-cpu}
source "$(dirname "$0")/lib.sh"
[ "$variant" = cpu ] || skip_without_gpu "$dpamr" "variant=$variant needs a CUDA device"
source "$tests/mpi_flags.sh"
fresh_dir "$work"
cd "$work"
# expect NAME NP PATTERN [key=value ...]: the run fails within the time limit, stderr has PATTERN
# exactly once, and no out.hdf (or temporary) is left.
expect() {
    local name=$1 np=$2 pattern=$3
    shift 3
    rm -f out.hdf out.hdf.tmp.*
    timeout -k 10 120 "$mpiexec" "${mpiflags[@]}" -np "$np" "$dpamr" run "$deck" variant="$variant" output=out.hdf "$@" \
        > "$name.out" 2> "$name.err"
    local rc=$?
    local n
    n=$(grep -c -- "$pattern" "$name.err")
    if timed_out $rc; then
        fail "$name: hung (killed after 120 s)"
    elif [ $rc -eq 0 ]; then
        fail "$name: exit 0"
    elif [ "$n" -ne 1 ]; then
        fail "$name: '$pattern' appears $n times in stderr:"; cat "$name.err"
    elif ls | grep -q "^out\.hdf"; then
        fail "$name: output left behind: $(ls | grep '^out\.hdf')"
    else
        echo "ok   $name (exit $rc): $(grep -- "$pattern" "$name.err")"
    fi
}
printf 'not an HDF5 file\n' > bad.hdf
expect bad_mesh_rank0 3 "dpamr: error: rank 0: .*bad.hdf" mesh_file="$work/bad.hdf"
# default.inp: the refinement lives in the last roots along the curve; 2000 tiles hold the others
expect overflow_one_rank 2 "dpamr: error: rank 1: " max_tiles=2000
expect deck_error 4 "dpamr: error: .*max_level" max_level=-3
if "$dpamr" --version | grep -q "parallel HDF5: no"; then
    expect collective_without_phdf5 2 "mpi_write = collective, but this dpamr's HDF5 has no parallel I/O" \
        mpi_write=collective
fi
# a file name too long for a collective open (Open MPI's sharedfp names a file of its own after it;
# 235 characters made it abort): auto gathers it to rank 0, collective refuses it before any work
if "$dpamr" --version | grep -q "parallel HDF5: yes"; then
    long=$(printf 'n%.0s' $(seq 1 215)).hdf
    if timeout -k 10 120 "$mpiexec" "${mpiflags[@]}" -np 2 "$dpamr" run "$deck" variant="$variant" output="$long" \
        max_level=3 >long.out 2>long.err && grep -q "(gathered to rank 0)" long.out && "$dpamr" check "$long" >/dev/null; then
        echo "ok   a 219-character name with mpi_write = auto: gathered to rank 0, checked"
    else
        fail "a 219-character name with mpi_write = auto"; cat long.out long.err
    fi
    rm -f "$long"
    timeout -k 10 120 "$mpiexec" "${mpiflags[@]}" -np 2 "$dpamr" run "$deck" variant="$variant" output="$long" \
        mpi_write=collective >long.out 2>long.err
    rc=$?
    if [ $rc -ne 0 ] && [ "$(grep -c "mpi_write = collective and the file name .* has 219 characters: a collective write takes at most 211" long.err)" -eq 1 ] &&
        ! ls | grep -q "^nnnn"; then
        echo "ok   a 219-character name with mpi_write = collective (exit $rc): refused"
    else
        fail "a 219-character name with mpi_write = collective (exit $rc)"; cat long.err
    fi
fi
# the output's directory does not exist: found by rank 0 before any work (run_check_output), every
# rank ends, no hang
expect_out() {
    local name=$1
    shift
    timeout -k 10 120 "$mpiexec" "${mpiflags[@]}" -np 2 "$dpamr" run "$deck" variant="$variant" output="$work/nodir/out.hdf" "$@" \
        > "$name.out" 2> "$name.err"
    local rc=$?
    if timed_out $rc; then fail "$name: hung"
    elif [ $rc -eq 0 ] || ! grep -q "output = .*nodir/out.hdf: its folder .*nodir does not exist" "$name.err"; then
        fail "$name (exit $rc):"; cat "$name.err"
    else echo "ok   $name (exit $rc): $(grep "dpamr: error" "$name.err")"; fi
}
expect_out output_dir_missing
expect_out output_dir_missing_gather mpi_write=gather
expect bad_mpi_write 2 "override 'mpi_write=both': valid values are auto, collective, gather" mpi_write=both
# one rank's HDF5 call fails in the middle of the write (the writer's test hook, see io/h5io_write.c):
# every rank stops at that object, one message names the rank, no file; before the writer agreed
# after each collective call, the other ranks waited in the next one for ever
if "$dpamr" --version | grep -q "parallel HDF5: yes"; then
    DPAMR_FAIL_WRITE=1:create:AMRBox expect inject_create_rank1 3 \
        "dpamr: error: rank 1: .*create of dataset AMRBox failed (injected" mpi_write=collective
    DPAMR_FAIL_WRITE=2:write:rho expect inject_write_rank2 3 \
        "dpamr: error: rank 2: .*write of dataset rho failed (injected" mpi_write=collective
    DPAMR_FAIL_WRITE=0:write:ranks expect inject_write_small_rank0 2 \
        "dpamr: error: rank 0: .*write of dataset ranks failed (injected" mpi_write=collective
fi
DPAMR_FAIL_WRITE=0:write:level_start expect inject_gather_rank0 2 \
    "dpamr: error: rank 0: .*write of dataset level_start failed (injected" mpi_write=gather
finish mpi_errors
