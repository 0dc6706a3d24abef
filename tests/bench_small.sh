#!/bin/bash
# bench_small.sh DPAMR SRC WORK - `dpamr bench` on the small default deck (two repeats: the JSON and CSV carry each), its JSON
# checked (every row has the keys the plot reads; with a GPU: host, and cdp at every grain of the
# sweep, pdl off and on), then tools/plot_bench.py plots it and the fixtures (tests/plot_bench.sh).
# Without a GPU the JSON holds the cpu row only, and that is what CI plots.
set -euo pipefail
dpamr=$1 src=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
pick_python matplotlib
"$dpamr" bench "$src/inputs/default.inp" bench_repeats=2 bench_warmup=0 bench_groups="4 16" \
    bench_out="$work/bench_default" >"$work/bench.log"
cat "$work/bench.log"
head -1 "$work/bench_default.csv" | grep -q "refine_min_ms,refine_max_ms,refine_samples_ms,host,commit,date" ||
    { echo "bench CSV: no per-repeat samples, spread, machine, commit, date"; exit 1; }
$py - "$work/bench_default.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["rows"]
for r in rows:
    for k in ("variant", "grain", "group", "pdl", "refine_ms", "launches", "pool", "level_ms"):
        assert k in r, f"row {r} lacks {k}"
    assert r["refine_ms"] > 0, r
    assert len(r["refine_samples_ms"]) == j["repeats"] == len(r["end_to_end_samples_ms"]), r
    assert r["refine_min_ms"] <= r["refine_ms"] <= r["refine_max_ms"], r
for k in ("host", "device", "cuda", "compiler", "build", "threads"):
    assert k in j["machine"], f"machine lacks {k}"
assert j["commit"] and j["date"], j
# x floor of every row against its own floor: the host's copy bandwidth for cpu, the device's else
assert j["host_floor_ms"] > 0 and j["host_copy_gbps"] > 0, j
for r in rows:
    fl = j["host_floor_ms"] if r["variant"] == "cpu" else j["floor_ms"]
    assert fl > 0 and r["x_floor"] is not None, (r, fl)
    assert abs(r["x_floor"] - r["refine_ms"] / fl) <= 1e-3 * r["x_floor"], (r, fl)
have = {(r["variant"], r["grain"], r["group"], r["pdl"]) for r in rows}
if j["device"] == "none":
    assert have == {("cpu", None, None, "-")}, have
else:
    want = {("hostlaunch", None, None, p) for p in ("off", "on")}
    want |= {("cdp", g, n, p) for g, n in (("tile", 1), ("group", 4), ("group", 16), ("level", None))
             for p in ("off", "on")}
    assert want <= have, want - have
    for r in rows:
        if r["variant"] == "cdp":
            assert r["launches"] >= 0 and r["pool"] >= 1, r
print(f"bench JSON OK: {len(rows)} rows on {j['device']}")
PY
# a deck whose name holds a quote and a comma: one CSV field (RFC 4180), every row as wide as the header
qdir="$work/q\"x,y"
mkdir -p "$qdir"
sed "s#^mesh_file.*#mesh_file = $src/inputs/default.mesh.hdf#" "$src/inputs/default.inp" >"$qdir/d\"1,2.inp"
"$dpamr" bench "$qdir/d\"1,2.inp" bench_repeats=1 bench_warmup=0 bench_cpu=on max_level=2 bench_out="$work/quoted" \
    >"$work/quoted.log" || { cat "$work/quoted.log"; exit 1; }
$py - "$work/quoted.csv" "$qdir/d\"1,2.inp" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) >= 2, rows
assert all(len(r) == len(rows[0]) for r in rows), [len(r) for r in rows]
assert all(r[0] == sys.argv[2] for r in rows[1:]), rows[1][0]
print(f"bench CSV with a quote and a comma in the deck's path: {len(rows) - 1} row(s) of {len(rows[0])} fields")
PY
exec bash "$src/tests/plot_bench.sh" "$src" "$work/plot" "$src/tests/data/bench_sample_gpu.json" \
    "$src/tests/data/bench_sample_cpu.json" "$work/bench_default.json"
