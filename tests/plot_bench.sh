#!/bin/bash
# plot_bench.sh SRC_DIR WORK_DIR [BENCH_JSON...] - tools/plot_bench.py turns each bench JSON
# (default: the GPU and cpu-only fixtures in tests/data, refinement and time steps) into a real
# PNG (signature, width and height > 200), in a folder it makes when missing (exit 1 when it cannot),
# and on a file of invalid JSON, one without "rows", one with a row missing a key and time-step files
# with a bad row or bad per-level times it exits 2 with a message naming the file and leaves no
# output behind; it also refuses to overwrite its input.
# Exit 77 (skipped) without python3-matplotlib.
set -euo pipefail
src=$1 work=$2
shift 2
source "$(dirname "$0")/lib.sh"
pick_python matplotlib
if ! $py -c "import matplotlib" 2>/dev/null; then
    echo "SKIPPED: python3-matplotlib not installed"
    exit 77
fi
plot="$src/tools/plot_bench.py"
[ $# -gt 0 ] || set -- "$src/tests/data/bench_sample_gpu.json" "$src/tests/data/bench_sample_cpu.json" \
    "$src/tests/data/bench_steps_gpu.json" "$src/tests/data/bench_steps_cpu.json"
fresh_dir "$work"

# check_png FILE: non-empty, PNG signature, width and height (IHDR) over 200 pixels
check_png() {
    [ -s "$1" ] || { fail "$1: missing or empty"; return; }
    [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || { fail "$1: no PNG signature"; return; }
    local wh
    wh=$($py -c 'import struct, sys; b = open(sys.argv[1], "rb").read(24); print(*struct.unpack(">II", b[16:24]))' "$1")
    read -r w h <<<"$wh"
    if [ "$w" -le 200 ] || [ "$h" -le 200 ]; then fail "$1: ${w}x${h} pixels, want both > 200"; return; fi
    echo "ok   $(basename "$1"): PNG ${w}x${h}"
}

# 1. each bench JSON gives a PNG, named as asked; "wrote OUT" on stdout
n=0
for json in "$@"; do
    n=$((n + 1))
    out="$work/$n-$(basename "${json%.json}").png"
    if ! $py "$plot" "$json" -o "$out" --title "plot_bench.sh: $(basename "$json")" >"$work/stdout"; then
        fail "$json: plot_bench.py failed"; continue
    fi
    grep -qx "wrote $out" "$work/stdout" || fail "$json: stdout lacks 'wrote $out': $(cat "$work/stdout")"
    check_png "$out"
done

# 2. the default output name: BENCH.json -> BENCH.png beside it
cp "$src/tests/data/bench_sample_gpu.json" "$work/default.json"
$py "$plot" "$work/default.json" >/dev/null
check_png "$work/default.png"

# 2b. -o into a folder that does not exist: it is made; into a "folder" that is a file: exit 1, one line
$py "$plot" "$src/tests/data/bench_sample_cpu.json" -o "$work/new/dir/out.png" >/dev/null ||
    fail "-o into a new folder: plot_bench.py failed"
check_png "$work/new/dir/out.png"
touch "$work/a_file"
rc=0
$py "$plot" "$src/tests/data/bench_sample_cpu.json" -o "$work/a_file/out.png" >/dev/null 2>"$work/a_file.err" || rc=$?
if [ $rc -ne 1 ] || [ "$(wc -l <"$work/a_file.err")" -ne 1 ] ||
    ! grep -q "cannot write $work/a_file/out.png: its folder $work/a_file exists and is not a" "$work/a_file.err"; then
    fail "-o under a file: exit $rc, not 1 with one line:"; cat "$work/a_file.err"
else
    echo "ok   -o under a file (exit 1): $(cat "$work/a_file.err")"
fi

# expect_error NAME PATTERN ARGS...: plot_bench.py ARGS exits 2 with PATTERN on stderr, and the
# directory $work/NAME (its input alone) holds no other file afterwards
expect_error() {
    local name=$1 pattern=$2 rc=0
    shift 2
    local err="$work/$name.stderr"
    $py "$plot" "$@" >"$work/$name.stdout" 2>"$err" || rc=$?
    if [ $rc -ne 2 ]; then fail "$name: exit $rc, want 2"; cat "$err"; return; fi
    grep -q -- "$pattern" "$err" || { fail "$name: stderr lacks '$pattern':"; cat "$err"; return; }
    if grep -q Traceback "$err"; then fail "$name: a traceback"; return; fi
    local left
    left=$(ls -A "$work/$name")
    [ "$left" = in.json ] || { fail "$name: files left behind: $left"; return; }
    echo "ok   $name (exit 2): $(cat "$err")"
}
mkcase() { mkdir -p "$work/$1" && printf '%s\n' "$2" >"$work/$1/in.json"; }

# 3. bad input: one message naming the file, exit 2, no output file
mkcase invalid_json '{"deck": "x", "rows": [{"variant": "cpu", '
expect_error invalid_json "invalid_json/in.json: invalid JSON" "$work/invalid_json/in.json"
mkcase no_rows '{"deck": "inputs/bench2d.inp", "device": "none"}'
expect_error no_rows 'no_rows/in.json: no "rows"' "$work/no_rows/in.json"
mkcase row_missing_key '{"rows": [{"variant": "cdp", "pdl": "on", "refine_ms": 3.0}]}'
expect_error row_missing_key "row_missing_key/in.json: rows\[0\] (cdp pdl=on): missing key 'grain'" \
    "$work/row_missing_key/in.json"
mkcase step_row_bad '{"steps": 4, "rows": [{"variant": "cdp", "pdl": "on", "step": 1, "regrid_ms": -1}]}'
expect_error step_row_bad "step_row_bad/in.json: rows\[0\]: regrid_ms is -1, not a positive number" \
    "$work/step_row_bad/in.json"
mkcase step_levels_bad '{"steps": 4, "rows": [{"variant": "cpu", "pdl": "-", "step": 1, "regrid_ms": 2.5}],
  "level_ms": [{"variant": "cpu", "pdl": "-", "median_ms": [null, "fast"]}]}'
expect_error step_levels_bad "step_levels_bad/in.json: level_ms\[0\] (cpu): median_ms holds something other" \
    "$work/step_levels_bad/in.json"
mkcase step_dup '{"steps": 4, "rows": [{"variant": "cpu", "pdl": "-", "step": 1, "regrid_ms": 2.5},
  {"variant": "cpu", "pdl": "-", "step": 1, "regrid_ms": 2.6}]}'
expect_error step_dup "step_dup/in.json: rows\[1\] repeats an earlier row's variant, pdl and step" "$work/step_dup/in.json"
mkdir -p "$work/unreadable"        # a missing file (root reads a mode-000 one); in.json is only
touch "$work/unreadable/in.json"   # there for the "nothing else left behind" check
expect_error unreadable "unreadable/nothere.json: cannot read" "$work/unreadable/nothere.json" \
    -o "$work/unreadable/out.png"

# 4. it never overwrites its input
mkcase same_file "$(cat "$src/tests/data/bench_sample_cpu.json")"
expect_error same_file "refusing to overwrite" "$work/same_file/in.json" -o "$work/same_file/in.json"
cmp -s "$work/same_file/in.json" "$src/tests/data/bench_sample_cpu.json" || fail "same_file: the input changed"

finish plot_bench
