#!/usr/bin/python3
"""Check that dpamr output files open in ParaView 5.11 as the hierarchy they claim to hold.

    xvfb-run -a /usr/bin/python3 validation/paraview_check.py [--png-dir DIR] FILE.hdf [MORE.hdf ...]

For each file, VTK's own reader (vtkHDFReader from ParaView's Python, the one ParaView uses) loads
the /VTKHDF OverlappingAMR part, and what it sees is compared with the file's mesh read
independently with h5py (validation/dpamr_file.py: either layout, docs/format.md; in format version
2 the cells and boxes are /VTKHDF's own, in version 1 /dpamr's tile arrays and copy of the cells):
  - the number of levels (= /dpamr@nlevels = levels spanned by the tiles) and the number
    of boxes per level (= tiles per level), also the rows of /VTKHDF/LevelL/AMRBox;
  - per level, the spacing h0 / 2^L, and for every box its origin (origin + coord * B * h) and its
    size (B cells per axis; one cell thick in z in 2D);
  - every field is a cell array of every box, with the tile's values bit for bit;
  - vtkGhostType hides exactly the parent cells covered by the next level.
Then the file is rendered with validation/render.py into --png-dir (default: beside the file) and
the PNG must exist, weigh more than a few KB and not be blank.

Needs Debian's python3-paraview, python3-h5py and python3-numpy for /usr/bin/python3 (without one,
it says so in one line and exits 1), and an X server (xvfb-run).
Prints one line per file and a closing "N passed, M failed" line; exit 0 when every file passed.
"""
import argparse
import os
import sys

PROG = "paraview_check.py"
from dpamr_require import require  # noqa: E402  (beside this script)


if __name__ == "__main__":
    require(PROG, ["numpy", "h5py", "paraview.simple"])
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

GHOST = "vtkGhostType"
HIDDEN = 32  # vtkDataSetAttributes::HIDDENCELL
MIN_PNG_BYTES = 20 * 1024


class CheckError(Exception):
    """A mismatch between what ParaView reads and what the file says."""


def read_tree(path):
    """The file's own account of itself, from h5py: /dpamr attributes, tiles, fields, AMRBox rows."""
    import h5py

    from dpamr_file import read_mesh

    with h5py.File(path, "r") as f:
        if "dpamr" not in f:
            raise CheckError("no /dpamr group: not a dpamr file")
        a = f["dpamr"].attrs
        for name in ("dim", "tile_size", "root", "origin", "h0", "nlevels", "format_version", "fields"):
            if name not in a:
                raise CheckError(f"missing attribute /dpamr@{name}")
        t = read_mesh(f)  # format version 2: the cells and boxes come from /VTKHDF itself
        # Per VTKHDF level: box rows, and the spacing checked here already, because ParaView's
        # reader aborts the whole process (an assertion in vtkAMRBox::Refine) when two levels'
        # spacings do not give a refinement ratio >= 1.
        t["amrbox_rows"] = []
        L = 0
        while f"VTKHDF/Level{L}" in f:
            lev = f[f"VTKHDF/Level{L}"]
            if "AMRBox" not in lev or lev["AMRBox"].ndim != 2 or lev["AMRBox"].shape[1] != 6:
                raise CheckError(f"/VTKHDF/Level{L}/AMRBox missing or not of shape (n, 6)")
            t["amrbox_rows"].append(lev["AMRBox"].shape[0])
            sp = np.ravel(lev.attrs.get("Spacing", []))
            h = float(a["h0"]) / 2**L
            if sp.shape != (3,) or not np.allclose(sp, h, rtol=1e-12, atol=0):
                raise CheckError(f"/VTKHDF/Level{L}@Spacing = {sp.tolist()}, expected h0/2^{L} = {h:.17g} on every axis")
            L += 1
    if t["dim"] not in (2, 3):
        raise CheckError(f"/dpamr@dim = {t['dim']}, expected 2 or 3")
    n = t["level"].shape[0]
    if t["coord"].shape != (n, 3) or n != t["level_start"][-1]:
        raise CheckError(f"tile coordinates of shape {t['coord'].shape}, expected ({t['level_start'][-1]}, 3)")
    cells = t["B"] ** t["dim"]
    for name, v in t["fields"].items():
        if v.shape != (n, cells):
            raise CheckError(f"field {name} has shape {v.shape}, expected ({n}, {cells})")
    if n and (t["level"] < 0).any():
        raise CheckError("/dpamr/tiles/level holds negative levels")
    t["count"] = np.bincount(t["level"]).tolist() if n else []
    return t


def read_amr(path):
    """Load the file with VTK's vtkHDFReader; returns the vtkOverlappingAMR. Reader errors fail."""
    import paraview  # noqa: F401  (sets up ParaView's bundled VTK modules)
    from vtkmodules.vtkIOHDF import vtkHDFReader

    errors = []
    reader = vtkHDFReader()
    reader.AddObserver("ErrorEvent", lambda obj, ev: errors.append(ev))
    reader.GetExecutive().AddObserver("ErrorEvent", lambda obj, ev: errors.append(ev))
    reader.SetFileName(path)
    reader.Update()
    amr = reader.GetOutputDataObject(0)
    if errors or amr is None or amr.GetClassName() != "vtkOverlappingAMR":
        kind = amr.GetClassName() if amr is not None else "nothing"
        raise CheckError(f"vtkHDFReader failed to load it (got {kind}; see the VTK messages above)")
    return reader, amr


def check_file(path, png_dir):
    """All checks of one file; returns a one-line summary, raises CheckError on the first mismatch."""
    from vtkmodules.util.numpy_support import vtk_to_numpy

    t = read_tree(path)
    dim, B, h0, origin = t["dim"], t["B"], t["h0"], t["origin"]
    count = t["count"]
    nl = len(count)
    if t["nlevels"] != nl:
        raise CheckError(f"/dpamr@nlevels = {t['nlevels']} but the tiles span {nl} levels")
    if t["amrbox_rows"] != count:
        raise CheckError(f"/VTKHDF AMRBox rows per level {t['amrbox_rows']} differ from the tiles per level {count}")

    _reader, amr = read_amr(path)  # keep the reader alive while its output is used
    got_levels = amr.GetNumberOfLevels()
    got = [amr.GetNumberOfDataSets(L) for L in range(got_levels)]
    if got_levels != nl:
        raise CheckError(f"ParaView reads {got_levels} levels, the tile tree has {nl} (/dpamr@nlevels {t['nlevels']})")
    if got != count:
        raise CheckError(f"ParaView reads boxes per level {got}, the tile tree has {count}")

    cells = B**dim
    npts = [B + 1, B + 1, B + 1 if dim == 3 else 2]
    order = np.argsort(t["level"], kind="stable")  # canonical order: level, then Morton key
    start = np.concatenate([[0], np.cumsum(count)])
    hidden_per_child = (B // 2) ** dim
    for L in range(nl):
        h = h0 / 2**L
        sp = [0.0, 0.0, 0.0]
        amr.GetAMRInfo().GetSpacing(L, sp)
        if not np.allclose(sp, h, rtol=1e-12, atol=0):
            raise CheckError(f"level {L}: spacing {sp}, expected h0/2^{L} = {h:.17g}")
        hidden = 0
        for b in range(count[L]):
            tile = order[start[L] + b]
            ds = amr.GetDataSet(L, b)
            where = f"level {L} box {b} (tile {tile})"
            if ds is None:
                raise CheckError(f"{where}: no dataset")
            if not np.allclose(ds.GetSpacing(), h, rtol=1e-12, atol=0):
                raise CheckError(f"{where}: spacing {ds.GetSpacing()}, expected {h:.17g}")
            if list(ds.GetDimensions()) != npts:
                raise CheckError(f"{where}: {ds.GetDimensions()} points, expected {tuple(npts)}")
            want = [origin[a] + t["coord"][tile][a] * B * h for a in range(3)]
            if not np.allclose(ds.GetOrigin(), want, rtol=0, atol=1e-9 * max(1.0, h0 * B)):
                raise CheckError(f"{where}: origin {ds.GetOrigin()}, expected {tuple(want)} from its coords")
            cd = ds.GetCellData()
            for name, values in t["fields"].items():
                arr = cd.GetArray(name)
                if arr is None:
                    names = [cd.GetArrayName(i) for i in range(cd.GetNumberOfArrays())]
                    raise CheckError(f"{where}: no cell array '{name}' (has {names})")
                v = vtk_to_numpy(arr)
                if v.shape[0] != cells or not np.array_equal(v.astype(values.dtype), values[tile]):
                    raise CheckError(f"{where}: cell array '{name}' differs from the file's tile {tile} (h5py)")
            g = cd.GetArray(GHOST)
            if g is not None:
                hidden += int(np.count_nonzero(vtk_to_numpy(g) & HIDDEN))
        want_hidden = (count[L + 1] if L + 1 < nl else 0) * hidden_per_child
        if hidden != want_hidden:
            raise CheckError(f"level {L}: {hidden} cells hidden by {GHOST}, the next level covers {want_hidden}")

    import render

    png = os.path.join(png_dir or os.path.dirname(os.path.abspath(path)),
                       os.path.splitext(os.path.basename(path))[0] + ".png")
    _, field = render.render(path, png)
    check_png(png)
    return (f"{dim}D, {nl} levels, boxes per level {count}, fields {sorted(t['fields'])}; "
            f"rendered {field} to {png} ({os.path.getsize(png) // 1024} KB)")


def check_png(png):
    """The picture exists, is not tiny, and is not one flat colour."""
    from vtkmodules.vtkIOImage import vtkPNGReader
    from vtkmodules.util.numpy_support import vtk_to_numpy

    if not os.path.isfile(png):
        raise CheckError(f"no PNG written at {png}")
    size = os.path.getsize(png)
    if size < MIN_PNG_BYTES:
        raise CheckError(f"{png} is only {size} bytes: nothing rendered?")
    r = vtkPNGReader()
    r.SetFileName(png)
    r.Update()
    img = vtk_to_numpy(r.GetOutput().GetPointData().GetScalars())[:, :3]
    background = img[0]  # a corner pixel
    drawn = np.count_nonzero((img != background).any(axis=1)) / img.shape[0]
    colours = np.unique(img, axis=0).shape[0]
    if drawn < 0.05 or colours < 16:
        raise CheckError(f"{png} looks blank: {100 * drawn:.1f}% of pixels drawn, {colours} colours")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Check dpamr output files against ParaView 5.11's reader.")
    ap.add_argument("files", nargs="+", help="dpamr output files (.hdf)")
    ap.add_argument("--png-dir", help="where to write the PNGs (default: beside each file)")
    a = ap.parse_args(argv)
    if a.png_dir:
        os.makedirs(a.png_dir, exist_ok=True)
    passed = failed = 0
    for path in a.files:
        try:
            if not os.path.isfile(path):
                raise CheckError("no such file")
            summary = check_file(path, a.png_dir)
            print(f"paraview_check: {path}: OK: {summary}")
            passed += 1
        except (CheckError, OSError, KeyError, ValueError) as e:
            print(f"paraview_check: {path}: FAILED: {e}")
            failed += 1
        sys.stdout.flush()
    print(f"paraview_check: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
