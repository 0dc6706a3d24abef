#!/bin/bash
# file_format.sh DPAMR DECK WORKDIR - the HDF5 file format dpamr reads (issue 17): files whose metadata
# carries no checksums (superblock 0 or 1; version-1 object headers under superblock 2) are refused
# before the HDF5 library walks them, as meshes to run, files to check and outputs to replace, with
# the h5repack command that converts them, and that command (run as printed) makes files dpamr
# accepts; a byte damaged in any object header of a run output makes `check` fail with "damaged",
# never crash; a file that is not HDF5 is named so. tests/file_format.py makes the files.
set -uo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
mesh=$(cd "$(dirname "$deck")" && pwd)/$(basename "${deck%.inp}").mesh.hdf

# refused NAME PATTERN CMD...: CMD exits 1 (not a crash, not a hang) with PATTERN on stderr
refused() {
    local name=$1 pattern=$2
    shift 2
    timeout -k 5 60 "$@" >"$work/stdout" 2>"$work/stderr"
    local rc=$?
    if [ $rc -ne 1 ] && [ $rc -ne 2 ]; then fail "$name: exit $rc, expected 1 or 2:"; cat "$work/stderr"; return; fi
    if ! grep -q -- "$pattern" "$work/stderr"; then fail "$name: stderr lacks '$pattern':"; cat "$work/stderr"; return; fi
    echo "ok   $name (exit $rc): $(head -c 240 "$work/stderr")"
}

"$dpamr" run "$deck" variant=cpu max_level=3 output="$work/run.hdf" >/dev/null || fail "run"
$py "$tests/file_format.py" old "$mesh" "$work/old.hdf"
$py "$tests/file_format.py" old "$work/run.hdf" "$work/old_out.hdf"
$py "$tests/file_format.py" mixed "$mesh" "$work/mixed.hdf"
old_sum=$(md5sum < "$work/old_out.hdf")

sb0="HDF5 superblock version 0: the HDF5 1.6 file format, whose metadata carries no checksums"
hint="convert it with: h5repack --low=1 --high=2 -f NONE"
refused "old-format mesh to run" "old.hdf: $sb0.*$hint" "$dpamr" run "$deck" mesh_file="$work/old.hdf" output="$work/o.hdf"
test ! -e "$work/o.hdf" || fail "an output was written from a refused mesh"
refused "old-format file to check" "old_out.hdf: $sb0.*$hint" "$dpamr" check "$work/old_out.hdf"
# an old dpamr output in the 1.6 format cannot be recognised as dpamr's: never replaced, and said so
refused "old-format output not replaced" "old_out.hdf exists and is an HDF5 file in the 1.6 format (superblock version 0), which dpamr does not open" \
    "$dpamr" run "$deck" variant=cpu max_level=1 output="$work/old_out.hdf"
[ "$(md5sum < "$work/old_out.hdf")" = "$old_sum" ] || fail "the old-format output was modified"
refused "superblock 2, version-1 object headers" \
    "mixed.hdf: / has a version-1 object header (the HDF5 1.6 format), which carries no checksum.*$hint" \
    "$dpamr" check "$work/mixed.hdf"
echo "not an hdf5 file" >"$work/text.hdf"
refused "not HDF5" "text.hdf: not an HDF5 file" "$dpamr" check "$work/text.hdf"

# the command the message prints converts the files (needs h5repack: Debian's hdf5-tools)
if command -v h5repack >/dev/null; then
    for f in old old_out mixed; do
        "$dpamr" check "$work/$f.hdf" 2>"$work/err" >/dev/null
        cmd=$(sed -n 's/.*convert it with: \(h5repack .*\) NEW\.hdf$/\1/p' "$work/err")
        [ -n "$cmd" ] || { fail "$f: no h5repack command in: $(cat "$work/err")"; continue; }
        $cmd "$work/$f.new.hdf" || { fail "$f: '$cmd $work/$f.new.hdf' failed"; continue; }
        "$dpamr" check "$work/$f.new.hdf" >/dev/null 2>"$work/err" || fail "$f: the converted file: $(cat "$work/err")"
        echo "ok   $f.hdf converted by: $cmd NEW.hdf"
    done
    h5cmp "$work/old.new.hdf" "$mesh" >/dev/null || fail "the converted mesh differs from the shipped one"
    "$dpamr" run "$deck" variant=cpu max_level=3 mesh_file="$work/old.new.hdf" output="$work/conv_run.hdf" >/dev/null ||
        fail "run from the converted mesh"
    h5cmp "$work/conv_run.hdf" "$work/run.hdf" --ignore /dpamr/deck >/dev/null ||
        fail "a run from the converted mesh differs from one from the shipped mesh"
else
    echo "h5repack not installed (Debian: hdf5-tools): the conversion command is not run"
fi

# every object header (and continuation chunk) of a run output damaged in turn: check names it (and
# `mesh` asked to replace the first such file answers, never crashes; test_h5io asks
# h5io_is_dpamr_output about every damaged header)
mkdir -p "$work/dmg"
$py "$tests/file_format.py" damage "$work/run.hdf" "$work/dmg"
n=0
for f in "$work"/dmg/dmg_*.hdf; do
    timeout -k 5 60 "$dpamr" check "$f" >/dev/null 2>"$work/err"
    rc=$?
    if [ $rc -ne 1 ] && [ $rc -ne 2 ]; then fail "$(basename "$f"): check exit $rc: $(cat "$work/err")"
    elif ! grep -q "$(basename "$f"): .* object header is damaged (HDF5: " "$work/err"; then
        fail "$(basename "$f"): $(cat "$work/err")"
    fi
    if [ $n -eq 0 ]; then
        timeout -k 5 60 "$dpamr" mesh "$deck" mesh_file="$f" >/dev/null 2>"$work/err"
        rc=$?
        [ $rc -le 1 ] || fail "$(basename "$f"): mesh over it: exit $rc: $(cat "$work/err")"
    fi
    n=$((n + 1))
done
[ $n -ge 20 ] || fail "only $n object headers found in the run output"
echo "ok   $n object headers of a run output damaged in turn: check says damaged"
rm -rf "$work/dmg"
finish file_format
