# lib.sh - shell helpers shared by the test scripts; sourced, never run:
#     source "$(dirname "$0")/lib.sh"          (tests/lint/: "$(dirname "$0")/../lib.sh")
# Sourcing sets `tests` (this folder, absolute), `fails=0`, and `py` (pick_python's default).
#
#   pick_python [MODULE]   py = Debian's /usr/bin/python3 when it imports MODULE (default h5py),
#                          else python3 from PATH (the GPU machine)
#   h5cmp A B [ARGS...]    tests/h5compare.py A B ARGS: byte-identical datasets, or a diff and exit 1
#   check_level_ms JSON    a time-step bench's per-level and per-phase times (every variant, sane)
#   fresh_dir DIR [SUB...] DIR emptied and made again, with the subfolders SUB
#   tmp_dir                tmp = a new temporary folder, removed when the script exits
#   skip_without_gpu DPAMR [WHY]  exit 77 (CTest: skipped) unless `DPAMR gpu` finds a usable device
#   skip_without_paraview  exit 77 unless Debian's python3-paraview and xvfb-run are installed
#   xvfb_python LOG ARGS...  /usr/bin/python3 ARGS under xvfb-run (output in LOG and on stdout); run
#                          again on another display, twice at most, when the X server went away
#                          ("bad X server connection", seen under load); python's exit status
#   fail MESSAGE...        print "FAIL MESSAGE" and count it in fails
#   timed_out RC           true when RC is what `timeout -k` leaves for a killed command (124, 137)
#   expect_error NAME PATTERN CMD...  CMD exits non-zero with PATTERN on stderr and leaves no
#                          $work/out.hdf* behind (removed first); stdout, stderr in $work
#   expect_line NAME PATTERN CMD...   CMD exits 0 and prints PATTERN on stdout
#   finish NAME            the script's end: exit 1 naming the count when anything failed, else "NAME OK"
tests=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fails=0

pick_python() {
    py=/usr/bin/python3
    "$py" -c "import ${1:-h5py}" 2>/dev/null || py=python3
}
pick_python

h5cmp() { "$py" "$tests/h5compare.py" "$@"; }

# check_level_ms BENCH.json: the rebuild per level of a time-step bench: every variant timed levels
# 1.. without a gap (at least 3), each at or below its slowest regrid (a timer tick may round a tiny
# level to 0); prints one "ok" line, non-zero otherwise
check_level_ms() {
    "$py" - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for v in d["level_ms"]:
    m = v["median_ms"]
    worst = max(x["regrid_max_ms"] for x in d["rows"] if (x["variant"], x["pdl"]) == (v["variant"], v["pdl"]))
    built = [x for x in m[1:] if x is not None]
    assert m[0] is None and len(built) >= 3, (v, "levels")
    assert all(0 <= x < worst for x in built), (v, worst)
    assert all(x is None for x in m[1 + len(built):]), (v, "levels 1.. without a gap")
print("ok   level_ms:", ", ".join("%s %s: %d levels" % (v["variant"], v["pdl"], sum(x is not None for x in v["median_ms"])) for v in d["level_ms"]))
# the phases: one entry per variant; each phase's median within its slowest regrid, the rebuild's part
# outside the levels at most the rebuild (a small negative where the level stamps and the events differ
# by a timer tick)
ph = {(v["variant"], v["pdl"]): v for v in d["phase_ms"]}
assert set(ph) == {(v["variant"], v["pdl"]) for v in d["level_ms"]}, "phase_ms: not one per variant"
for key, v in ph.items():
    worst = max(x["regrid_max_ms"] for x in d["rows"] if (x["variant"], x["pdl"]) == key)
    assert all(0 <= v[k] <= worst for k in ("sample", "restrict", "rebuild")), (v, worst)
    assert -0.01 <= v["rebuild_outside_levels"] <= v["rebuild"], v
print("ok   phase_ms:", ", ".join("%s %s: rebuild %.3f, outside its levels %.3f" % (k[0], k[1], v["rebuild"], v["rebuild_outside_levels"]) for k, v in ph.items()))
PY
}

fresh_dir() {
    local dir=$1
    shift
    rm -rf "$dir" && mkdir -p "$dir" || return 1
    local sub
    for sub in "$@"; do mkdir -p "$dir/$sub" || return 1; done
}

tmp_dir() {
    tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
}

skip_without_gpu() {
    if ! "$1" gpu; then
        echo "SKIPPED: ${2:-no usable CUDA device}"
        exit 77
    fi
}

skip_without_paraview() {
    if ! /usr/bin/python3 -c "import paraview.simple" >/dev/null 2>&1 || ! command -v xvfb-run >/dev/null; then
        echo "SKIPPED: needs python3-paraview and xvfb (apt-get install python3-paraview xvfb xauth)"
        exit 77
    fi
}

# -a searches for a free X display from -n on; a random start keeps two test runs on one machine from
# racing for the same display
xvfb_python() {
    local log=$1 rc try
    shift
    for try in 1 2 3; do
        rc=0
        xvfb-run -a -n $((100 + RANDOM % 800)) /usr/bin/python3 "$@" >"$log" 2>&1 || rc=$?
        cat "$log"
        if [ $rc -eq 0 ] || [ $try -eq 3 ] || ! grep -q "bad X server connection" "$log"; then return $rc; fi
        echo "retrying on another display: the X server went away"
    done
}

fail() {
    echo "FAIL $*"
    fails=$((fails + 1))
}

expect_error() {
    local name=$1 pattern=$2
    shift 2
    rm -f "$work/out.hdf"
    "$@" >"$work/stdout" 2>"$work/stderr"
    local rc=$?
    if [ $rc -eq 0 ]; then fail "$name: exit 0"; cat "$work/stdout"; return; fi
    if ! grep -q -- "$pattern" "$work/stderr"; then
        fail "$name (exit $rc): stderr lacks '$pattern':"; cat "$work/stderr"; return
    fi
    if ls "$work"/out.hdf* >/dev/null 2>&1; then fail "$name: output left behind"; return; fi
    echo "ok   $name (exit $rc): $(head -c 300 "$work/stderr")"
}

expect_line() {
    local name=$1 pattern=$2
    shift 2
    if ! "$@" >"$work/stdout" 2>"$work/stderr" || ! grep -q -- "$pattern" "$work/stdout"; then
        fail "$name, expected '$pattern':"; cat "$work/stdout" "$work/stderr"
    else
        echo "ok   $name: $(grep -- "$pattern" "$work/stdout")"
    fi
}

timed_out() { [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; }

finish() {
    if [ "$fails" -ne 0 ]; then
        echo "$1: $fails check(s) failed"
        exit 1
    fi
    echo "$1 OK"
}
