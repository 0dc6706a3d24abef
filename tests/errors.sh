#!/bin/bash
# errors.sh DPAMR DECK WORKDIR - bad input ends in one clear message and a non-zero exit,
# leaves no output file behind, keeps an older output intact and never modifies the input.
set -uo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
mesh=$(cd "$(dirname "$deck")" && pwd)/default.mesh.hdf
before=$(md5sum "$mesh" | cut -d' ' -f1)

# deck variants: the default deck with one line changed, mesh_file made absolute
mkdeck() { sed -e "s#^mesh_file.*#mesh_file = $mesh#" "$deck" >"$work/$1.inp"; shift; }
run() { "$dpamr" run "$work/$1.inp" output="$work/out.hdf" "${@:2}"; }

mkdeck unknown; echo "tile_sise = 8" >>"$work/unknown.inp"
expect_error "unknown key" "unknown.inp:.*tile_sise.*unknown key" run unknown
mkdeck dup; echo "max_level = 3" >>"$work/dup.inp"
expect_error "duplicate key" "dup.inp:.*max_level.*duplicate" run dup
mkdeck type; sed -i 's/^tile_size .*/tile_size = eight/' "$work/type.inp"
expect_error "wrong type" "type.inp:.*tile_size.*not an integer" run type
mkdeck range; sed -i 's/^tile_size .*/tile_size = 12/' "$work/range.inp"
expect_error "not a power of two" "range.inp:.*tile_size.*power of two" run range
mkdeck range2; sed -i 's/^max_level .*/max_level = 99/' "$work/range2.inp"
expect_error "out of range" "range2.inp:.*max_level.*out of range" run range2
mkdeck choice; sed -i 's/^fill .*/fill = cubic/' "$work/choice.inp"
expect_error "bad choice" "choice.inp:.*fill.*valid values are prolong, model" run choice
mkdeck syntax; echo "just some words" >>"$work/syntax.inp"
expect_error "not key = value" "syntax.inp:.*not 'key = value'" run syntax
mkdeck ok
expect_error "bad override" "command line.*max_level=-1" run ok max_level=-1
expect_error "a key twice on the command line" "override 'max_level=2': given twice on the command line" \
    run ok max_level=3 max_level=2
expect_error "a file line made wrong by an override names the override" "key 'root' = .*expected 3 values.*(the command line sets dim=3" \
    run ok dim=3
expect_error "an object's keys without the object in model.objects" "object 'hill' is not in model.objects (disc)" \
    run ok model.objects=disc
expect_error "a hex number from the user" "'0x10' is not a decimal number" run ok threshold=0x10
long=$(printf 'v%.0s' $(seq 1 5000))
expect_error "a long value is cut, the reason stays" "mesh_file=v\{200\}\.\.\. (5004 characters)': longer than 4095 characters" \
    run ok mesh_file="$long.hdf"
expect_error "missing deck" "nosuch.inp.*cannot open" "$dpamr" run "$work/nosuch.inp"
expect_error "unknown subcommand" "unknown subcommand" "$dpamr" frobnicate
expect_error "a step pattern as output with steps = 0" "output = $work/r_%05d.hdf is a pattern of time steps" \
    "$dpamr" run "$work/ok.inp" output="$work/r_%05d.hdf"
expect_error "output with no name before .hdf" "override 'output=$work/.hdf': has no name before .hdf" \
    "$dpamr" run "$work/ok.inp" output="$work/.hdf"
expect_error "a number past long long" "'99999999999999999999' is out of range (0 to 23)" run ok max_level=99999999999999999999
expect_error "a number that rounds to 0" "'1e-400' is too small: it rounds to 0" run ok threshold=1e-400
# a newline or carriage return in a command-line value would break the deck stored in the file
expect_error "a newline in an override" "override 'output=$work/x\\\\x0ay.hdf': holds the control character 0x0a" \
    "$dpamr" run "$work/ok.inp" "output=$work/x"$'\n'"y.hdf"
ls "$work"/x* >/dev/null 2>&1 && fail "a newline in an override: a file was written"
expect_error "a carriage return in an override" "holds the control character 0x0d at position 2" \
    run ok mesh_file=a$'\r'b.hdf
expect_error "model values past float32" "model.disc.inside=1e39': field 'rho': the objects' values can add up to" \
    run ok model.disc.inside=1e39
expect_error "a domain past the largest double" "the domain's far corner on axis 0, .* is not a finite number" \
    run ok cell_size=1e308
printf '\xef\xbb\xbf' | cat - "$work/ok.inp" >"$work/bom.inp"
"$dpamr" run "$work/bom.inp" output="$work/bom.hdf" verbosity=quiet >/dev/null 2>&1 || fail "a deck with a UTF-8 byte-order mark"
rm -f "$work/bom.hdf"
printf 'dim = 2\n\001\n' >"$work/ctl.inp"
expect_error "a control character is shown" "ctl.inp:2: '\\\\x01' is not 'key = value'" "$dpamr" run "$work/ctl.inp"
# past the file size limit (ulimit -f 6 MB; the output is 8 MB): 'File too large', no temporary file
# (the build without MPI: Open MPI 4 does not start under such a limit)
if "$dpamr" --version | grep -q "(MPI: no"; then
    expect_error "a file past ulimit -f" "cannot write $work/big.hdf: .*(File too large)" \
        sh -c 'ulimit -f 6000 && exec "$@"' sh "$dpamr" run "$work/ok.inp" output="$work/big.hdf"
    ls "$work"/big.hdf* >/dev/null 2>&1 && fail "ulimit -f: a file was left: $(ls "$work"/big.hdf*)"
fi
expect_error "stdout that cannot be written" "writing to standard output failed: No space left on device" \
    sh -c 'exec "$@" >/dev/full' sh "$dpamr" --version
# stdout and stderr closed: they are opened on /dev/null, the run writes its file and exits 0
"$dpamr" run "$work/ok.inp" output="$work/closed.hdf" >&- 2>&- || fail "a run with stdout and stderr closed: exit $?"
"$dpamr" check "$work/closed.hdf" >/dev/null 2>&1 || fail "the file of a run with stdout and stderr closed"
rm -f "$work/closed.hdf"
expect_error "a misspelt subcommand" "unknown subcommand 'chek' (did you mean 'check'?" "$dpamr" chek x.hdf
expect_error "a misspelt key on the command line" "override 'treshold=0.2': unknown key; did you mean 'threshold'?" \
    run ok treshold=0.2
expect_error "missing argument" "needs a DECK" "$dpamr" run

# mesh files
expect_error "missing mesh" "nosuch.hdf" run ok mesh_file="$work/nosuch.hdf"
echo "not an hdf5 file" >"$work/text.hdf"
expect_error "not HDF5" "text.hdf" run ok mesh_file="$work/text.hdf"
$py -c "import h5py; h5py.File('$work/empty.hdf', 'w', libver=('v108', 'v110')).create_group('other')"
expect_error "no /dpamr group" "empty.hdf.*dpamr" run ok mesh_file="$work/empty.hdf"
cp "$mesh" "$work/nan.hdf"
$py -c "
import h5py, numpy as np
f = h5py.File('$work/nan.hdf', 'r+'); d = f['/VTKHDF/Level0/CellData/rho']; a = d[()]; a[3 * 64 + 5] = np.nan; d[...] = a"
expect_error "NaN in mesh" "nan.hdf: /VTKHDF/Level0/CellData/rho: tile 3 .* cell 5 .* is NaN" run ok mesh_file="$work/nan.hdf"
cp "$mesh" "$work/shape.hdf"
$py -c "
import h5py
f = h5py.File('$work/shape.hdf', 'r+'); c = f['/VTKHDF/Level0/AMRBox'][()]; del f['/VTKHDF/Level0/AMRBox']
f['/VTKHDF/Level0/AMRBox'] = c[:, :4]"
expect_error "wrong shape" "shape.hdf: /VTKHDF/Level0/AMRBox has shape (16,4), expected (16,6)" run ok mesh_file="$work/shape.hdf"
cp "$mesh" "$work/dtype.hdf"
$py -c "
import h5py, numpy as np
f = h5py.File('$work/dtype.hdf', 'r+'); a = f['/dpamr/tiles/parent'][()]; del f['/dpamr/tiles/parent']
f['/dpamr/tiles/parent'] = np.array([b'x'] * len(a))"
expect_error "wrong dtype" "dtype.hdf: /dpamr/tiles/parent has type string, expected int64" run ok mesh_file="$work/dtype.hdf"
mkdeck other; sed -i 's/^tile_size .*/tile_size = 16/' "$work/other.inp"
expect_error "mesh does not match deck" "tile_size" run other

# without a GPU: cdp and hostlaunch say so and fail; auto falls back to cpu and says so
if ! "$dpamr" gpu >/dev/null; then
    expect_error "variant=cdp without a GPU" "variant=cdp needs a CUDA device" run ok variant=cdp
    expect_error "variant=hostlaunch without a GPU" "variant=hostlaunch needs a CUDA device" run ok variant=hostlaunch
    # host: the engine's old name, still accepted, and named by its new one
    expect_error "variant=host (old name) without a GPU" "variant=hostlaunch needs a CUDA device" run ok variant=host
    if run ok variant=auto >"$work/auto.log" 2>&1 && grep -q "falling back to variant=cpu" "$work/auto.log"; then
        echo "ok   variant=auto without a GPU: $(grep falling "$work/auto.log")"
    else
        fail "variant=auto without a GPU"; cat "$work/auto.log"
    fi
    rm -f "$work/out.hdf"
fi

# dpamr never writes over its inputs
cp "$mesh" "$work/own.hdf"
own=$(md5sum "$work/own.hdf" | cut -d' ' -f1)
expect_error "output over the input mesh" "is the input mesh" "$dpamr" run "$work/ok.inp" mesh_file="$work/own.hdf" output="$work/own.hdf"
[ "$(md5sum "$work/own.hdf" | cut -d' ' -f1)" = "$own" ] || fail "the input mesh was overwritten"
cp "$work/ok.inp" "$work/self.inp"
expect_error "mesh_file over the deck" "is the deck itself" "$dpamr" mesh "$work/self.inp" mesh_file="$work/self.inp"
grep -q "^max_level" "$work/self.inp" || fail "the deck was overwritten"
# dpamr mesh writes mesh_file: an output= given to it is refused, not silently replaced by the deck's mesh_file
cp "$work/own.hdf" "$work/own2.hdf"
sed -e "s#^mesh_file.*#mesh_file = $work/own2.hdf#" "$deck" >"$work/meshout.inp"
expect_error "output= given to dpamr mesh" "override 'output=$work/m.hdf': dpamr mesh writes level 0 to mesh_file, not to output.*give mesh_file=$work/m.hdf" \
    "$dpamr" mesh "$work/meshout.inp" "output=$work/m.hdf"
cmp -s "$work/own.hdf" "$work/own2.hdf" && [ ! -e "$work/m.hdf" ] || fail "dpamr mesh with output= wrote a file"
mkdir -p "$work/adir.inp"
expect_error "a directory as the deck" "not a regular file" "$dpamr" run "$work/adir.inp"
mkdeck badlen; sed -i 's/^model.hill.radius .*/model.hill.radius = 0.1 0.2 0.3/' "$work/badlen.inp"
expect_error "radius list of the wrong length" "model.hill.radius.*expected 1 to 2" run badlen

# `dpamr check` notices a value changed after writing (structure still valid: a level-0 value)
"$dpamr" run "$work/ok.inp" output="$work/good.hdf" >/dev/null
cp "$work/good.hdf" "$work/tampered.hdf"
$py -c "
import h5py, numpy as np
f = h5py.File('$work/tampered.hdf', 'r+'); d = f['/VTKHDF/Level0/CellData/rho']; a = d[()]; a[0] = np.nextafter(a[0], 9.0, dtype=np.float32); d[...] = a"
if "$dpamr" check "$work/tampered.hdf" >"$work/check.log" 2>&1 || ! grep -q "the data changed" "$work/check.log"; then
    fail "check missed a changed value"; cat "$work/check.log"
else
    echo "ok   check on a changed value: $(grep "checksums: FAILED" "$work/check.log")"
fi
"$dpamr" check "$work/good.hdf" | grep -q "match the ones recorded" || fail "check of a good file"

# an older output stays intact when a run fails
echo "older file" >"$work/keep.hdf"
"$dpamr" run "$work/unknown.inp" output="$work/keep.hdf" 2>/dev/null
if [ "$(cat "$work/keep.hdf")" != "older file" ]; then fail "older output was touched"; fi
# check on a file that is not a dpamr output
expect_error "check on a non-dpamr file" "empty.hdf" "$dpamr" check "$work/empty.hdf"

# non-regular files as deck, mesh and file to check: refused at once (a FIFO would block the open)
mkfifo "$work/fifo.inp" "$work/fifo.hdf"
expect_error "a FIFO as the deck" "fifo.inp: cannot open deck: not a regular file" timeout 10 "$dpamr" run "$work/fifo.inp"
expect_error "a FIFO as the mesh" "fifo.hdf: not a regular file" timeout 10 "$dpamr" run "$deck" mesh_file="$work/fifo.hdf" output="$work/out.hdf"
expect_error "a FIFO to check" "fifo.hdf: not a regular file" timeout 10 "$dpamr" check "$work/fifo.hdf"
expect_error "/dev/zero as the deck" "/dev/zero: cannot open deck: not a regular file" timeout 10 "$dpamr" mesh /dev/zero
expect_error "/dev/zero to check" "/dev/zero: not a regular file" timeout 10 "$dpamr" check /dev/zero
expect_error "a directory as the mesh" "it is a directory" "$dpamr" run "$deck" mesh_file="$work/adir.inp" output="$work/out.hdf"
# a symbolic link (or device) named as the output is not replaced by a regular file
ln -s "$work/elsewhere.hdf" "$work/link.hdf"
expect_error "a symbolic link as mesh_file" "link.hdf: it exists and is not a regular file (a symbolic link)" \
    "$dpamr" mesh "$deck" mesh_file="$work/link.hdf"
[ -L "$work/link.hdf" ] && [ ! -e "$work/elsewhere.hdf" ] || fail "the symbolic link was replaced or followed"
# a file or link already at the temporary name (NAME.tmp.PID, exec keeps the shell's pid) is neither
# written through nor removed: the HDF5 writer and the series (created with O_EXCL)
echo precious >"$work/victim.txt"
expect_error "a symbolic link at the output's temporary name" "sym.hdf.tmp.[0-9]*: a file of that name exists" \
    sh -c 'ln -s "$1/victim.txt" "$1/sym.hdf.tmp.$$" && exec "$2" run "$3" output="$1/sym.hdf"' sh "$work" "$dpamr" "$deck"
[ "$(cat "$work/victim.txt")" = precious ] && [ -L "$(echo "$work"/sym.hdf.tmp.*)" ] && [ ! -e "$work/sym.hdf" ] ||
    fail "the link at the temporary name was followed, removed, or the output written"
rm -f "$work"/sym.hdf.tmp.*
expect_error "a symbolic link at the series' temporary name" "sym.hdf.series.tmp.[0-9]*: a file of that name exists.*sym_00.hdf was written, but no series lists it" \
    sh -c 'ln -s "$1/victim.txt" "$1/sym.hdf.series.tmp.$$" && exec "$2" run "$3" output="$1/sym_%02d.hdf" steps=1 dt=0.1' \
    sh "$work" "$dpamr" "$deck"
[ "$(cat "$work/victim.txt")" = precious ] && [ -L "$(echo "$work"/sym.hdf.series.tmp.*)" ] ||
    fail "the link at the series' temporary name was followed or removed"
rm -f "$work"/sym*
# a deck with CR line ends (old Mac) is read line by line, not as one comment line
mkdeck cr; sed -i 's/^max_level .*/max_level = 2/' "$work/cr.inp"; tr '\n' '\r' <"$work/cr.inp" >"$work/cr2.inp"
"$dpamr" run "$work/cr2.inp" output="$work/cr.hdf" >"$work/cr.log" 2>&1
if grep -q "max_level 2" "$work/cr.log" && "$dpamr" check "$work/cr.hdf" >/dev/null; then echo "ok   a CR-only deck"; else fail "a CR-only deck"; fi
# a path with spaces: quoted in a deck, one argument on the command line
mkdeck sp; echo 'output = "my out.hdf"' >>"$work/sp.inp"; sed -i '/^output .*hdf$/d' "$work/sp.inp"
(cd "$work" && "$dpamr" run sp.inp max_level=2 >/dev/null && "$dpamr" check "my out.hdf" >/dev/null) || fail "quoted output with a space"
"$dpamr" run "$work/sp.inp" max_level=2 "output=$work/other out.hdf" >/dev/null && "$dpamr" check "$work/other out.hdf" >/dev/null ||
    fail "an override with a space"
mkdeck ghost; sed -i 's/^fields .*/fields = rho vtkGhostType/' "$work/ghost.inp"
expect_error "vtkGhostType as a field" "ghost.inp:.*'vtkGhostType' is reserved" run ghost
if ! "$dpamr" gpu >/dev/null 2>&1; then # bench with nothing to time: one message, no "timing cpu only" (and, under
    # AddressSanitizer, no leak on that way out)
    expect_error "bench bench_cpu=off without a GPU" "nothing to time: no GPU" \
        "$dpamr" bench "$work/ok.inp" bench_cpu=off bench_out="$work/nothing"
    grep -q "timing cpu only" "$work/stdout" && fail "bench bench_cpu=off: says it times the cpu"
    ls "$work"/nothing.* >/dev/null 2>&1 && fail "bench bench_cpu=off: wrote a table"
fi
# a refined output continued with another refinement key: refused before refining, the key named
"$dpamr" run "$work/ok.inp" max_level=2 output="$work/r2.hdf" >/dev/null || fail "the run to continue"
expect_error "continuing a refined output with another threshold" \
    "r2.hdf holds levels 1 to 2 refined with another 'threshold'" run ok mesh_file="$work/r2.hdf" max_level=3 threshold=30
expect_error "continuing a refined output with another fill" "refined with another 'fill'" \
    run ok mesh_file="$work/r2.hdf" max_level=3 fill=model
grep -q "^refined in" "$work/stdout" && fail "continuing with another key: it refined first"
"$dpamr" run "$work/ok.inp" mesh_file="$work/r2.hdf" max_level=3 output="$work/r3.hdf" >/dev/null &&
    "$dpamr" check "$work/r3.hdf" >/dev/null || fail "continuing a refined output with its own keys, deeper"

after=$(md5sum "$mesh" | cut -d' ' -f1)
if [ "$before" != "$after" ]; then fail "the input mesh was modified"; fi
finish errors
