#!/bin/bash
# steps_errors.sh DPAMR SRC WORKDIR [MPIRUN] - bad uses of time steps end in one clear message, a
# non-zero exit and nothing written (no step file, no series), and leave other files untouched:
# the GPU variants without a device, bad step keys on the command
# line, a series or step file dpamr did not write, overwrite = never, restarts past the end or with
# another dt or another refinement (max_level, threshold, a velocity: the step's stored deck), bench with nothing to time; with MPIRUN, more than one rank (and one rank runs).
set -uo pipefail
dpamr=$1 src=$2 work=$3 mpirun=${4:-}
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
d2=$src/inputs/moving2d.inp
cd "$work" || exit 1
short=(steps=4 dt=0.01 output=r_%05d.hdf output_every=2)

# CMD... must fail with PATTERN on stderr, and leave no r_*.hdf (beyond the ones listed in keep) nor a
# new series behind
refused() {
    local name=$1 pattern=$2
    shift 2
    "$@" >stdout 2>stderr
    local rc=$?
    if [ $rc -eq 0 ]; then fail "$name: exit 0"; return; fi
    if ! grep -q -- "$pattern" stderr; then fail "$name (exit $rc): stderr lacks '$pattern':"; cat stderr; return; fi
    [ "$(grep -c 'dpamr: error' stderr)" -eq 1 ] || { fail "$name: not one message"; cat stderr; }
    local left
    left=$(ls r_*.hdf r.hdf.series 2>/dev/null | grep -v -x -F -f keep 2>/dev/null || true)
    [ -z "$left" ] || fail "$name: left $left"
    echo "ok   $name (exit $rc): $(head -c 300 stderr)"
}
: >keep

if ! "$dpamr" gpu >/dev/null 2>&1; then  # without a device the GPU regrids stop before any work
    refused "variant=cdp" "variant=cdp needs a CUDA device" "$dpamr" run "$d2" "${short[@]}" variant=cdp
    refused "variant=hostlaunch" "variant=hostlaunch needs a CUDA device" \
        "$dpamr" run "$d2" "${short[@]}" variant=hostlaunch
    refused "bench bench_cpu=off" "nothing to time: no GPU" "$dpamr" bench "$d2" "${short[@]}" bench_cpu=off bench_out=b
else
    echo "skip GPU refusals: a usable device is present (the gpu label runs the GPU regrids)"
fi
refused "steps=-1" "override 'steps=-1': -1 is out of range (0 to 1000000)" "$dpamr" run "$d2" steps=-1
refused "steps x dt past the largest double" "override 'dt=1e308': steps x dt = 4 x 1e+308 is not a finite number" \
    "$dpamr" run "$d2" steps=4 dt=1e308 output=r_%05d.hdf
refused "a velocity that takes an object past the largest double" \
    "override 'model.hill.velocity=1e307 0': object 'hill' would be at a coordinate that is not a finite number" \
    "$dpamr" run "$d2" steps=4 dt=100 output=r_%05d.hdf "model.hill.velocity=1e307 0"
refused "no dt" "override 'steps=3': steps > 0 needs dt" "$dpamr" run "$src/inputs/default.inp" steps=3 output=r_%d.hdf
refused "dt=0" "override 'dt=0': must be > 0" "$dpamr" run "$d2" dt=0
refused "no %d" "override 'output=r.hdf': no %d" "$dpamr" run "$d2" output=r.hdf
refused "output_every" "override 'output_every=3': must be a multiple of regrid_every = 2" \
    "$dpamr" run "$d2" regrid_every=2 output_every=3
refused "velocity" "override 'model.disc.velocity=1': expected 2 numbers" "$dpamr" run "$d2" model.disc.velocity=1

echo "not a series" >r.hdf.series
echo r.hdf.series >keep
refused "foreign series" "the series r.hdf.series exists and was not written by dpamr" "$dpamr" run "$d2" "${short[@]}"
grep -qx "not a series" r.hdf.series || fail "foreign series changed"
rm r.hdf.series
: >keep
echo "my notes" >r_00004.hdf
echo r_00004.hdf >keep
refused "foreign step file" "output = r_00004.hdf exists and is not an HDF5 file" "$dpamr" run "$d2" "${short[@]}"
grep -qx "my notes" r_00004.hdf || fail "foreign step file changed"
rm r_00004.hdf
: >keep

"$dpamr" run "$d2" "${short[@]}" verbosity=quiet >/dev/null || fail "a short series"
printf '%s\n' r_00000.hdf r_00002.hdf r_00004.hdf r.hdf.series >keep
cp r.hdf.series series.before
refused "overwrite=never" "the series r.hdf.series exists (an earlier dpamr output) and overwrite = never" \
    "$dpamr" run "$d2" "${short[@]}" overwrite=never
refused "restart past the end" "mesh_file = r_00004.hdf is step 4 of a series and steps = 4: nothing is left" \
    "$dpamr" run "$d2" "${short[@]}" mesh_file=r_00004.hdf
refused "restart with another dt" "is step 2 at time 0.02.*but dt = 0.5" \
    "$dpamr" run "$d2" steps=4 dt=0.5 output=r_%05d.hdf output_every=2 mesh_file=r_00002.hdf
refused "restart with another max_level" "r_00002.hdf is step 2 of a series run with another 'max_level'" \
    "$dpamr" run "$d2" "${short[@]}" mesh_file=r_00002.hdf max_level=3
"$dpamr" run "$d2" steps=0 output=plain.hdf verbosity=quiet >/dev/null || fail "a single build"
refused "a mesh (not a step's file) deeper than max_level" "has levels up to 6 but max_level = 3" \
    "$dpamr" run "$d2" "${short[@]}" mesh_file=plain.hdf max_level=3
rm -f plain.hdf
refused "restart with another threshold" "r_00002.hdf is step 2 of a series run with another 'threshold'" \
    "$dpamr" run "$d2" "${short[@]}" mesh_file=r_00002.hdf threshold=0.3
refused "restart with another object's velocity" "run with another 'model.hill.velocity'" \
    "$dpamr" run "$d2" "${short[@]}" mesh_file=r_00002.hdf "model.hill.velocity=0 0"
refused "restart with no output step left" \
    "r_00002.hdf is step 2 and steps = 3: no step from 3 to 3 is a multiple of output_every = 2, so the run would write no file" \
    "$dpamr" run "$d2" steps=3 dt=0.01 output=r_%05d.hdf output_every=2 mesh_file=r_00002.hdf
refused "bench from a step's file" "is step 2 of a series: dpamr bench times a series from its first build" \
    "$dpamr" bench "$d2" "${short[@]}" mesh_file=r_00002.hdf bench_out=b
refused "bench with no regrid" "steps = 1 and regrid_every = 2: no step regrids, so there is nothing to time" \
    "$dpamr" bench "$d2" steps=1 dt=0.01 regrid_every=2 output_every=2 output=r_%05d.hdf bench_out=b
[ ! -e b.csv ] && [ ! -e b.json ] || fail "bench with nothing to time wrote its tables"
cmp -s r.hdf.series series.before || fail "the series changed"
expect_line "own series replaced" "existing file(s) written by dpamr earlier will be replaced" \
    "$dpamr" run "$d2" "${short[@]}"
# a re-run over its own files that fails at step 1 (max_tiles: step 0 builds 3115 tiles, step 1 needs
# 6354): says which earlier files it did not replace
if "$dpamr" run "$d2" "${short[@]}" max_tiles=4000 >fail.out 2>fail.err; then
    fail "a re-run with max_tiles=4000: exit 0"
elif grep -q "dpamr: note: 2 file(s) of an earlier run were not replaced (r_00002.hdf .. r_00004.hdf): they are not in r.hdf.series, which lists 1 file(s)$" fail.err; then
    echo "ok   a failed re-run names the earlier files it left: $(grep note fail.err)"
else
    fail "a failed re-run: no note of the earlier files left"; cat fail.err
fi

if [ -n "$mpirun" ]; then
    mpiexec=$mpirun
    source "$tests/mpi_flags.sh"
    # more than one rank runs steps (tests/mpi_steps.sh); a deck error still stops every rank with one message
    refused "mpirun -np 2, restart past the end" "mesh_file = r_00004.hdf is step 4 of a series and steps = 4" \
        timeout -k 5 120 "$mpirun" "${mpiflags[@]}" -np 2 "$dpamr" run "$d2" "${short[@]}" mesh_file=r_00004.hdf
    mkdir -p one && (cd one && timeout -k 5 120 "$mpirun" "${mpiflags[@]}" -np 1 "$dpamr" run "$d2" "${short[@]}" \
        verbosity=quiet >/dev/null) || fail "mpirun -np 1 with steps"
    h5cmp r_00004.hdf one/r_00004.hdf --ignore /dpamr/deck >/dev/null || fail "mpirun -np 1 differs"
fi
# a continued series lists only its own earlier files: a file of another run at an earlier step's
# name (another threshold) is left out, with a note
rm -f r_*.hdf r.hdf.series
"$dpamr" run "$d2" steps=2 dt=0.01 output=r_%05d.hdf output_every=1 threshold=0.3 verbosity=quiet >/dev/null &&
    "$dpamr" run "$d2" steps=2 dt=0.01 output=r_%05d.hdf output_every=2 verbosity=quiet >/dev/null &&
    "$dpamr" run "$d2" steps=3 dt=0.01 output=r_%05d.hdf output_every=1 mesh_file=r_00002.hdf verbosity=quiet \
        >cont.out 2>cont.err || fail "the runs of another run's file in the series"
if grep -q "dpamr: note: r_00001.hdf is left out of the continued series r.hdf.series: it was run with another 'threshold'" cont.err &&
    "$py" -c "import json,sys; f=[e['name'] for e in json.load(open('r.hdf.series'))['files']]; sys.exit(f != ['r_00000.hdf','r_00002.hdf','r_00003.hdf'])"; then
    echo "ok   another run's file at an earlier step is left out of the continued series: $(cat cont.err)"
else
    fail "another run's file in a continued series"; cat cont.err r.hdf.series
fi
# two patterns with one series name: the second run says the series lists the first's files
rm -f r_*.hdf r-*.hdf r.hdf.series
"$dpamr" run "$d2" steps=2 dt=0.01 output=r_%05d.hdf output_every=2 verbosity=quiet >/dev/null 2>&1 &&
    "$dpamr" run "$d2" steps=2 dt=0.01 output=r-%03d.hdf output_every=2 verbosity=quiet >pat.out 2>pat.err ||
    fail "the runs of two patterns"
if grep -q "dpamr: note: the series r.hdf.series lists the files of output = r_%05d.hdf; it will list this run's (r-%03d.hdf) instead" pat.err &&
    grep -q '"output" : "r-%03d.hdf"' r.hdf.series && [ -e r_00002.hdf ]; then
    echo "ok   another pattern's series replaced with a note: $(cat pat.err)"
else
    fail "another pattern's series: no note"; cat pat.err r.hdf.series
fi
finish steps_errors
