#!/usr/bin/python3
"""file_limits.py MESH.hdf OUTDIR - small files that declare more than they hold (tests/file_limits.sh).

Writes, from a good level-0 mesh, files of a few KB each:
  big_level.hdf     /dpamr/tiles/level declares 5e7 rows (never written), the rest as it was
  big_all.hdf       every per-tile dataset declares 5e7 rows, none written
  big_gzip.hdf      the same, chunked and deflate-compressed (unwritten chunks store nothing)
  null_version.hdf  /dpamr@format_version has an empty (null) dataspace
  null_dim.hdf      /dpamr@dim has an empty (null) dataspace
  null_origin.hdf   /dpamr@origin has an empty (null) dataspace
  big_deck.hdf      /dpamr/deck declares a 2 GB string (never written)
  damaged_header.hdf  4 bytes of the /dpamr object header overwritten (its checksum no longer holds)"""
import shutil
import sys

import h5py
import numpy as np

mesh, out = sys.argv[1], sys.argv[2]
N = 50_000_000


def copy(name):
    path = "%s/%s" % (out, name)
    shutil.copyfile(mesh, path)
    return path


def declare(f, names, **kw):
    for name in names:
        d = f[name]
        shape, dtype = (N,) + d.shape[1:], d.dtype
        del f[name]
        f.create_dataset(name, shape=shape, dtype=dtype, **kw)


with h5py.File(copy("big_level.hdf"), "r+") as f:
    declare(f, ["/dpamr/tiles/level"])
per_tile = ["/dpamr/tiles/" + n for n in ("level", "coord", "key", "parent", "childmask")]
with h5py.File(copy("big_all.hdf"), "r+") as f:
    declare(f, per_tile + ["/dpamr/fields/" + n for n in f["/dpamr/fields"]])
with h5py.File(copy("big_gzip.hdf"), "r+") as f:
    declare(f, per_tile + ["/dpamr/fields/" + n for n in f["/dpamr/fields"]], compression="gzip")
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
