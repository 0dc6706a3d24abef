#!/bin/bash
# mpi_provenance.sh MPIEXEC DPAMR DPAMR_SERIAL DECK WORKDIR - the serial run and the MPI run share one
# run pipeline, so their files carry the same /dpamr/provenance: the same attribute names, types and
# shapes (level_ms: one entry per level, -1 on the levels that were not built, in both), and the
# same datasets. The values may differ (timings, the rank count). MPI: 1 and 2 ranks, and the
# gathered write when the collective one is the default.
set -euo pipefail
mpiexec=$1 dpamr=$2 serial=$3 deck=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3; $py -c "import h5py" 2>/dev/null || py=python3  # Debian's, else the PATH one (GPU machine)
source "$here/mpi_flags.sh"
rm -rf "$work" && mkdir -p "$work/serial"
(cd "$work/serial" && "$serial" run "$deck" variant=cpu output=out.hdf > log.txt) || { cat "$work/serial/log.txt"; exit 1; }
runs=("np1:1" "np2:2")
"$dpamr" --version | grep -q "parallel HDF5: yes" && runs+=("gather:2:mpi_write=gather")
files=()
for run in "${runs[@]}"; do
    IFS=: read -r name np extra <<< "$run"
    mkdir -p "$work/$name"
    echo "== mpirun -np $np dpamr run $(basename "$deck") $extra"
    if ! (cd "$work/$name" && timeout -k 10 600 "$mpiexec" "${mpiflags[@]}" -np "$np" "$dpamr" run "$deck" variant=cpu \
            output=out.hdf $extra > log.txt 2> err.txt); then
        cat "$work/$name/log.txt" "$work/$name/err.txt"
        exit 1
    fi
    files+=("$work/$name/out.hdf")
done
$py - "$work/serial/out.hdf" "${files[@]}" <<'PY'
import sys, h5py

def provenance(path):
    """name -> (kind, dtype, shape) of every attribute and dataset under /dpamr/provenance, and level_ms"""
    out = {}
    with h5py.File(path, "r") as f:
        p = f["/dpamr/provenance"]
        nlevels = len(f["/dpamr/validation/tiles"][()]) if "/dpamr/validation/tiles" in f else None
        for k, v in p.attrs.items():
            a = p.attrs.get_id(k)
            out["@" + k] = ("attribute", a.dtype.str, a.shape)
        def visit(name, obj):
            kind = "dataset" if isinstance(obj, h5py.Dataset) else "group"
            out[name] = (kind, obj.dtype.str if kind == "dataset" else "", obj.shape[1:] if kind == "dataset" else ())
        p.visititems(visit)  # the rank table's rows (its first dimension) follow the rank count
        level_ms = list(p.attrs["level_ms"]) if "level_ms" in p.attrs else None
    return out, level_ms, nlevels

ref, ref_ms, nlev = provenance(sys.argv[1])
assert ref_ms is not None, f"{sys.argv[1]}: the serial run wrote no level_ms"
assert len(ref_ms) == nlev, f"serial level_ms has {len(ref_ms)} entries for {nlev} levels"
built = [t >= 0 for t in ref_ms]
print(f"serial: {len(ref)} provenance entries: {' '.join(sorted(ref))}")
fails = 0
for path in sys.argv[2:]:
    got, ms, _ = provenance(path)
    for k in sorted(set(ref) | set(got)):
        if ref.get(k) != got.get(k):
            print(f"FAIL {path}: {k}: serial {ref.get(k)}, MPI {got.get(k)}")
            fails += 1
    if ms is not None and [t >= 0 for t in ms] != built:
        print(f"FAIL {path}: level_ms {ms}: levels built differ from the serial run's {ref_ms}")
        fails += 1
    if not fails:
        print(f"same provenance: {path}")
sys.exit(1 if fails else 0)
PY
echo "mpi_provenance OK: $(basename "$deck")"
