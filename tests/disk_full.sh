#!/bin/bash
# disk_full.sh DPAMR DECK WORKDIR [MPIEXEC] - a full file system ends the run with one clear
# message, a non-zero exit and no file left, and never hangs an MPI run:
#   1. too little room from the start: refused before the file is made (the writer's free-space check);
#   2. room for the raw data but not the whole file: the write fails part-way (ENOSPC);
#   3. room for all but the last metadata: the write stops before the final flush (or it fails);
#   and `dpamr bench` with too little room for bench_out: refused before anything is timed;
# never a crash (an exit of 128 or more: HDF5 1.10 crashed at exit after a failed flush);
# each alone, then with MPIEXEC (2 and 3 ranks) in both write modes (collective needs a parallel
# HDF5). A part-way failure in a collective write is seen by the aggregating rank only; before the
# writer agreed after each object, the other ranks waited in the next collective call for ever.
# The small file systems are tmpfs mounts: without the right to mount (not root, or a container
# without CAP_SYS_ADMIN) the test exits 77 (skipped) and says why.
set -uo pipefail
dpamr=$1 deck=$2 work=$3 mpiexec=${4:-}
source "$(dirname "$0")/lib.sh"
# unmount DIR: every tmpfs stacked there (a killed earlier run may have left one), lazily if busy
unmount() {
    while mountpoint -q "$1"; do umount "$1" 2>/dev/null || umount -l "$1" || return 1; done
}
unmount "$work/full"
fresh_dir "$work" full
cd "$work"
trap 'unmount "$work/full"' EXIT
# mount_small BYTES: a fresh tmpfs of BYTES (rounded up to pages) on $work/full, nothing under it
mount_small() {
    unmount "$work/full" || { echo "cannot unmount $work/full"; return 1; }
    mount -t tmpfs -o "size=$1" tmpfs "$work/full" 2>"$work/mount.err"
}
if ! mount_small 1m; then
    echo "SKIPPED: cannot mount a small tmpfs here ($(cat "$work/mount.err")): needs root with CAP_SYS_ADMIN"
    exit 77
fi
# the raw data bytes of the deck's output (a lower bound of its size; what the free-space check uses)
"$dpamr" run "$deck" variant=cpu output="$work/good.hdf" > good.log || { cat good.log; exit 1; }
read -r raw size < <($py - "$work/good.hdf" <<'PY'
import os, sys, h5py
n = []
h5py.File(sys.argv[1], "r").visititems(
    lambda k, o: n.append(o.nbytes) if isinstance(o, h5py.Dataset) and not k.endswith("vtkGhostType") and
    (k.startswith("VTKHDF") or k.startswith("dpamr/tiles")) else None)
print(sum(n), os.path.getsize(sys.argv[1]))
PY
)
echo "output: $size bytes, $raw of them raw data"
[ $((size - raw)) -gt 16384 ] || { echo "FAIL: the file's metadata ($((size - raw)) bytes) leaves no room for case 2"; exit 1; }
rm -f good.hdf
# expect NAME PATTERN MOUNT-BYTES CMD...: CMD fails within 120 s on a fresh small tmpfs, PATTERN on
# stderr exactly once, nothing left on the tmpfs
expect() {
    local name=$1 pattern=$2 bytes=$3
    shift 3
    mount_small "$bytes" || { fail "$name: mount"; return; }
    timeout -k 10 120 "$@" > "$name.out" 2> "$name.err"
    local rc=$? n
    n=$(grep -c -- "$pattern" "$name.err")
    if timed_out $rc; then fail "$name: hung (killed after 120 s)"
    elif [ $rc -eq 0 ]; then fail "$name: exit 0"
    elif [ $rc -ge 128 ]; then fail "$name: crashed (exit $rc: signal $((rc - 128)))"; cat "$name.err"
    elif [ "$n" -ne 1 ]; then
        fail "$name: '$pattern' appears $n times in stderr:"; cat "$name.err"
    elif [ -n "$(ls -A "$work/full")" ]; then
        fail "$name: left behind: $(ls -A "$work/full")"
    else echo "ok   $name (exit $rc): $(grep -- "$pattern" "$name.err")"; fi
}
early="it needs at least .* MB and the file system of $work/full has .* MB free"
# a part-way failure names the object and, where the system said it, the reason; MPI-IO (a
# parallel HDF5 writes even one rank through it) reports a failed write without one, or not at all:
# the read-back then finds the loss
late="cannot write $work/full/out.hdf: .*failed (No space left on device)"
"$dpamr" --version | grep -q "parallel HDF5: yes" && late="cannot write $work/full/out.hdf: .*failed ("
part=$((raw + 8192))  # passes the free-space check, runs out in the file's metadata or last datasets
out=(output="$work/full/out.hdf")
expect serial_early "$early" 1m "$dpamr" run "$deck" variant=cpu "${out[@]}"
expect serial_late "$late" "$part" "$dpamr" run "$deck" variant=cpu "${out[@]}"
# room for the cells but not the last metadata (4 KB short of the whole file): the writer stops before
# a flush that would fail (HDF5 1.10 crashed at exit after one), or the flush fails: one message, exit 1
meta_part=$((size - 4096))
expect serial_meta "cannot write $work/full/out.hdf: " "$meta_part" "$dpamr" run "$deck" variant=cpu "${out[@]}"
# dpamr bench: bench_out's room is checked before anything is timed (its tables are a few kB)
expect bench_early "bench_out = $work/full/b.csv: the file needs at least" 8k \
    "$dpamr" bench "$deck" bench_repeats=1 bench_out="$work/full/b"
grep -q "^gate:" bench_early.out && fail "bench_early: timed before the room for bench_out was checked"
if [ -n "$mpiexec" ]; then
    source "$tests/mpi_flags.sh"
    modes=(gather)
    "$dpamr" --version | grep -q "parallel HDF5: yes" && modes+=(collective)
    for np in 2 3; do
        for mode in "${modes[@]}"; do
            run=("$mpiexec" "${mpiflags[@]}" -np "$np" "$dpamr" run "$deck" variant=cpu "${out[@]}" mpi_write="$mode")
            expect "np${np}_${mode}_early" "$early" 1m "${run[@]}"
            # gathered, rank 0 writes through the serial driver, which has the system's reason
            # collective: MPI-IO reports the failure (no reason), or loses the data silently (Open MPI's
            # OMPIO) and the read-back finds other bytes; where the disk fills depends on the layout
            # (or the room check before the close's flush: the metadata would not fit)
            pattern="cannot write $work/full/out.hdf: .*\(failed (\|gave other bytes than were written\|metadata needs up to\)"
            [ "$mode" = gather ] && pattern="cannot write $work/full/out.hdf: .*failed (No space left on device)"
            expect "np${np}_${mode}_late" "$pattern" "$part" "${run[@]}"
            [ "$mode" = gather ] && expect "np${np}_${mode}_meta" "cannot write $work/full/out.hdf: " "$meta_part" "${run[@]}"
        done
    done
fi
finish disk_full
