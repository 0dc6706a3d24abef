#!/bin/bash
# check_race.sh DPAMR DECK WORKDIR - a file changed while `dpamr check` reads it (truncated, appended
# to, written in place, replaced, removed) is reported as changed during the check, exit 1, not as a
# damaged file (exit 2) nor as one that passed. The check pauses after the file's header
# (DPAMR_TEST_CHECK_PAUSE) while the test changes the file.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
"$dpamr" run "$deck" variant=cpu max_level=3 output="$work/ref.hdf" >/dev/null
"$dpamr" run "$deck" variant=cpu max_level=3 threshold=0.3 output="$work/other.hdf" >/dev/null
"$dpamr" check "$work/ref.hdf" >/dev/null || fail "check of the untouched file"
size=$(stat -c %s "$work/ref.hdf")

# race CHANGE EXPECT: check a fresh copy, run CHANGE (on $f) while the check waits, then expect exit 1
# and "changed while it was being checked (EXPECT"
race() {
    local change=$1 expect=$2 f=$work/f.hdf pause=$work/pause rc=0
    cp "$work/ref.hdf" "$f"
    rm -f "$pause"
    DPAMR_TEST_CHECK_PAUSE=$pause "$dpamr" check "$f" >"$work/out" 2>&1 &
    local pid=$!
    for _ in $(seq 600); do [ -e "$pause" ] && break; sleep 0.05; done
    [ -e "$pause" ] || { kill $pid; fail "$change: the check never paused"; }
    eval "$change"
    rm -f "$pause"
    wait $pid || rc=$?
    [ $rc = 1 ] || { cat "$work/out"; fail "$change: exit $rc, expected 1"; }
    grep -q "changed while it was being checked ($expect" "$work/out" || { cat "$work/out"; fail "$change: no '$expect'"; }
    grep -q "checksums: match" "$work/out" && { cat "$work/out"; fail "$change: reported as passed"; }
    echo "ok: $change -> $(grep -o 'changed while[^)]*)' "$work/out")"
}
race 'truncate -s $((size / 2)) "$f"' "its size went from $size to $((size / 2)) bytes"
race 'echo x >>"$f"' "its size went from $size to $((size + 2)) bytes"
race 'printf "\xff" | dd of="$f" bs=1 seek=$((size - 100)) conv=notrunc status=none; touch -d "+1 minute" "$f"' "it was written to"
race 'cp "$work/other.hdf" "$f.new" && mv "$f.new" "$f"' "it was replaced by another file"
race 'rm "$f"' "it was removed"
finish check_race
