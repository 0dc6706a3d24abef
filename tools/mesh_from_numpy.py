#!/usr/bin/python3
"""mesh_from_numpy.py - write a level-0 dpamr mesh from your own cell data with h5py.

usage: mesh_from_numpy.py OUT.hdf [--tile-size B] [--demo 2|3]

As a library: write_level0(path, fields, tile_size, origin=(0,0,0), h0=None), where fields maps
a name to a numpy array of shape (ny, nx) in 2D or (nz, ny, nx) in 3D (x fastest, C order), each
extent a multiple of tile_size. The file holds only the /dpamr group (docs/format.md): that is
all `dpamr run` reads; it has no /VTKHDF group, so ParaView opens it only after a run.
"""
import sys
import h5py
import numpy as np


def morton(dim, i, j, k):
    key = 0
    for b in range(32 if dim == 2 else 21):
        key |= ((i >> b) & 1) << (dim * b)
        key |= ((j >> b) & 1) << (dim * b + 1)
        if dim == 3:
            key |= ((k >> b) & 1) << (dim * b + 2)
    return key


def write_level0(path, fields, tile_size, origin=(0.0, 0.0, 0.0), h0=None):
    names = list(fields)
    shape = fields[names[0]].shape
    dim = len(shape)
    B = tile_size
    ext = shape[::-1]                                  # (nx, ny[, nz])
    root = [e // B for e in ext] + [1] * (3 - dim)
    assert all(e % B == 0 for e in ext), "each extent must be a multiple of tile_size"
    if h0 is None:
        h0 = 1.0 / max(ext)
    tiles = [(morton(dim, i, j, k), i, j, k)
             for k in range(root[2]) for j in range(root[1]) for i in range(root[0])]
    tiles.sort()
    n = len(tiles)
    with h5py.File(path, "w") as f:
        g = f.create_group("dpamr")
        g.attrs["format"] = np.bytes_("dpamr-mesh")
        g.attrs["format_version"] = np.int32(1)
        g.attrs["dim"] = np.int32(dim)
        g.attrs["tile_size"] = np.int32(B)
        g.attrs["root"] = np.array(root, dtype=np.int32)
        g.attrs["origin"] = np.array(origin, dtype=np.float64)
        g.attrs["h0"] = np.float64(h0)
        g.attrs["nlevels"] = np.int32(1)
        g.attrs["fields"] = np.bytes_(" ".join(names))
        g["tiles/level"] = np.zeros(n, np.int32)
        g["tiles/coord"] = np.array([t[1:] for t in tiles], np.int32)
        g["tiles/key"] = np.array([t[0] for t in tiles], np.uint64)
        g["tiles/parent"] = np.full(n, -1, np.int64)
        g["tiles/childmask"] = np.zeros(n, np.uint8)
        g["level_start"] = np.array([0, n], np.int64)
        for name in names:
            a = np.asarray(fields[name], dtype=np.float32)
            if dim == 2:
                a = a[None]
            out = np.empty((n, B ** dim), np.float32)
            for t, (_, i, j, k) in enumerate(tiles):
                kz = slice(k * B, k * B + B) if dim == 3 else slice(0, 1)
                out[t] = a[kz, j * B:j * B + B, i * B:i * B + B].reshape(-1)
            g["fields/" + name] = out
    return root, h0


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    B = int(args[args.index("--tile-size") + 1]) if "--tile-size" in args else 8
    dim = int(args[args.index("--demo") + 1]) if "--demo" in args else 2
    n = 4 * B
    ax = (np.arange(n) + 0.5) / n
    if dim == 2:
        y, x = np.meshgrid(ax, ax, indexing="ij")
        rho = np.where((x - 0.5) ** 2 + (y - 0.5) ** 2 < 0.09, 1.0, 0.1)
    else:
        z, y, x = np.meshgrid(ax, ax, ax, indexing="ij")
        rho = np.where((x - 0.5) ** 2 + (y - 0.5) ** 2 + (z - 0.5) ** 2 < 0.09, 1.0, 0.1)
    root, h0 = write_level0(args[0], {"rho": rho}, B)
    print(f"wrote {args[0]}: {dim}D, root {root[:dim]}, tile_size {B}, cell_size {h0!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
