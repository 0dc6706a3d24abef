#!/usr/bin/python3
"""Compare every dataset of two HDF5 files byte for byte (names, dtypes, shapes, bytes).

usage: h5compare.py A.hdf B.hdf [--ignore /path ...]
       h5compare.py --digest A.hdf [--ignore /path ...]
       h5compare.py --mesh A.hdf B.hdf
Attributes are not compared, nor /dpamr/provenance: provenance (timings, the per-rank table) lives
there on purpose.
Exit 0 when identical, 1 with the first difference otherwise.
--digest prints one line per dataset: path, dtype, shape and the SHA-256 of its bytes, read in
slices. Two files with the same digest lines have byte-identical datasets: tests that compare many
files of a gigabyte or more keep a digest instead of the file (see mpi_compare.sh).
--mesh compares the meshes two dpamr files hold, whatever their layout (docs/format.md: format
version 1 keeps the tile arrays and a copy of the cells in /dpamr, version 2 the cells and boxes in
/VTKHDF only): the tiles' levels, coordinates, parents and childmasks, the level index, and every
field's cells in canonical order, bit for bit (a file re-recorded in the new layout holds the same
mesh as the old one)."""
import hashlib
import os
import sys
import h5py
import numpy as np


def datasets(f, ignore):
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and not any(("/" + name).startswith(p) for p in ignore):
            out["/" + name] = obj
    f.visititems(visit)
    return out


def digest(path, ignore):
    with h5py.File(path, "r") as f:
        for name, d in sorted(datasets(f, ignore).items()):
            h = hashlib.sha256()
            if d.shape == () or d.size == 0:
                v = d[()]
                h.update(v.tobytes() if isinstance(v, np.ndarray) else bytes(v) if isinstance(v, bytes)
                         else np.asarray(v).tobytes())
            else:
                step = max(1, (64 << 20) // max(1, d.dtype.itemsize * (d.size // d.shape[0])))
                for i in range(0, d.shape[0], step):
                    h.update(np.ascontiguousarray(d[i:i + step]).tobytes())
            print(f"{name} {d.dtype.str} {d.shape} {h.hexdigest()}".replace(", ", ","))
    return 0


def same_mesh(a, b):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation"))
    from dpamr_file import read_mesh

    def mesh(f):
        m = read_mesh(f)
        out = {k: m[k] for k in ("level_start", "level", "coord", "parent", "childmask")}
        out.update({"field " + n: v for n, v in m["fields"].items()})
        return out

    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        ma, mb = mesh(fa), mesh(fb)
    if sorted(ma) != sorted(mb):
        print("fields differ:", sorted(set(ma) ^ set(mb)))
        return 1
    for k in sorted(ma):
        x, y = ma[k], mb[k]
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            print(f"{k} differs: {x.dtype}{x.shape} vs {y.dtype}{y.shape}")
            return 1
    print(f"same mesh: {len(ma['level'])} tiles, {len(ma) - 5} field(s) bit for bit ({a} vs {b})")
    return 0


def main():
    args = sys.argv[1:]
    if args[:1] == ["--mesh"] and len(args) == 3:
        return same_mesh(args[1], args[2])
    dig = "--digest" in args
    if dig:
        args.remove("--digest")
    ignore = ["/dpamr/provenance"]
    while "--ignore" in args:
        i = args.index("--ignore")
        ignore.append(args[i + 1])
        del args[i:i + 2]
    if dig and len(args) == 1:
        return digest(args[0], ignore)
    if len(args) != 2:
        print(__doc__)
        return 2
    with h5py.File(args[0], "r") as a, h5py.File(args[1], "r") as b:
        da, db = datasets(a, ignore), datasets(b, ignore)
        if sorted(da) != sorted(db):
            print("dataset names differ:", sorted(set(da) ^ set(db)))
            return 1
        for name in sorted(da):
            x, y = da[name], db[name]
            if x.dtype != y.dtype or x.shape != y.shape:
                print(f"{name}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}")
                return 1
            xv, yv = x[()], y[()]
            if isinstance(xv, np.ndarray):
                same = xv.tobytes() == yv.tobytes()
            else:
                same = xv == yv
            if not same:
                print(f"{name}: contents differ")
                return 1
        print(f"identical: {len(da)} datasets ({args[0]} vs {args[1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
