#!/usr/bin/python3
"""mesh_from_numpy.py - write a level-0 dpamr mesh from your own cell data with h5py.

usage: mesh_from_numpy.py OUT.hdf DATA.npy|DATA.npz [--name NAME] [--tile-size B]
                          [--origin X Y [Z]] [--cell-size H] [--force]
       mesh_from_numpy.py OUT.hdf --demo 2|3 [--tile-size B]

DATA.npy holds one field (named --name, default the file's stem); DATA.npz one field per array
(the array names are the field names, in the file's order). Every array has shape (ny, nx) in 2D
or (nz, ny, nx) in 3D (x fastest, C order), the same for all, each extent a multiple of the tile
size (4, 8, 16 or 32; default 8), finite values; field names are identifiers, not vtkGhostType
(the ghost array beside them); origin and cell size finite. The deck that refines it must say the same dim,
root (extent / tile size per axis), tile_size, origin, cell_size and fields: the tool prints them.
OUT.hdf is written to a temporary file and renamed, so it is whole or absent; an existing OUT.hdf
is kept unless --force.

As a library: write_level0(path, fields, tile_size, origin=(0,0,0), h0=None), where fields maps
a name to an array as above; a bad input raises MeshInputError naming the array and what is valid.
The file is in dpamr's layout (docs/format.md, format version 2): the cells and the tiles' boxes in
/VTKHDF/Level0 (ParaView opens it as it is), the mesh's description and the tile tree in /dpamr.
"""
import os
import re
import sys

PROG = "mesh_from_numpy.py"
# dpamr_require.py: beside this script once installed, in validation/ in the source tree
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "validation"))
from dpamr_require import require  # noqa: E402


if __name__ == "__main__":  # (as a library, a missing module is the importer's ImportError)
    require(PROG, ["numpy", "h5py"])
import numpy as np  # noqa: E402


class MeshInputError(ValueError):
    """A user's array or option that cannot make a mesh; the message names it and what is valid."""


def morton(dim, i, j, k):
    key = 0
    for b in range(32 if dim == 2 else 21):
        key |= ((i >> b) & 1) << (dim * b)
        key |= ((j >> b) & 1) << (dim * b + 1)
        if dim == 3:
            key |= ((k >> b) & 1) << (dim * b + 2)
    return key


NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")  # as dpamr's deck: an identifier, < 64 characters (fullmatch)
RESERVED = "vtkGhostType"  # /VTKHDF's CellData holds it beside the fields: dpamr refuses it as a field name


def check_fields(fields, B):
    """The checks dpamr's reader would make, as messages naming the array and what is valid."""
    if B not in (4, 8, 16, 32):
        raise MeshInputError(f"tile size {B}: valid are 4, 8, 16, 32")
    names = list(fields)
    if not 1 <= len(names) <= 8:
        raise MeshInputError(f"{len(names)} arrays: a mesh has 1 to 8 fields")
    shape = None
    for name in names:
        a = np.asarray(fields[name])
        if not NAME.fullmatch(name):  # (match() with '$' took a trailing newline)
            raise MeshInputError(f"array {name!r}: not a field name (a letter or '_', then letters, digits, '_'; "
                                 "fewer than 64 characters)")
        if name == RESERVED:
            raise MeshInputError(f"array '{name}': '{RESERVED}' is reserved (the ghost array ParaView reads beside "
                                 "the fields); choose another name (--name for a .npy, the array's name in a .npz)")
        if a.dtype.kind not in "iuf":
            raise MeshInputError(f"array '{name}': dtype {a.dtype} is not a real number type (int or float)")
        if a.ndim not in (2, 3):
            raise MeshInputError(f"array '{name}': shape {a.shape} has {a.ndim} axes; valid: (ny, nx) in 2D or "
                                 "(nz, ny, nx) in 3D")
        if shape is None:
            shape = a.shape
        elif a.shape != shape:
            raise MeshInputError(f"array '{name}': shape {a.shape} differs from '{names[0]}' {shape}; all fields "
                                 "share one shape")
        bad = [e for e in a.shape if e < B or e % B]
        if bad:
            raise MeshInputError(f"array '{name}': shape {a.shape}: every extent must be a positive multiple of the "
                                 f"tile size {B} (e.g. {tuple(max(B, (e + B - 1) // B * B) for e in a.shape)})")
        if not np.isfinite(a.astype(np.float32)).all():
            raise MeshInputError(f"array '{name}': holds NaN or Inf (as float32); every value must be finite")
    return names, shape


def write_level0(path, fields, tile_size, origin=(0.0, 0.0, 0.0), h0=None):
    B = tile_size
    names, shape = check_fields(fields, B)
    dim = len(shape)
    ext = shape[::-1]                                  # (nx, ny[, nz])
    root = [e // B for e in ext] + [1] * (3 - dim)
    if h0 is None:
        h0 = 1.0 / max(ext)
    try:
        h0 = float(h0)
        origin = [float(x) for x in origin] + [0.0] * (3 - len(origin))
    except (TypeError, ValueError):
        raise MeshInputError(f"cell size {h0!r} and origin {origin!r}: numbers are expected")
    if not (np.isfinite(h0) and h0 > 0):
        raise MeshInputError(f"cell size {h0}: must be a finite number > 0")
    # dpamr refuses a non-finite origin in the file and the deck, and a domain whose far corner is not
    # a number (cell centres are origin + (i + 0.5) x h): refused here, before any file is written
    for a in range(3):
        if not np.isfinite(origin[a]):
            raise MeshInputError(f"origin {' '.join(map(str, origin[:max(dim, a + 1)]))}: coordinate {a} is "
                                 f"{origin[a]}; every coordinate must be a finite number")
        far = origin[a] + (ext[a] if a < dim else 1) * h0
        if a < dim and not np.isfinite(far):
            raise MeshInputError(f"origin {origin[a]!r} and cell size {h0!r}: the domain's far corner on axis {a}, "
                                 f"origin + {ext[a]} cells x cell size, is not a finite number")
    tiles = [(morton(dim, i, j, k), i, j, k)
             for k in range(root[2]) for j in range(root[1]) for i in range(root[0])]
    tiles.sort()
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        _write(tmp, names, fields, dim, B, root, origin, h0, tiles)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return root, h0


def _write(path, names, fields, dim, B, root, origin, h0, tiles):
    import h5py

    n = len(tiles)
    # the HDF5 1.8 to 1.10 format, as dpamr writes: checksummed metadata (dpamr refuses files without)
    with h5py.File(path, "w", libver=("v108", "v110")) as f:
        # the cells live in /VTKHDF (ParaView's OverlappingAMR): level 0's boxes and cells
        v = f.create_group("VTKHDF")
        v.attrs["Version"] = np.array([1, 0], np.int32)
        v.attrs.create("Type", np.bytes_("OverlappingAMR"), dtype="S14")
        v.attrs["Origin"] = np.array(origin, dtype=np.float64)
        lev = v.create_group("Level0")
        lev.attrs["Spacing"] = np.array([h0] * 3, np.float64)
        box = np.zeros((n, 6), np.int32)
        for t, (_, i, j, k) in enumerate(tiles):
            box[t, 0:dim * 2:2] = np.array((i, j, k)[:dim]) * B
            box[t, 1:dim * 2:2] = np.array((i, j, k)[:dim]) * B + B - 1
        lev["AMRBox"] = box
        cd = lev.create_group("CellData")
        for name in names:
            a = np.asarray(fields[name], dtype=np.float32)
            if dim == 2:
                a = a[None]
            out = np.empty((n, B ** dim), np.float32)
            for t, (_, i, j, k) in enumerate(tiles):
                kz = slice(k * B, k * B + B) if dim == 3 else slice(0, 1)
                out[t] = a[kz, j * B:j * B + B, i * B:i * B + B].reshape(-1)
            cd[name] = out.reshape(-1)
        ncell = n * B ** dim  # no cell hidden: level 0 is the only level; stored as dpamr stores it
        if ncell <= 4096:
            cd["vtkGhostType"] = np.zeros(ncell, np.uint8)
        else:
            cd.create_dataset("vtkGhostType", shape=(ncell,), dtype=np.uint8, chunks=(min(ncell, 1 << 18),),
                              compression="gzip", compression_opts=1)
        lev.create_group("PointData")
        lev.create_group("FieldData")
        # /dpamr: the mesh's description and its tile tree (roots only)
        g = f.create_group("dpamr")
        g.attrs["format"] = np.bytes_("dpamr-mesh")
        g.attrs["format_version"] = np.int32(2)
        g.attrs["dim"] = np.int32(dim)
        g.attrs["tile_size"] = np.int32(B)
        g.attrs["root"] = np.array(root, dtype=np.int32)
        g.attrs["origin"] = np.array(origin, dtype=np.float64)
        g.attrs["h0"] = np.float64(h0)
        g.attrs["nlevels"] = np.int32(1)
        g.attrs["fields"] = np.bytes_(" ".join(names))
        g["tiles/parent"] = np.full(n, -1, np.int64)
        g["tiles/childmask"] = np.zeros(n, np.uint8)
        g["level_start"] = np.array([0, n], np.int64)


def demo(dim, B):
    n = 4 * B
    ax = (np.arange(n) + 0.5) / n
    if dim == 2:
        y, x = np.meshgrid(ax, ax, indexing="ij")
        return np.where((x - 0.5) ** 2 + (y - 0.5) ** 2 < 0.09, 1.0, 0.1)
    z, y, x = np.meshgrid(ax, ax, ax, indexing="ij")
    return np.where((x - 0.5) ** 2 + (y - 0.5) ** 2 + (z - 0.5) ** 2 < 0.09, 1.0, 0.1)


def load(path, name):
    """The fields of a .npy (one, called name or the stem) or .npz (every array) file."""
    try:
        data = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise MeshInputError("no such file")
    except (ValueError, OSError) as e:
        raise MeshInputError(f"not a numpy .npy or .npz file ({e})")
    if isinstance(data, np.lib.npyio.NpzFile):
        with data:
            if not data.files:
                raise MeshInputError("holds no arrays")
            return {k: data[k] for k in data.files}
    stem = os.path.splitext(os.path.basename(path))[0]
    return {name or stem: data}


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description="Write a level-0 dpamr mesh from numpy arrays (.npy, .npz).",
                                 epilog="The deck that refines the mesh must match it: the tool prints the keys.")
    ap.add_argument("out", help="the mesh file to write (.hdf)")
    ap.add_argument("data", nargs="?", help=".npy (one field) or .npz (one field per array)")
    ap.add_argument("--name", help="the field name of a .npy array (default: the file's stem)")
    ap.add_argument("--tile-size", type=int, default=8, help="cells per tile side: 4, 8, 16, 32 (default 8)")
    ap.add_argument("--origin", type=float, nargs="+", help="domain corner, one per dimension (default 0)")
    ap.add_argument("--cell-size", type=float, help="cell spacing (default: 1 / the longest extent)")
    ap.add_argument("--demo", type=int, choices=(2, 3), help="write a demo disc/sphere instead of DATA")
    ap.add_argument("--force", action="store_true", help="replace an existing OUT")
    a = ap.parse_args(argv)
    if (a.data is None) == (a.demo is None):
        ap.error("give DATA.npy|DATA.npz or --demo 2|3")
    if os.path.exists(a.out) and not a.force:
        print(f"mesh_from_numpy.py: error: {a.out} exists: it is kept (choose another name, or --force)",
              file=sys.stderr)
        return 1
    try:
        fields = {"rho": demo(a.demo, a.tile_size)} if a.demo else load(a.data, a.name)
        dim = np.asarray(next(iter(fields.values()))).ndim
        if a.origin is not None and len(a.origin) != dim:
            raise MeshInputError(f"--origin {' '.join(map(str, a.origin))}: expected {dim} numbers (one per "
                                 "dimension)")
        root, h0 = write_level0(a.out, fields, a.tile_size, tuple(a.origin or ()), a.cell_size)
    except MeshInputError as e:
        print(f"mesh_from_numpy.py: error: {a.data or 'demo'}: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"mesh_from_numpy.py: error: cannot write {a.out}: {e}", file=sys.stderr)
        return 1
    names = " ".join(fields)
    print(f"wrote {a.out}: {dim}D, root {root[:dim]}, tile_size {a.tile_size}, cell_size {h0!r}, fields {names}")
    print(f"deck keys: dim = {dim}; root = {' '.join(map(str, root[:dim]))}; tile_size = {a.tile_size}; "
          f"cell_size = {h0!r}; fields = {names}" + (f"; origin = {' '.join(map(str, a.origin))}" if a.origin else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
