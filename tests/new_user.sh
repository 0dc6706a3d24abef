#!/bin/bash
# new_user.sh DPAMR SRC BUILD_DIR - the paths a new user walks (issue 16), each behaviour asserted:
# help for every subcommand and deck key, no file dpamr did not write is overwritten, paths relative
# to where they were written, a missing mesh and a bad output folder said before any work, the
# warnings, an install into a temporary prefix that runs from there, render.py without a display,
# the Python scripts on a python that lacks their modules, mesh_from_numpy.py's command line and its
# errors.
set -uo pipefail
dpamr=$1 src=$2 build=$3
source "$(dirname "$0")/lib.sh"
tmp_dir
work=$tmp
md5() { md5sum "$1" | cut -d' ' -f1; }
# expect NAME RC PATTERN CMD...: CMD exits RC (any non-zero for "!0") and prints PATTERN (stdout or stderr)
expect() {
    local name=$1 want=$2 pattern=$3
    shift 3
    "$@" >"$work/out.log" 2>&1
    local rc=$?
    cat "$work/out.log" >>"$work/all.log"
    if { [ "$want" = "!0" ] && [ $rc -eq 0 ]; } || { [ "$want" != "!0" ] && [ $rc -ne "$want" ]; }; then
        fail "$name: exit $rc, expected $want:"; head -c 600 "$work/out.log"; echo; return
    fi
    if ! grep -q -- "$pattern" "$work/out.log"; then
        fail "$name: no '$pattern' in:"; head -c 600 "$work/out.log"; echo; return
    fi
    echo "ok   $name: $(grep -m1 -- "$pattern" "$work/out.log" | head -c 200)"
}

echo "== help for every subcommand, and for deck keys from the key table"
for sub in run mesh check bench gpu help; do
    expect "$sub --help" 0 "usage: dpamr $sub" "$dpamr" $sub --help
    expect "$sub -h" 0 "usage: dpamr $sub" "$dpamr" $sub -h
done
expect "run DECK --help" 0 "usage: dpamr run" "$dpamr" run "$src/inputs/default.inp" --help
expect "help max_level" 0 "valid:   0..23" "$dpamr" help max_level
expect "help a model key by its object's name" 0 "model.NAME.type" "$dpamr" help model.disc.type
expect "help overwrite" 0 "own, never" "$dpamr" help overwrite
expect "help on no key" 1 "neither a deck key nor a subcommand; did you mean 'tile_size'?" "$dpamr" help tile_sise
expect "the man page" 0 "^.TH DPAMR 1" "$dpamr" --man
# the table validates: what help says is valid is what the deck accepts
expect "help's range is the deck's" 1 "max_level.*out of range (0 to 23)" "$dpamr" run "$src/inputs/default.inp" max_level=24
expect "help keys lists every key" 0 "^model.NAME.velocity" "$dpamr" help keys
expect "an unknown key points at help keys" 1 "did you mean 'max_level'? (\`dpamr help keys\` lists every key)" \
    "$dpamr" run "$src/inputs/default.inp" mxa_level=3
expect "a swapped pair of letters is one edit" 1 "did you mean 'run'?" "$dpamr" rnu "$src/inputs/default.inp"
expect "a short misspelling is answered too" 1 "did you mean 'run'?" "$dpamr" rn "$src/inputs/default.inp"
expect "a misspelt object is answered with the nearest" 1 "object 'dsc' is not in model.objects (disc hill): did you mean 'disc'?" \
    "$dpamr" run "$src/inputs/default.inp" model.dsc.type=sphere
expect "a range says its numbers" 1 "5000 is out of range (0 (OpenMP default) or a thread count, 1 to 4096)" \
    "$dpamr" run "$src/inputs/default.inp" threads=5000
printf 'dim = 2\nroot = 2 2\n' >"$work/noobj.inp"
expect "dpamr mesh without model.objects" 1 "dpamr mesh samples level 0 from model.objects, and the deck names none" \
    "$dpamr" mesh "$work/noobj.inp"
expect "fill = model without model.objects" 1 "fill = model makes the new tiles' cells from model.objects, and the deck names none" \
    "$dpamr" run "$work/noobj.inp" fill=model
[ -e "$work/noobj.mesh.hdf" ] && fail "dpamr mesh without objects wrote a mesh"

echo "== a deck of one's own: paths in the deck from its folder, on the command line from here"
mkdir -p "$work/decks" "$work/here"
{ sed -e 's/^mesh_file.*/mesh_file = my.mesh.hdf/' "$src/inputs/default.inp"; echo "output = my_out.hdf"; } \
    >"$work/decks/my.inp"
cd "$work/here" || exit 1
expect "a missing mesh says how to make it" 1 "dpamr mesh ../decks/my.inp\`" "$dpamr" run ../decks/my.inp
expect "a missing mesh named on the command line: mesh with the same overrides" 1 \
    "dpamr mesh ../decks/my.inp KEY=VALUE...\` (this command's overrides, output= left out)" \
    "$dpamr" run ../decks/my.inp mesh_file=elsewhere.mesh.hdf
expect "dpamr mesh writes beside the deck" 0 "wrote ../decks/my.mesh.hdf" "$dpamr" mesh ../decks/my.inp
[ -f "$work/decks/my.mesh.hdf" ] && [ ! -e my.mesh.hdf ] || fail "the mesh is not beside the deck"
expect "run: the header prints the resolved paths" 0 "reads ../decks/my.mesh.hdf, writes ../decks/my_out.hdf" \
    "$dpamr" run ../decks/my.inp
expect "run: the estimated size and memory" 0 "estimated .* to .*; memory up to" "$dpamr" run ../decks/my.inp
cp "$work/decks/my.mesh.hdf" local.mesh.hdf
expect "command-line paths from the current directory" 0 "reads local.mesh.hdf, writes here.hdf" \
    "$dpamr" run ../decks/my.inp mesh_file=local.mesh.hdf output=here.hdf
[ -f here.hdf ] || fail "output= on the command line did not write ./here.hdf"

echo "== what a run prints, and what it records"
expect "the summary of phases" 0 "^phases: load .* upload .* refine .* download .* validate .* write .* total" \
    "$dpamr" run ../decks/my.inp output=phases.hdf
"$dpamr" run ../decks/my.inp output=quiet.hdf verbosity=quiet >quiet.log 2>&1 || fail "verbosity=quiet: the run"
# one line: "wrote quiet.hdf" (the MPI build adds how it wrote)
[ "$(wc -l <quiet.log)" -eq 1 ] && grep -q "^wrote quiet.hdf" quiet.log ||
    { fail "verbosity=quiet printed more than the written file:"; head -5 quiet.log; }
# again, over its own file: still that one line (the replacement is said only when not quiet)
"$dpamr" run ../decks/my.inp output=quiet.hdf verbosity=quiet >quiet.log 2>&1 || fail "verbosity=quiet: the re-run"
[ "$(wc -l <quiet.log)" -eq 1 ] && grep -q "^wrote quiet.hdf" quiet.log ||
    { fail "verbosity=quiet over its own file printed more than the written file:"; head -5 quiet.log; }
expect "verbosity=verbose: the build and machine" 0 "^build: commit .*; CUDA: .*; device: .*; host .* thread" \
    "$dpamr" run ../decks/my.inp output=verbose.hdf verbosity=verbose
expect "--version: the build" 0 "^build: commit .*, .*; CUDA: " "$dpamr" --version
"$dpamr" run ../decks/my.inp variant=cpu output=cpu.hdf >cpu.log 2>&1
grep -q "pdl=" cpu.log && fail "the cpu run's header speaks of pdl"
pick_python h5py
if $py -c "import h5py" 2>/dev/null; then
    $py -c "
import h5py, sys
a = h5py.File('phases.hdf', 'r')['dpamr/provenance'].attrs
want = ['load_ms', 'upload_ms', 'refine_ms', 'download_ms', 'validate_ms', 'total_ms', 'commit', 'build', 'compiler',
        'cuda', 'device', 'host', 'date', 'threads']
missing = [k for k in want if k not in a]
sys.exit('provenance lacks ' + ', '.join(missing) if missing else 0)" || fail "provenance"
fi

echo "== nothing dpamr did not write is written over"
expect "own output replaced, in one line" 0 "written by dpamr earlier: it will be replaced" \
    "$dpamr" run ../decks/my.inp mesh_file=local.mesh.hdf output=here.hdf
expect "overwrite=never keeps even its own" 1 "overwrite = never" \
    "$dpamr" run ../decks/my.inp mesh_file=local.mesh.hdf output=here.hdf overwrite=never
echo "my notes" >notes.hdf
expect "run refuses a foreign output" 1 "notes.hdf exists and is not an HDF5 file, so not a dpamr output" "$dpamr" run ../decks/my.inp output=notes.hdf
[ "$(cat notes.hdf)" = "my notes" ] || fail "a foreign output was touched"
# dpamr's files of the other kind: a run's output never replaces a mesh (some deck's input), nor
# dpamr mesh a run's output
"$dpamr" mesh ../decks/my.inp mesh_file=other.mesh.hdf >/dev/null || fail "dpamr mesh other.mesh.hdf"
before=$(md5 other.mesh.hdf)
expect "run refuses to replace a mesh" 1 "other.mesh.hdf exists and is a level-0 mesh written by .dpamr mesh. (a deck's input)" \
    "$dpamr" run ../decks/my.inp mesh_file=local.mesh.hdf output=other.mesh.hdf
[ "$(md5 other.mesh.hdf)" = "$before" ] || fail "a run replaced a mesh"
before=$(md5 here.hdf)
expect "mesh refuses to replace a run's output" 1 "here.hdf exists and is the output of a .dpamr run." \
    "$dpamr" mesh ../decks/my.inp mesh_file=here.hdf
[ "$(md5 here.hdf)" = "$before" ] || fail "dpamr mesh replaced a run's output"
pick_python numpy
if $py -c "import h5py" 2>/dev/null; then
    "$py" "$src/tools/mesh_from_numpy.py" numpy.hdf --demo 2 >/dev/null || fail "mesh_from_numpy --demo"
    before=$(md5 numpy.hdf)
    expect "mesh refuses a user's numpy mesh" 1 "not written by dpamr" "$dpamr" mesh ../decks/my.inp mesh_file=numpy.hdf
    expect "run refuses a user's numpy mesh as output" 1 "not written by dpamr" "$dpamr" run ../decks/my.inp output=numpy.hdf
    [ "$(md5 numpy.hdf)" = "$before" ] || fail "the numpy mesh was overwritten"
    expect "check: a file dpamr did not write exits 1, not 2" 1 "numpy.hdf: it was not written by dpamr" \
        "$dpamr" check numpy.hdf
fi

echo "== bench_out: the same rules, before any timing"
echo "my notes" >notes.csv
expect "bench refuses a foreign CSV" 1 "notes.csv exists and is not a csv that dpamr bench wrote" \
    "$dpamr" bench ../decks/my.inp bench_repeats=1 bench_out=notes
[ "$(cat notes.csv)" = "my notes" ] || fail "bench wrote over a foreign CSV"
grep -q "gate:" "$work/out.log" && fail "bench timed before checking bench_out"
echo '{"mine": 1}' >mine.json
expect "bench refuses a foreign JSON" 1 "mine.json exists and is not a json that dpamr bench wrote" \
    "$dpamr" bench ../decks/my.inp bench_repeats=1 bench_out=mine
[ -e mine.csv ] && fail "bench wrote half of bench_out"
ln -s notes.csv link.csv
expect "bench refuses a symbolic link" 1 "link.csv exists and is not a regular file (a symbolic link)" \
    "$dpamr" bench ../decks/my.inp bench_repeats=1 bench_out=link
[ -L link.csv ] || fail "bench replaced a symbolic link"
expect "bench_out folder missing" 1 "its folder nowhere does not exist" \
    "$dpamr" bench ../decks/my.inp bench_repeats=1 bench_out=nowhere/b
grep -q "gate:" "$work/out.log" && fail "bench timed before checking bench_out's folder"
for b in mine/ . ..; do
    expect "bench_out=$b is a folder, not a prefix" 1 "bench_out=$b': names a folder, not a prefix" \
        "$dpamr" bench ../decks/my.inp bench_repeats=1 bench_out=$b
done
expect "bench writes its files" 0 "wrote mine2.csv and mine2.json" "$dpamr" bench ../decks/my.inp bench_repeats=1 bench_out=mine2
expect "bench replaces its own, in one line each" 0 "bench_out = mine2.json exists, written by dpamr earlier" \
    "$dpamr" bench ../decks/my.inp bench_repeats=1 bench_out=mine2
expect "bench: overwrite=never keeps its own" 1 "overwrite = never" \
    "$dpamr" bench ../decks/my.inp bench_repeats=1 bench_out=mine2 overwrite=never

echo "== an interrupted write leaves no file behind"
# SIGINT and SIGTERM while the output is written: neither the output nor its NAME.tmp.PID remains.
# Job control on: a background job of a script otherwise starts with SIGINT ignored (as under nohup),
# and dpamr leaves an ignored signal ignored.
set -m
for sig in INT TERM; do
    rm -f killed.hdf killed.hdf.tmp.*
    "$dpamr" run ../decks/my.inp max_level=11 output=killed.hdf >killed.log 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do
        compgen -G "killed.hdf.tmp.*" >/dev/null && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.05
    done
    if compgen -G "killed.hdf.tmp.*" >/dev/null; then
        kill -$sig $pid
        wait $pid
        rc=$?
        [ $rc -ne 0 ] || fail "SIG$sig: the run exited 0"
        ls killed.hdf* >/dev/null 2>&1 && { fail "SIG$sig left:"; ls -la killed.hdf*; }
        echo "ok   SIG$sig during the write: exit $rc, no output and no temporary file left"
    else
        wait $pid
        echo "note SIG$sig: the write ended before it was seen (nothing to interrupt)"
        rm -f killed.hdf
    fi
done
set +m
# the signal at the very moment the temporary file is made (strace delivers it on the exclusive
# create): the name is registered before the create, so nothing is left (the run's HDF5 output and
# the series file of a time-step run)
if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
    for what in output series; do
        rm -rf sigwin && mkdir sigwin
        if [ $what = output ]; then args=(max_level=2 output=sigwin/w.hdf); else args=(max_level=2 steps=1 dt=0.01 output=sigwin/w_%02d.hdf); fi
        strace -o sigwin/trace -e trace=openat "$dpamr" run ../decks/my.inp "${args[@]}" >/dev/null 2>&1
        pat='w\.hdf\.tmp'; [ $what = series ] && pat='w\.hdf\.series\.tmp'
        n=$(grep -n 'O_EXCL' sigwin/trace | grep "$pat" | head -1 | cut -d: -f1)
        rm -f sigwin/w*
        if [ -z "$n" ]; then fail "signal at the create ($what): no exclusive create of the temporary file seen"; continue; fi
        strace -o /dev/null -e trace=openat -e inject=openat:signal=SIGTERM:when="$n" \
            "$dpamr" run ../decks/my.inp "${args[@]}" >/dev/null 2>&1
        rc=$?
        if [ $rc -ne 143 ]; then fail "signal at the create ($what): exit $rc, not 143 (SIGTERM)"
        elif compgen -G "sigwin/*.tmp.*" >/dev/null || [ -e sigwin/w.hdf ] || [ -e sigwin/w.hdf.series ]; then
            fail "signal at the create ($what) left:"; ls -la sigwin
        else echo "ok   SIGTERM at the $what's temporary file's create: no temporary file and no $what left (complete step files stay: $(cd sigwin && ls -m w* 2>/dev/null || echo none))"; fi
    done
    rm -rf sigwin
else
    echo "note strace (with ptrace) is not available: the signal at the temporary file's create is not tested"
fi

# a temporary file whose process is gone (a SIGKILL, as mpiexec ends its ranks on an interrupt): named
# in a note, never removed (it may be another's)
sh -c 'exit 0' & dead=$!
wait $dead
echo partial >"stale.hdf.tmp.$dead"
expect "a stale temporary file is named" 0 "note: .* holds 1 temporary file(s) of dpamr runs .*stale.hdf.tmp.$dead" \
    "$dpamr" run ../decks/my.inp max_level=2 output=fresh.hdf
[ "$(cat "stale.hdf.tmp.$dead")" = partial ] || fail "the stale temporary file was touched"
rm -f "stale.hdf.tmp.$dead" fresh.hdf

echo "== the output location is checked before any refinement"
expect "output folder missing" 1 "nowhere does not exist" "$dpamr" run ../decks/my.inp output=nowhere/x.hdf
grep -q "level  1" "$work/out.log" && fail "refined before the output folder was checked"
long=$(printf 'n%.0s' $(seq 1 246)).hdf
expect "an output name with no room for NAME.tmp.PID" 1 "the file name has 250 characters; at most 240 fit" \
    "$dpamr" run ../decks/my.inp output="$long"
grep -q "level  1" "$work/out.log" && fail "refined before the output name was checked"
if [ "$(id -u)" -ne 0 ]; then
    mkdir ro && chmod 555 ro
    expect "output folder not writable" 1 "cannot write in the folder" "$dpamr" run ../decks/my.inp output=ro/x.hdf
fi

echo "== warnings"
expect "model object outside the domain" 0 "warning: .*'hill' lies entirely outside the domain" \
    "$dpamr" mesh ../decks/my.inp mesh_file=outside.hdf model.hill.center="5 5"
expect "refinement stopped before max_level" 0 "warning: refinement stopped at level .* below max_level 12" \
    "$dpamr" run ../decks/my.inp output=shallow.hdf criterion=jump threshold=0.1 max_level=12
expect "steps past the last output step, even when quiet" 0 "warning: steps = 3 is not a multiple of output_every = 10: the last step written is 0" \
    "$dpamr" run "$src/inputs/moving2d.inp" mesh_file="$src/inputs/moving2d.mesh.hdf" steps=3 output=st_%05d.hdf verbosity=quiet
"$dpamr" mesh ../decks/my.inp mesh_file=quiet.mesh.hdf verbosity=quiet >qm.log 2>&1 || fail "quiet mesh"
grep -q "needs about" qm.log && fail "mesh verbosity=quiet printed its memory estimate"
expect "gpu takes no arguments" 1 "'gpu' takes no arguments (got 'extra')" "$dpamr" gpu extra
expect "--version takes no arguments" 1 "'--version' takes no arguments" "$dpamr" --version extra
if ! "$dpamr" gpu >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q "libcuda.so.1 "; then
    expect "no driver is not called an old driver" 1 "no NVIDIA driver\|built without CUDA" "$dpamr" gpu
fi

echo "== cmake --install into a temporary prefix, run from there"
prefix=$work/prefix
if cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
    for f in bin/dpamr bin/cu-launch-lint share/man/man1/dpamr.1 share/dpamr/mesh_from_numpy.py \
        share/dpamr/render.py share/dpamr/plot_bench.py share/dpamr/inputs/default.inp share/doc/dpamr/README.md \
        share/doc/dpamr/docs/decks.md; do
        [ -e "$prefix/$f" ] || fail "install: $f missing"
    done
    expect "installed dpamr runs" 0 "wrote inst.hdf" "$prefix/bin/dpamr" run "$prefix/share/dpamr/inputs/default.inp" output=inst.hdf
    expect "installed dpamr checks" 0 "validation: PASSED" "$prefix/bin/dpamr" check inst.hdf
    expect "installed cu-launch-lint runs" 0 "launch(es) read" "$prefix/bin/cu-launch-lint" "$src/device/engine_host.cu"
    # a shipped deck run from elsewhere without output=: its file lands here, not in the install
    mkdir -p "$work/elsewhere"
    expect "an installed deck writes into the current directory" 0 "wrote default.hdf" \
        sh -c 'cd "$1" && exec "$2" run "$3" max_level=3' sh "$work/elsewhere" "$prefix/bin/dpamr" \
        "$prefix/share/dpamr/inputs/default.inp"
    [ -f "$work/elsewhere/default.hdf" ] && [ ! -e "$prefix/share/dpamr/inputs/default.hdf" ] ||
        fail "the installed deck's output is not in the current directory"
    # the installed scripts find their module (dpamr_file.py) beside them
    pick_python matplotlib
    if $py -c "import h5py, matplotlib" 2>/dev/null; then
        expect "installed render.py runs" 0 "wrote inst.png" env -u DISPLAY timeout 120 "$py" \
            "$prefix/share/dpamr/render.py" inst.hdf inst.png --no-edges
    fi
    grep -q "^.TH DPAMR" "$prefix/share/man/man1/dpamr.1" || fail "install: the man page is not one"
else
    fail "cmake --install"; cat "$work/install.log"
fi

echo "== render.py without a display: off-screen, no hang"
pick_python matplotlib
if $py -c "import h5py, matplotlib" 2>/dev/null; then
    "$dpamr" run "$src/inputs/sphere3d.inp" variant=cpu output=s3.hdf >/dev/null 2>&1 || fail "sphere3d run"
    expect "render.py 2D, no DISPLAY" 0 "wrote r2.png.*matplotlib" env -u DISPLAY timeout 120 "$py" \
        "$src/validation/render.py" here.hdf r2.png --no-edges
    expect "render.py 3D slice through the finest tiles" 0 "wrote r3.png.*matplotlib" env -u DISPLAY timeout 120 \
        "$py" "$src/validation/render.py" s3.hdf r3.png
    expect "render.py slice axis, position, levels" 0 "wrote r4.png" env -u DISPLAY timeout 120 "$py" \
        "$src/validation/render.py" s3.hdf r4.png --axis x --at 0.3 --levels 1:2
    expect "render.py a slice outside the domain" 1 "outside the domain" env -u DISPLAY timeout 120 "$py" \
        "$src/validation/render.py" s3.hdf r5.png --at 7
    for png in r2 r3 r4; do [ "$(head -c 4 $png.png | tail -c 3)" = "PNG" ] || fail "$png.png is not a PNG"; done
else
    echo "render.py: skipped (no h5py and matplotlib)"
fi

echo "== the scripts on a python without their modules: one line naming them, no traceback"
# h5py, matplotlib and paraview shadowed by modules that raise ImportError (PYTHONPATH comes before
# the installed packages), as on a python (pyenv, a venv) first on PATH that lacks Debian's packages
mkdir -p nomods
for m in h5py matplotlib paraview; do echo "raise ImportError('$m hidden by new_user.sh')" >nomods/$m.py; done
cp "$src/tests/data/bench_sample_cpu.json" nomods.json
# lacks SCRIPT MODULES ARGS...: SCRIPT exits 1 with one line on stderr naming MODULES and their packages
lacks() {
    local script=$1 mods=$2 rc=0 name
    shift 2
    name=$(basename "$script")
    env -u DISPLAY PYTHONPATH="$work/here/nomods" "$py" "$script" "$@" >nomods.out 2>nomods.err || rc=$?
    local pkgs
    pkgs=$(for m in ${mods//,/}; do printf 'python3-%s ' "$m"; done)
    if [ $rc -ne 1 ] || [ "$(wc -l <nomods.err)" -ne 1 ] || grep -q Traceback nomods.err nomods.out ||
        ! grep -q "^$name: needs .*$mods.* (Debian: apt-get install .*${pkgs% }); this python is " nomods.err; then
        fail "$name without $mods: exit $rc, not 1 with one line:"; cat nomods.out nomods.err
    else
        echo "ok   $name without $mods: $(head -c 300 nomods.err)"
    fi
}
lacks "$src/validation/render.py" "h5py, matplotlib" here.hdf nomods.png
lacks "$src/validation/paraview_check.py" "h5py, paraview" here.hdf
lacks "$src/validation/paraview_series.py" "h5py, paraview" nomods.hdf.series
lacks "$src/tools/mesh_from_numpy.py" "h5py" nomods.hdf --demo 2
lacks "$src/tools/plot_bench.py" "matplotlib" nomods.json -o nomods.png
ls nomods.png nomods.hdf* 2>/dev/null && fail "a script without its modules wrote a file"

echo "== mesh_from_numpy.py: the user's .npy/.npz, clear errors, no half-written file"
pick_python h5py
if $py -c "import h5py, numpy" 2>/dev/null; then
    "$py" -c "
import numpy as np
np.save('good.npy', np.random.default_rng(1).random((32, 48)))
np.save('odd.npy', np.zeros((30, 48)))
np.savez('two.npz', rho=np.zeros((16, 16, 16)), T=np.zeros((16, 24, 16)))
a = np.zeros((16, 16)); a[2, 3] = np.nan; np.save('nan.npy', a)
np.savez('ghost.npz', rho=np.zeros((16, 16)), vtkGhostType=np.zeros((16, 16)))"
    np2h=("$py" "$src/tools/mesh_from_numpy.py")
    expect "numpy .npy" 0 "deck keys: dim = 2; root = 6 4" "${np2h[@]}" good.hdf good.npy --name rho
    expect "numpy: a shape not a multiple of the tile size" 1 "array 'odd': shape (30, 48).*multiple" \
        "${np2h[@]}" odd.hdf odd.npy
    expect "numpy: fields of different shapes" 1 "array 'T': shape (16, 24, 16) differs" "${np2h[@]}" two.hdf two.npz
    expect "numpy: NaN" 1 "array 'nan': holds NaN" "${np2h[@]}" nan.hdf nan.npy
    expect "numpy: a bad tile size" 1 "tile size 12: valid are 4, 8, 16, 32" "${np2h[@]}" t.hdf good.npy --tile-size 12
    expect "numpy: an existing file is kept" 1 "exists: it is kept" "${np2h[@]}" good.hdf good.npy
    # what dpamr refuses in the file (or in the deck that must match it) is refused before any file is
    # written: a non-finite origin or cell size, a far corner past the float range, the reserved name
    # (it was an HDF5 "name already exists" error), a name that is not an identifier
    expect "numpy: a NaN origin" 1 "origin nan 0.0: coordinate 0 is nan; every coordinate must be a finite" \
        "${np2h[@]}" o.hdf good.npy --origin nan 0
    expect "numpy: an infinite origin" 1 "origin 0.0 inf: coordinate 1 is inf" "${np2h[@]}" o.hdf good.npy --origin 0 inf
    expect "numpy: a far corner past the float range" 1 "far corner on axis 0, .* is not a finite number" \
        "${np2h[@]}" o.hdf good.npy --origin 1e308 0 --cell-size 1e307
    expect "numpy: a NaN cell size" 1 "cell size nan: must be a finite number > 0" "${np2h[@]}" o.hdf good.npy --cell-size nan
    expect "numpy: an infinite cell size" 1 "cell size inf: must be a finite number > 0" "${np2h[@]}" o.hdf good.npy \
        --cell-size inf
    expect "numpy: --name vtkGhostType" 1 "array 'vtkGhostType': 'vtkGhostType' is reserved" \
        "${np2h[@]}" o.hdf good.npy --name vtkGhostType
    expect "numpy: a .npz array named vtkGhostType" 1 "array 'vtkGhostType': 'vtkGhostType' is reserved" \
        "${np2h[@]}" o.hdf ghost.npz
    expect "numpy: a name ending in a newline" 1 "array 'rho\\\\n': not a field name" "${np2h[@]}" o.hdf good.npy \
        --name $'rho\n'
    grep "Traceback\|AssertionError\|already exists" "$work/all.log" && fail "a traceback or HDF5's error"
    ls odd.hdf* two.hdf* nan.hdf* t.hdf* o.hdf* 2>/dev/null && fail "a half-written file"
    expect "the numpy mesh refines" 0 "validation: PASSED" "$dpamr" run ../decks/my.inp mesh_file=good.hdf \
        root="6 4" cell_size=0.020833333333333332 criterion=jump output=good_out.hdf
fi
cd "$work" || exit 1
finish new_user
