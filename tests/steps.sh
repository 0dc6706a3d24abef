#!/bin/bash
# steps.sh DPAMR SRC WORKDIR - time steps end to end on the cpu variant (issue 15):
#  - inputs/moving2d.inp (fill = prolong), 100 steps with a file at every step: every step validated
#    by the run (structure, nesting, conservation through the regrids), tiles both added and removed,
#    101 files each with /dpamr@step and @time, the series lists them with their times, `dpamr check`
#    accepts steps 0, 50 and 100; the shipped mesh is what `dpamr mesh` makes;
#  - the same steps on one thread give the same datasets;
#  - restart: from step 40's file and from step 0's, the continued series equals the uninterrupted
#    one (every dataset of every later file, and the series file, byte for byte); from step 99 in
#    place, over the run's own series (4.5 KB: its marker past the first 4 KB);
#  - inputs/moving3d.inp (fill = model, regrid every 2, a file every 4): validated; step 8's file is
#    the first build of the objects moved to t = 8 dt, byte for byte;
#  - steps = 0 keeps the single build: the same datasets as the deck without the step keys, and no
#    /dpamr@step;
#  - dpamr bench on a moving deck: the gate, a row per step with the regrid time and the changed
#    fraction, the CSV.
set -uo pipefail
dpamr=$1 src=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work" a b c z e f
d2=$src/inputs/moving2d.inp d3=$src/inputs/moving3d.inp

attrs() { # FILE: "step time" from /dpamr
    "$py" -c "import h5py,sys; a=h5py.File(sys.argv[1],'r')['dpamr'].attrs; print(int(a['step']), repr(float(a['time'])))" "$1"
}

echo "== the shipped meshes are what dpamr mesh makes"
for deck in moving2d moving3d movingbench2d; do
    "$dpamr" mesh "$src/inputs/$deck.inp" mesh_file="$work/$deck.mesh.hdf" >/dev/null || fail "mesh $deck"
    h5cmp "$work/$deck.mesh.hdf" "$src/inputs/$deck.mesh.hdf" --ignore /dpamr/deck >/dev/null || fail "$deck mesh differs"
done

echo "== moving2d: 100 steps, validated and written at every step"
if ! (cd "$work/a" && "$dpamr" run "$d2" variant=cpu output=r_%05d.hdf output_every=1 >run.log 2>&1); then
    fail "100-step run"; tail -20 "$work/a/run.log"
fi
n=$(ls "$work/a"/r_*.hdf 2>/dev/null | wc -l)
[ "$n" -eq 101 ] || fail "expected 101 step files, found $n"
nv=$(grep -c "^  step [0-9]* validated" "$work/a/run.log")
[ "$nv" -eq 101 ] || fail "expected 101 validated steps, the log says $nv"
grep -q "conserved" "$work/a/run.log" || fail "no conservation line"
grep -Eq "^step [0-9]+ t=.*\+[1-9][0-9]* -[1-9][0-9]*, changed" "$work/a/run.log" || fail "no step both refined and coarsened"
[ "$(attrs "$work/a/r_00037.hdf")" = "37 0.37" ] || fail "r_00037.hdf: /dpamr step, time = $(attrs "$work/a/r_00037.hdf")"
"$py" - "$work/a/r.hdf.series" <<'EOF' || fail "series content"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["file-series-version"] == "1.0", s
f = s["files"]
assert [e["name"] for e in f] == ["r_%05d.hdf" % k for k in range(101)], f[:3]
assert [e["time"] for e in f] == [k * 0.01 for k in range(101)], [e["time"] for e in f][:5]
print("series: 101 files, times k * dt")
EOF
for k in 00000 00050 00100; do
    "$dpamr" check "$work/a/r_$k.hdf" >/dev/null || fail "dpamr check r_$k.hdf"
done
ls "$work/a"/*.tmp.* >/dev/null 2>&1 && fail "temporary file left behind"
tail -2 "$work/a/run.log"

echo "== one thread: the same datasets"
(cd "$work/b" && "$dpamr" run "$d2" variant=cpu output=r_%05d.hdf steps=30 threads=1 verbosity=quiet >quiet.log) ||
    fail "one-thread run"
# verbosity = quiet: "wrote" lines only, the series' too
grep -q "^wrote r.hdf.series (4 file(s))" "$work/b/quiet.log" && ! grep -qv "^wrote " "$work/b/quiet.log" ||
    { fail "a quiet run: not only 'wrote' lines, or no series line"; tail -3 "$work/b/quiet.log"; }
h5cmp "$work/a/r_00030.hdf" "$work/b/r_00030.hdf" --ignore /dpamr/deck || fail "one thread differs"

echo "== restart from step 40 and from step 0: the uninterrupted series"
for k in 0 40; do
    rm -rf "$work/c" && mkdir "$work/c"
    for j in $(seq 0 "$k"); do cp "$work/a/$(printf 'r_%05d.hdf' "$j")" "$work/c/"; done
    from=$(printf 'r_%05d.hdf' "$k")
    if ! (cd "$work/c" && "$dpamr" run "$d2" variant=cpu output=r_%05d.hdf output_every=1 mesh_file="$from" >run.log); then
        fail "restart from $from"; continue
    fi
    grep -q "continues the series from step $k" "$work/c/run.log" || fail "restart from $k: no continuation line"
    for j in 41 77 100; do
        [ "$j" -gt "$k" ] || continue
        f=$(printf 'r_%05d.hdf' "$j")
        h5cmp "$work/a/$f" "$work/c/$f" --ignore /dpamr/deck >/dev/null || fail "restart from $k: $f differs"
    done
    cmp "$work/a/r.hdf.series" "$work/c/r.hdf.series" || fail "restart from $k: the series file differs"
    echo "restart from step $k: steps 41, 77, 100 and the series identical"
done

echo "== restart in place from step 99: its own series of 101 files (over 4 KB) is replaced, unchanged"
cp "$work/a/r.hdf.series" "$work/a/series.before"
(cd "$work/a" && "$dpamr" run "$d2" variant=cpu output=r_%05d.hdf output_every=1 mesh_file=r_00099.hdf \
    verbosity=quiet >/dev/null) || fail "restart in place from step 99 (series of $(wc -c <"$work/a/series.before") bytes)"
cmp "$work/a/series.before" "$work/a/r.hdf.series" || fail "restart in place: the series differs"

echo "== moving3d: fill = model, regrid every 2, a file every 4"
if ! (cd "$work/e" && "$dpamr" run "$d3" variant=cpu output=s_%05d.hdf >run.log 2>&1); then
    fail "3D run"; tail -20 "$work/e/run.log"
fi
[ "$(ls "$work/e"/s_*.hdf 2>/dev/null | wc -l)" -eq 6 ] || fail "3D: expected 6 files"
grep -c "validated" "$work/e/run.log" | grep -qx 6 || fail "3D: expected 6 validated steps"
! grep -q "^step 3 " "$work/e/run.log" || fail "3D: step 3 regridded with regrid_every = 2"
"$dpamr" check "$work/e/s_00020.hdf" >/dev/null || fail "check s_00020.hdf"
# the objects at t = 8 dt, as the regrid moves them (centre + velocity * t in double), built once
read -r ball brick < <("$py" -c "
t = 8 * 0.02
print(' '.join(repr(c + v * t) for c, v in zip((0.3, 0.5, 0.5), (0.8, 0.0, 0.1))).replace(' ', ','),
      ' '.join(repr(c + v * t) for c, v in zip((0.75, 0.3, 0.4), (-0.5, 0.4, 0.0))).replace(' ', ','))")
moved=(steps=0 "model.ball.center=${ball//,/ }" "model.brick.center=${brick//,/ }" mesh_file="$work/f/at8.mesh.hdf")
"$dpamr" mesh "$d3" "${moved[@]}" >/dev/null && "$dpamr" run "$d3" variant=cpu "${moved[@]}" output="$work/f/at8.hdf" \
    verbosity=quiet >/dev/null || fail "build at t = 8 dt"
h5cmp "$work/f/at8.hdf" "$work/e/s_00008.hdf" --ignore /dpamr/deck || fail "3D step 8 is not the build at its time"

echo "== a name with a tab and a backslash: the series is still JSON"
(cd "$work/z" && "$dpamr" run "$d2" variant=cpu steps=1 output_every=1 max_level=2 output=$'t\tq_%d\\x.hdf' \
    verbosity=quiet >/dev/null) || fail "a run with a tab in its output name"
"$py" -c "import json,sys; f=json.load(open(sys.argv[1]))['files']; assert [e['name'] for e in f]==['t\\tq_0\\\\x.hdf','t\\tq_1\\\\x.hdf'], f" \
    "$work/z/"$'t\tq_\\x.hdf.series' || fail "the series of a name with a tab is not JSON, or lists other names"

echo "== steps = 0: the single build, as without the step keys"
"$dpamr" run "$src/inputs/default.inp" variant=cpu output="$work/z/plain.hdf" verbosity=quiet >/dev/null || fail "plain"
"$dpamr" run "$src/inputs/default.inp" variant=cpu output="$work/z/zero.hdf" steps=0 dt=0.5 regrid_every=2 \
    output_every=4 "model.disc.velocity=1 1" verbosity=quiet >/dev/null || fail "steps=0"
h5cmp "$work/z/plain.hdf" "$work/z/zero.hdf" --ignore /dpamr/deck || fail "steps = 0 differs from the plain build"
"$py" -c "import h5py,sys; sys.exit('step' in h5py.File(sys.argv[1],'r')['dpamr'].attrs)" "$work/z/zero.hdf" ||
    fail "steps = 0 output has /dpamr@step"

echo "== dpamr bench on a moving deck"
if (cd "$work/z" && "$dpamr" bench "$d2" steps=6 bench_repeats=2 bench_warmup=1 bench_out=sb >bench.log 2>&1); then
    grep -qE "^gate: [0-9]+ run\(s\) of 6 steps, the last step's mesh byte-identical" "$work/z/bench.log" || fail "bench gate line"
    [ "$(grep -cE '^ +[1-6] +0\.0[1-6] +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+% +[0-9.]+' "$work/z/bench.log")" -eq 6 ] ||
        fail "bench: expected 6 step rows"
    grep -q "^regrid per step (cpu): median" "$work/z/bench.log" || fail "bench summary"
    # 6 rows per variant (cpu; with a GPU also hostlaunch and cdp, pdl off and on)
    nvar=$(tail -n +2 "$work/z/sb.csv" | cut -d, -f2,3 | sort -u | wc -l)
    [ "$(tail -n +2 "$work/z/sb.csv" | wc -l)" -eq $((6 * nvar)) ] || fail "bench CSV rows"
    "$py" -c "import json,sys,collections; r=json.load(open(sys.argv[1]))['rows']; c=collections.Counter((x['variant'],x['pdl']) for x in r); assert ('cpu','-') in c and set(c.values())=={6} and all(len(x['regrid_samples_ms'])==2 for x in r)" \
        "$work/z/sb.json" || fail "bench JSON"
    check_level_ms "$work/z/sb.json" || fail "bench JSON: level_ms"
    grep -q "^rebuild per level, ms" "$work/z/bench.log" || fail "bench: no per-level table"
    grep -q "^regrid per step by phase, ms" "$work/z/bench.log" || fail "bench: no phase table"
    sed -n '/^  step/,$p' "$work/z/bench.log" | head -12
else
    fail "bench"; cat "$work/z/bench.log"
fi
finish steps
