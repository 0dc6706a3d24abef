#!/bin/bash
# scale_deck.sh DPAMR SRC WORKDIR - the scale deck (inputs/scale2d.inp, 4.5e9 cells: run on the GPU
# machine by tools/scale_session.sh) on a small machine: it parses, `dpamr mesh` makes its level-0
# mesh (not shipped), and its first levels refine, validate and check on the cpu variant (max_level
# lowered); the session script is valid bash and its gate helper says pass and FAIL right.
set -uo pipefail
dpamr=$1 src=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
deck=$src/inputs/scale2d.inp
[ ! -e "$src/inputs/scale2d.mesh.hdf" ] || fail "inputs/scale2d.mesh.hdf is shipped: it is made on the GPU machine"
expect_line "scale2d mesh" "^wrote .*s.mesh.hdf" "$dpamr" mesh "$deck" mesh_file="$work/s.mesh.hdf"
expect_line "scale2d level 0" "484 tiles" "$dpamr" run "$deck" mesh_file="$work/s.mesh.hdf" variant=cpu max_level=0 \
    output="$work/s0.hdf"
expect_line "scale2d to level 4" "^wrote " "$dpamr" run "$deck" mesh_file="$work/s.mesh.hdf" variant=cpu max_level=4 \
    output="$work/s4.hdf"
grep -q "refined in .*: 30223 tiles on 5 levels" "$work/stdout" ||
    fail "scale2d to level 4: not the 30223 tiles (22342 on level 4) the deck's sizing assumed: $(grep '^refined' "$work/stdout")"
expect_line "scale2d check" "validation: PASSED" "$dpamr" check "$work/s4.hdf"
bash -n "$src/tools/scale_session.sh" || fail "tools/scale_session.sh: bash -n"
# the gate helper of the session script, on its own
gate_fn=$(sed -n '/^gate() {/,/^}/p' "$src/tools/scale_session.sh")
gates=$work/gates.txt
: >"$gates"
eval "$gate_fn"
gate a x 1.0 1.05 le && gate b x 1.2 1.05 le && gate c x 2 1.6 ge && gate d x 1 1.6 ge && gate e x "" "" le
[ "$(awk '{ print $NF }' "$gates" | tr '\n' ' ')" = "pass FAIL pass FAIL n/a " ] || fail "gate(): $(cat "$gates")"
# and its median (the gates' measure): numbers in any order, the lower middle one of an even count
eval "$(grep '^median() {' "$src/tools/scale_session.sh")"
[ "$(median 1.5 0.9 1.2)" = 1.2 ] && [ "$(median 2 1)" = 1 ] && [ "$(median 1.61)" = 1.61 ] &&
    [ "$(median 10 9.5 1e1 0.95)" = 9.5 ] || fail "median(): $(median 1.5 0.9 1.2) $(median 2 1) $(median 10 9.5 1e1 0.95)"
finish "scale_deck"
