#!/usr/bin/python3
"""file_limits.py MESH.hdf OUTDIR [MESH_V1.hdf] - small files that declare more than they hold (tests/file_limits.sh).

Writes, from a good level-0 mesh (format version 2), files of a few KB each:
  big_level.hdf     5e7 tiles in /dpamr/level_start, /dpamr/tiles/parent declares them (never written)
  big_all.hdf       the same, and every per-tile dataset (the tree, level 0's AMRBox and CellData)
                    declares 5e7 rows, none written
  big_gzip.hdf      the same, chunked and deflate-compressed (unwritten chunks store nothing)
  null_version.hdf  /dpamr@format_version has an empty (null) dataspace
  null_dim.hdf      /dpamr@dim has an empty (null) dataspace
  null_origin.hdf   /dpamr@origin has an empty (null) dataspace
  big_deck.hdf      /dpamr/deck declares a 2 GB string (never written)
  damaged_header.hdf  4 bytes of the /dpamr object header overwritten (its checksum no longer holds)
and, from a level-0 mesh in format version 1 (the tile arrays and the cells in /dpamr):
  big_all_v1.hdf    every per-tile dataset of /dpamr declares 5e7 rows, none written"""
import shutil
import sys

import h5py
import numpy as np

mesh, out = sys.argv[1], sys.argv[2]
N = 50_000_000


def copy(name, src=mesh):
    path = "%s/%s" % (out, name)
    shutil.copyfile(src, path)
    return path


def declare(f, names, **kw):
    for name in names:
        d = f[name]
        rows = N * (d.shape[0] // f["/dpamr/level_start"][1]) if name.startswith("/VTKHDF") and d.ndim == 1 else N
        shape, dtype = (rows,) + d.shape[1:], d.dtype
        del f[name]
        f.create_dataset(name, shape=shape, dtype=dtype, **kw)


def many_tiles(f):
    """/dpamr/level_start of a level-0 mesh says N tiles"""
    f["/dpamr/level_start"][...] = np.array([0, N], np.int64)


with h5py.File(copy("big_level.hdf"), "r+") as f:
    declare(f, ["/dpamr/tiles/parent"])
    many_tiles(f)
per_tile = ["/dpamr/tiles/parent", "/dpamr/tiles/childmask", "/VTKHDF/Level0/AMRBox"]
with h5py.File(copy("big_all.hdf"), "r+") as f:
    declare(f, per_tile + ["/VTKHDF/Level0/CellData/" + n for n in f["/VTKHDF/Level0/CellData"]])
    many_tiles(f)
with h5py.File(copy("big_gzip.hdf"), "r+") as f:
    declare(f, per_tile + ["/VTKHDF/Level0/CellData/" + n for n in f["/VTKHDF/Level0/CellData"]], compression="gzip")
    many_tiles(f)
if len(sys.argv) > 3:
    with h5py.File(copy("big_all_v1.hdf", sys.argv[3]), "r+") as f:
        for name in ["/dpamr/tiles/" + n for n in ("level", "coord", "key", "parent", "childmask")] + \
                ["/dpamr/fields/" + n for n in f["/dpamr/fields"]]:
            d = f[name]
            shape, dtype = (N,) + d.shape[1:], d.dtype
            del f[name]
            f.create_dataset(name, shape=shape, dtype=dtype)
for name, attr, dtype in (("null_version.hdf", "format_version", "i4"), ("null_dim.hdf", "dim", "i4"),
                          ("null_origin.hdf", "origin", "f8")):
    with h5py.File(copy(name), "r+") as f:
        del f["/dpamr"].attrs[attr]
        f["/dpamr"].attrs.create(attr, h5py.Empty(dtype))
with h5py.File(copy("big_deck.hdf"), "r+") as f:
    del f["/dpamr/deck"]
    f["/dpamr"].create_dataset("deck", shape=(), dtype="S2000000000")
with h5py.File(mesh, "r") as f:
    addr = h5py.h5o.get_info(f["/dpamr"].id).addr
path = copy("damaged_header.hdf")
with open(path, "r+b") as fp:
    fp.seek(addr + 40)
    old = fp.read(4)
    fp.seek(addr + 40)
    fp.write(bytes(b ^ 0x5A for b in old))
