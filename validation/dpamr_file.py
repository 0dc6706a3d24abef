"""dpamr_file.py - the mesh a dpamr file holds, read with h5py in either layout (docs/format.md).

Format version 2 (what dpamr writes): the tiles' cells in /VTKHDF/LevelL/CellData/NAME and their
cell ranges in /VTKHDF/LevelL/AMRBox (level L's tiles in canonical order; trailing empty levels left
out), the tree in /dpamr/tiles (parent, childmask) and /dpamr/level_start. Format version 1: the
same tree plus tiles/level, tiles/coord and a copy of the cells in /dpamr/fields. read_mesh gives
both as the same arrays, for tests/h5compare.py --mesh, validation/paraview_check.py and render.py.
"""
import numpy as np


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def read_mesh(f):
    """The mesh of the open h5py.File f: a dict with dim, B, root, origin, h0, nlevels, version,
    names (the field order), level_start, and per tile in canonical order level, coord (n, 3),
    parent, childmask, and fields {name: float32 (n, B^dim)}. KeyError on a missing object."""
    g = f["dpamr"]
    a = g.attrs
    m = {"dim": int(a["dim"]), "B": int(a["tile_size"]), "root": [int(v) for v in np.ravel(a["root"])],
         "origin": [float(v) for v in np.ravel(a["origin"])], "h0": float(a["h0"]), "nlevels": int(a["nlevels"]),
         "version": int(a["format_version"]), "names": _text(a["fields"]).split(),
         "level_start": g["level_start"][()], "parent": g["tiles/parent"][()], "childmask": g["tiles/childmask"][()]}
    cells = m["B"] ** m["dim"]
    if m["version"] == 1:
        m["level"] = g["tiles/level"][()].astype(np.int64)
        m["coord"] = g["tiles/coord"][()].astype(np.int64)
        m["fields"] = {n: g["fields/" + n][()] for n in m["names"]}
        return m
    ls, levels, coords = m["level_start"], [], []
    values = {n: [] for n in m["names"]}
    for L in range(len(ls) - 1):
        if ls[L + 1] == ls[L] and f"VTKHDF/Level{L}" not in f:
            continue  # a trailing empty level: left out of /VTKHDF
        lev = f[f"VTKHDF/Level{L}"]
        box = lev["AMRBox"][()].astype(np.int64)
        levels.append(np.full(len(box), L, np.int64))
        coords.append(box[:, 0::2] // m["B"])
        for n in m["names"]:
            values[n].append(lev["CellData/" + n][()].reshape(-1, cells))
    m["level"] = np.concatenate(levels) if levels else np.zeros(0, np.int64)
    m["coord"] = np.concatenate(coords) if coords else np.zeros((0, 3), np.int64)
    m["fields"] = {n: np.concatenate(v) if v else np.zeros((0, cells), np.float32) for n, v in values.items()}
    return m
