#!/bin/bash
# paraview_series.sh DPAMR SRC WORKDIR - a time series (2D, fill = prolong; 3D, fill = model) opens in
# Debian's ParaView 5.11 as one time-varying dataset: validation/paraview_series.py checks the time
# steps against the series file and each step's levels and boxes against its file; --png-dir renders
# the first and last steps (under xvfb-run) into a folder it makes, a failed render is not a failed
# time step, and a --png-dir that cannot be made or used is refused before any work. Exit 77
# (skipped) without ParaView.
set -euo pipefail
dpamr=$1 src=$2 work=$3
source "$(dirname "$0")/lib.sh"
skip_without_paraview
fresh_dir "$work" 2d 3d
(cd "$work/2d" && "$dpamr" run "$src/inputs/moving2d.inp" variant=cpu steps=30 output=m_%05d.hdf verbosity=quiet >/dev/null)
(cd "$work/3d" && "$dpamr" run "$src/inputs/moving3d.inp" variant=cpu output=m_%05d.hdf verbosity=quiet >/dev/null)
# reading needs no X server (only rendering does: --png-dir)
for dim in 2d 3d; do
    env -u DISPLAY /usr/bin/python3 "$src/validation/paraview_series.py" "$work/$dim/m.hdf.series"
done
series=("$src/validation/paraview_series.py" "$work/2d/m.hdf.series")
# --png-dir: a folder that does not exist is made (it was a vtkPNGWriter error and two failed renders
# counted as failed time steps); the first and last steps render there
rc=0
xvfb_python "$work/png.log" "${series[@]}" --png-dir "$work/new/pngs" || rc=$?
n=$(grep -c "^ok   t=" "$work/png.log" || true)
[ $rc -eq 0 ] || fail "--png-dir into a new folder: exit $rc"
grep -qx "$n of $n time steps passed" "$work/png.log" || fail "--png-dir into a new folder: not all $n steps passed"
if [ -s "$work/new/pngs/series_0.png" ] && [ -s "$work/new/pngs/series_$((n - 1)).png" ]; then
    echo "ok   --png-dir into a new folder: series_0.png and series_$((n - 1)).png"
else
    fail "--png-dir into a new folder: no series_0.png and series_$((n - 1)).png"
fi
# a render that fails (series_0.png is a folder) is its own FAIL line, not a failed time step (its
# output only in the log: its expected FAIL line would read as the test's)
mkdir -p "$work/blocked/series_0.png"
rc=0
xvfb_python "$work/blocked.log" "${series[@]}" --png-dir "$work/blocked" >/dev/null || rc=$?
if [ $rc -ne 1 ] || ! grep -q "^FAIL the render of t=0" "$work/blocked.log" ||
    ! grep -qx "$n of $n time steps passed; 1 of 2 renders failed" "$work/blocked.log"; then
    fail "a failed render: exit $rc, not 1 with its own FAIL line and $n of $n time steps passed:"
    cat "$work/blocked.log"
else
    echo "ok   a failed render (exit 1): $(grep "time steps passed" "$work/blocked.log")"
fi
# a --png-dir that cannot be made: one line on stderr, exit 1, before ParaView reads anything
touch "$work/a_file"
for dir in a_file a_file/sub; do
    rc=0
    DISPLAY=:0 /usr/bin/python3 "${series[@]}" --png-dir "$work/$dir" >"$work/bad.out" 2>"$work/bad.err" || rc=$?
    why="it exists and is not a folder"
    [ $dir = a_file ] || why="cannot make it: Not a directory"
    if [ $rc -ne 1 ] || [ -s "$work/bad.out" ] || [ "$(wc -l <"$work/bad.err")" -ne 1 ] ||
        ! grep -qx "paraview_series.py: error: --png-dir $work/$dir: $why" "$work/bad.err"; then
        fail "--png-dir $dir: exit $rc, not 1 with one line:"; cat "$work/bad.out" "$work/bad.err"
    else
        echo "ok   --png-dir $dir: $(cat "$work/bad.err")"
    fi
done
# rendering without an X display is refused before any work (ParaView crashed after the checks)
rc=0
env -u DISPLAY /usr/bin/python3 "${series[@]}" --png-dir "$work/nox" >"$work/bad.out" 2>"$work/bad.err" || rc=$?
if [ $rc -ne 1 ] || [ -s "$work/bad.out" ] || [ -e "$work/nox" ] || ! grep -q "needs an X display" "$work/bad.err"; then
    fail "--png-dir without a display: exit $rc:"; cat "$work/bad.out" "$work/bad.err"
else
    echo "ok   --png-dir without a display: $(cat "$work/bad.err")"
fi
finish paraview_series
