#!/bin/bash
# capacity.sh DPAMR DECK WORKDIR - the tile store's capacity on the cpu variant (capacity.h): with
# max_tiles = 0 it is every tile the refinement can reach, or what the host's memory holds (the
# test hook DPAMR_TEST_HOST_AVAILABLE=BYTES stands for a smaller machine); a run that needs more
# stops before writing, with one message naming the limit (max_tiles, or the host's memory) and
# the count needed. The progress key's values. (The GPU variants' device-memory cases: gpu_limits.sh.)
set -uo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
mesh=$(cd "$(dirname "$deck")" && pwd)/$(basename "${deck%.inp}").mesh.hdf
run() { "$dpamr" run "$deck" mesh_file="$mesh" variant=cpu "$@"; }

# max_tiles = 0 on a machine with memory: every tile a refinement of the input can reach
# (the default deck: 16 roots to level 8, 16 (4^9 - 1) / 3 tiles), not a fixed 2^21
expect_line "the bound" "tile store capacity 1398096: every tile a refinement of the input can reach up to max_level 8" \
    run output="$work/full.hdf"
expect_line "the bound past 2^21" "tile store capacity 22369616: every tile" \
    run max_level=10 threshold=10 output="$work/deep.hdf"

# a forced small capacity still fails clearly, naming max_tiles and the count that would hold the run
expect_error "max_tiles too small" \
    "tile store overflow at level [0-9]*: at least [0-9]* tiles needed, capacity 200: max_tiles = 200; set max_tiles >= [0-9]* (or 0: as many as memory holds)" \
    run max_tiles=200 output="$work/out.hdf"
# the host's memory too small for the refinement: the message names the memory and what it holds
expect_error "host memory too small" \
    "tile store overflow at level [0-9]*: at least [0-9]* tiles needed, capacity [0-9]*: the host's 2.9 MiB available hold at most [0-9]* tiles of this deck.*; lower max_level" \
    env DPAMR_TEST_HOST_AVAILABLE=3000000 "$dpamr" run "$deck" mesh_file="$mesh" variant=cpu output="$work/out.hdf"
# a smaller host that still holds it: the same file as without the limit
expect_line "host memory enough" "tile store capacity [0-9]*: the host's 57.2 MiB available hold at most [0-9]* tiles" \
    env DPAMR_TEST_HOST_AVAILABLE=60000000 "$dpamr" run "$deck" mesh_file="$mesh" variant=cpu output="$work/small.hdf"
h5cmp "$work/full.hdf" "$work/small.hdf" --ignore /dpamr/deck || fail "a host-limited capacity changed the output"
# the estimate before the run is the host's capacity
grep -q "memory up to .* for [0-9]* tiles" "$work/stdout" || fail "no memory estimate"

# progress: auto (default) or off; a terminal is needed to see it (a log of these small runs has none)
expect_line "progress=off" "^wrote " run progress=off output="$work/p.hdf"
grep -q "GB/s" "$work/stdout" && fail "progress=off printed progress"
expect_error "bad progress" "progress.*valid values are off, auto" run progress=maybe output="$work/out.hdf"
printf 'progress = maybe\n' | cat "$deck" - >"$work/badprogress.inp"
expect_error "bad progress in a deck" "badprogress.inp:[0-9]*: key 'progress' = 'maybe': valid values are off, auto" \
    "$dpamr" run "$work/badprogress.inp" mesh_file="$mesh" output="$work/out.hdf"
# the write's progress (mpi_write=gather: an MPI build's one rank writes as a serial run does);
# DPAMR_TEST_PROGRESS_NOW=1 prints at every update, so that a small run shows its lines
now() { env DPAMR_TEST_PROGRESS_NOW=1 DPAMR_TEST_WRITE_PIECE=100000 "$@"; }
# in a log: plain lines, no carriage return, the last one "(done)"
expect_line "progress in a log" "^write .* GB.*(done)$" now "$dpamr" run "$deck" mesh_file="$mesh" variant=cpu \
    mpi_write=gather output="$work/p.hdf"
grep -q $'\r' "$work/stdout" && fail "progress in a log: a carriage return"
[ "$(grep -c '^write ' "$work/stdout")" -ge 2 ] || fail "progress in a log: fewer than 2 write lines"
# the CPU validator's progress in `dpamr check` (the file's deck: progress = auto)
expect_line "check's progress in a log" "^validate .* GB.*(done)$" now "$dpamr" check "$work/p.hdf"
grep -q $'\r' "$work/stdout" && fail "check's progress in a log: a carriage return"
for quiet in progress=off verbosity=quiet; do
    expect_line "$quiet: no progress" "^wrote " now "$dpamr" run "$deck" mesh_file="$mesh" variant=cpu \
        mpi_write=gather output="$work/p.hdf" "$quiet"
    grep -q '^write ' "$work/stdout" && fail "$quiet printed progress"
done
# on a terminal (script(1) gives the run one): the line rewritten in place, ended once
if command -v script >/dev/null; then
    cmd="$dpamr run $deck mesh_file=$mesh variant=cpu mpi_write=gather output=$work/p.hdf"
    now script -qec "$cmd" /dev/null >"$work/tty.txt" 2>&1
    grep -q $'\rwrite ' "$work/tty.txt" || fail "progress on a terminal: no line rewritten in place"
    [ "$(grep -c '^write \|\rwrite ' "$work/tty.txt")" -le 1 ] || fail "progress on a terminal: more than one line"
    now script -qec "$cmd progress=off" /dev/null >"$work/tty.txt" 2>&1
    grep -q 'write .* GB' "$work/tty.txt" && fail "progress=off on a terminal printed progress"
    echo "ok   progress on a terminal: one line rewritten in place; progress=off: none"
else
    echo "skip progress on a terminal: no script(1)"
fi
finish "capacity"
