#!/bin/bash
# balance.sh DPAMR SRC WORKDIR [MPIRUN] - 2:1 balance (deck key balance = 2:1) end to end: a balanced
# run of default.inp validates, writes more tiles than the unbalanced one and passes `dpamr check`
# (which re-validates it with the deck's balance); a moving deck regridded 20 steps with balance
# validates at every output step and a restart from step 10 gives the same step-20 file; the GPU
# variants give the cpu's file (without a GPU: the usual message); more than one MPI rank refuses it
# with one clear message and writes nothing.
set -uo pipefail
dpamr=$1 src=$2 work=$3 mpirun=${4:-}
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
cd "$work" || exit 1
deck=$src/inputs/default.inp

expect_line "balanced run" "validation: PASSED" "$dpamr" run "$deck" variant=cpu balance=2:1 output=bal.hdf
expect_line "balanced file checked" "validation: PASSED" "$dpamr" check bal.hdf
"$dpamr" run "$deck" variant=cpu output=plain.hdf >/dev/null || fail "unbalanced run"
tiles() { $py -c "import h5py,sys; print(h5py.File(sys.argv[1],'r')['dpamr/tiles/parent'].shape[0])" "$1"; }
nb=$(tiles bal.hdf) np=$(tiles plain.hdf)
[ -n "$nb" ] && [ -n "$np" ] && [ "$nb" -gt "$np" ] && echo "ok   balance adds tiles: $np -> $nb" ||
    fail "balance added no tiles ($np -> $nb)"

# time steps with balance: every output step validated; a restart from step 10 equals the run
mv2=$src/inputs/moving2d.inp
"$dpamr" run "$mv2" variant=cpu balance=2:1 steps=20 output_every=10 mesh_file="$src/inputs/moving2d.mesh.hdf" \
    output=mv_%05d.hdf >steps.log 2>&1 || { fail "balanced steps"; tail -5 steps.log; }
[ "$(grep -c 'validated' steps.log)" -eq 3 ] && echo "ok   balanced steps: 3 output steps validated" ||
    { fail "balanced steps: not 3 validated outputs"; tail -5 steps.log; }
mkdir -p re && cp mv_00010.hdf re/
(cd re && "$dpamr" run "$mv2" variant=cpu balance=2:1 steps=20 output_every=10 mesh_file=mv_00010.hdf \
    output=mv_%05d.hdf >../restart.log 2>&1) || { fail "balanced restart"; tail -5 restart.log; }
h5cmp mv_00020.hdf re/mv_00020.hdf --ignore /dpamr/deck >/dev/null && echo "ok   balanced restart: step 20 equal" ||
    fail "balanced restart: step 20 differs"

# the GPU variants balance too, to the cpu's bytes (gpu_balance2d, gpu_balance3d and gpu_steps compare
# every grain and step); without a usable GPU they say so, as without balance
if "$dpamr" gpu >/dev/null 2>&1; then
    for v in cdp hostlaunch; do
        "$dpamr" run "$deck" variant=$v balance=2:1 output=gpu-$v.hdf >/dev/null 2>&1 &&
            h5cmp bal.hdf gpu-$v.hdf --ignore /dpamr/deck >/dev/null && echo "ok   balance with variant $v: as cpu" ||
            fail "balance with variant $v: differs from cpu"
    done
else
    for v in cdp hostlaunch; do
        expect_error "balance with variant $v, no GPU" "needs a CUDA device" "$dpamr" run "$deck" variant=$v balance=2:1 \
            output=out.hdf
    done
fi
# a max_tiles that holds the criterion's tiles but not balance's: the same one message on every variant
over=(cpu)
"$dpamr" gpu >/dev/null 2>&1 && over+=(cdp "cdp cdp_grain=group" hostlaunch)
for v in "${over[@]}"; do
    # shellcheck disable=SC2086
    expect_error "balance past max_tiles ($v)" \
        "tile store overflow balancing 2:1: at least $nb tiles needed, max_tiles = $np; set max_tiles >= $nb" \
        "$dpamr" run "$deck" variant=$v balance=2:1 max_tiles="$np" output=out.hdf
done
# refused: more than one rank, before any work, nothing written
expect_error "balance = 3:1" "valid values are none, 2:1" "$dpamr" run "$deck" variant=cpu balance=3:1 output=out.hdf
if [ -n "$mpirun" ]; then
    mpiexec=$mpirun
    source "$tests/mpi_flags.sh"
    expect_error "balance on 2 ranks" "balance = 2:1 runs on one rank" timeout -k 5 120 "$mpirun" "${mpiflags[@]}" -np 2 \
        "$dpamr" run "$deck" variant=cpu balance=2:1 output=out.hdf
fi
finish balance
