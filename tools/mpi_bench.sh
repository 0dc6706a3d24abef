#!/bin/bash
# mpi_bench.sh DPAMR MPIEXEC REPEATS NP_LIST VARIANTS DECK... - time `mpirun -np N dpamr run` (built
# with DPAMR_MPI) per deck, variant and rank count; print medians of REPEATS runs after one warm-up:
# refine (slowest rank, device events on the GPU), write (gather + HDF5 on rank 0) and total (wall
# clock of the whole mpirun, start-up and file included). Every output is compared with the first
# rank count's, byte for byte (tests/h5compare.py). Example:
#   tools/mpi_bench.sh build-gpu/dpamr mpiexec 5 "1 2" "cdp host" inputs/bench2d.inp inputs/bench3d.inp
set -uo pipefail
dpamr=$(realpath "$1") mpiexec=$2 reps=$3 nps=$4 variants=$5
shift 5
here=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3; $py -c "import h5py" 2>/dev/null || py=python3
source "$here/tests/mpi_flags.sh"
work=$(mktemp -d)
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
printf "%-10s %-8s %4s %12s %12s %12s %10s\n" deck variant np "refine ms" "write ms" "total ms" identical
for deck in "$@"; do
    deck=$(realpath "$deck")
    for v in $variants; do
        ref=""
        for np in $nps; do
            rm -f "$work"/t_*
            for i in $(seq 0 "$reps"); do # run 0 is the warm-up
                rm -f "$work/out.hdf"
                t0=$(date +%s%N)
                (cd "$work" && "$mpiexec" "${mpiflags[@]}" -np "$np" "$dpamr" run "$deck" variant="$v" \
                    output=out.hdf > log.txt 2>&1) || { echo "run failed:"; tail -5 "$work/log.txt"; exit 1; }
                t1=$(date +%s%N)
                [ "$i" -eq 0 ] && continue
                sed -n 's/^refined in \([0-9.]*\) ms.*/\1/p' "$work/log.txt" >> "$work/t_refine"
                awk '/^ rank  device/ {f=1; next} f && $1 == "0" {print $NF; exit}' "$work/log.txt" >> "$work/t_write"
                awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) / 1e6}' >> "$work/t_total"
            done
            same="-"
            if [ -z "$ref" ]; then ref="$work/ref_${v}.hdf"; cp "$work/out.hdf" "$ref"
            elif $py "$here/tests/h5compare.py" "$ref" "$work/out.hdf" > /dev/null; then same=yes
            else same=NO; fi
            printf "%-10s %-8s %4s %12.3f %12.3f %12.1f %10s\n" "$(basename "$deck" .inp)" "$v" "$np" \
                "$(median < "$work/t_refine")" "$(median < "$work/t_write")" "$(median < "$work/t_total")" "$same"
        done
    done
done
rm -rf "$work"
