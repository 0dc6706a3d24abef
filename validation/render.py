#!/usr/bin/python3
"""Render a dpamr output file to a PNG: with ParaView when an X display is there, else off-screen
with matplotlib (Agg), so it never waits for a display that is not there.

    /usr/bin/python3 validation/render.py OUT.hdf OUT.png [--field NAME] [--size 1200x900]
        [--axis x|y|z] [--at POS] [--edges | --no-edges] [--levels LO:HI] [--renderer auto|paraview|matplotlib]

--renderer auto (the default) takes ParaView (Debian's python3-paraview 5.11, which needs an X
server: run it under `xvfb-run -a`) when $DISPLAY is set and ParaView imports, else matplotlib,
which reads the file with h5py (validation/dpamr_file.py, either layout) and needs no display. --levels is drawn by matplotlib only.

2D meshes are drawn from above; --edges (the default) outlines the tiles (ParaView: every cell).
3D meshes are cut by a plane normal to --axis (default x for ParaView, z for matplotlib) at the
coordinate --at; without --at the plane passes through the finest level's tiles (the median of
their centres), so the deepest refinement shows. ParaView draws the half below the plane
isometrically (a crinkle clip keeps whole cells) with the domain outline; matplotlib draws the slice.

`render(path, png, field=None, size=(1200, 900), ...)` is the entry point for other scripts
(validation/paraview_check.py imports it).
"""
import argparse
import math
import os
import sys

PROG = "render.py"
GHOST = "vtkGhostType"


from dpamr_require import require  # noqa: E402  (beside this script)


def file_info(path):
    """(dim, cell field names) from the file itself: /dpamr@dim when present, else the AMR boxes."""
    import h5py

    with h5py.File(path, "r") as f:
        if "VTKHDF/Level0/CellData" not in f:
            raise ValueError(f"{path}: no /VTKHDF/Level0/CellData: not a VTKHDF OverlappingAMR file")
        names = [n for n in f["VTKHDF/Level0/CellData"].keys() if n != GHOST]
        # h5py lists names alphabetically; /dpamr@fields keeps the deck's order, so "first" means
        # the deck's first field when the file has it.
        declared = f["dpamr"].attrs.get("fields") if "dpamr" in f else None
        if declared is not None:
            declared = (declared.decode() if isinstance(declared, bytes) else str(declared)).split()
            names = [n for n in declared if n in names] + [n for n in names if n not in declared]
        if "dpamr" in f and "dim" in f["dpamr"].attrs:
            dim = int(f["dpamr"].attrs["dim"])
        else:
            box = f["VTKHDF/Level0/AMRBox"][...]
            dim = 2 if box.size and (box[:, 4] == box[:, 5]).all() else 3
    return dim, names


AXES = "xyz"


def finest_position(path, axis):
    """The coordinate along axis of the median centre of the finest level's tiles."""
    import h5py
    import numpy as np

    from dpamr_file import read_mesh

    with h5py.File(path, "r") as f:
        m = read_mesh(f)
    B, h0, origin, level = m["B"], m["h0"], np.asarray(m["origin"], dtype=float), m["level"]
    top = int(level.max())
    coord = m["coord"][level == top][:, axis]
    h = h0 / 2 ** top
    return float(origin[axis] + (np.median(coord) + 0.5) * B * h)


def check_field(path, names, field):
    if not names:
        raise ValueError(f"{path}: /VTKHDF/Level0/CellData holds no field besides {GHOST}")
    if field is None:
        return names[0]
    if field not in names:
        raise ValueError(f"{path}: no cell field '{field}' (fields: {', '.join(names)})")
    return field


def render_matplotlib(path, png, field=None, size=(1200, 900), axis=None, at=None, edges=True, levels=None):
    """Off-screen (Agg) rendering from /dpamr: 2D the whole mesh, 3D a slice; the finest cell
    present at each pixel wins. Returns (png, field)."""
    import matplotlib

    matplotlib.use("Agg")
    import h5py
    import numpy as np
    from matplotlib import pyplot as plt
    from matplotlib.collections import LineCollection

    dim, names = file_info(path)
    field = check_field(path, names, field)
    from dpamr_file import read_mesh

    with h5py.File(path, "r") as f:
        m = read_mesh(f)
    B, h0, root, origin = m["B"], m["h0"], m["root"], np.asarray(m["origin"], dtype=float)
    level, coord, values = m["level"], m["coord"], m["fields"][field]
    lo, hi = (0, int(level.max())) if levels is None else levels
    if lo > int(level.max()):
        raise ValueError(f"{path}: --levels {lo}:{hi}: the file's levels are 0..{int(level.max())}")
    axis = 2 if axis is None else axis
    if dim == 2:
        axis = 2
    plane = [a for a in range(3) if a != axis][:2]  # the drawn axes (u, v)
    if dim == 3:
        if at is None:
            at = finest_position(path, axis)
        if not origin[axis] <= at <= origin[axis] + root[axis] * B * h0:
            raise ValueError(f"{path}: --at {at} is outside the domain along {AXES[axis]} "
                             f"({origin[axis]}..{origin[axis] + root[axis] * B * h0})")
    width = [root[a] * B * h0 for a in plane]
    npx = min(2048, max(256, root[plane[0]] * B * 2 ** min(hi, 8)))
    pix = max(width) / npx
    nx, ny = max(1, int(round(width[0] / pix))), max(1, int(round(width[1] / pix)))
    img = np.full((ny, nx), np.nan, np.float32)
    boxes = []
    shape = (B, B, B) if dim == 3 else (1, B, B)  # (z, y, x) of a tile's cells
    for t in np.argsort(level, kind="stable"):  # coarse first: finer tiles paint over
        L = int(level[t])
        if L < lo or L > hi:
            continue
        hL = h0 / 2 ** L
        cells = values[t].reshape(shape)
        if dim == 3:  # the slice of this tile at `at`, if the plane crosses it
            c = int(np.floor((at - origin[axis]) / hL)) - int(coord[t, axis]) * B
            if c < 0 or c >= B:
                continue
            cells = np.take(cells, c, axis=2 - axis)
        else:
            cells = cells[0]
        # cells is indexed [v][u] in both cases (array axes are z, y, x)
        u0, v0 = int(coord[t, plane[0]]) * B * hL, int(coord[t, plane[1]]) * B * hL
        x0, x1 = int(round(u0 / pix)), int(round((u0 + B * hL) / pix))
        y0, y1 = int(round(v0 / pix)), int(round((v0 + B * hL) / pix))
        if x1 <= x0 or y1 <= y0:
            x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)
        cx = np.clip(((np.arange(x0, x1) + 0.5) * pix - u0) // hL, 0, B - 1).astype(int)
        cy = np.clip(((np.arange(y0, y1) + 0.5) * pix - v0) // hL, 0, B - 1).astype(int)
        img[y0:y1, x0:x1] = cells[np.ix_(cy, cx)]
        if edges:
            u, v = u0 + origin[plane[0]], v0 + origin[plane[1]]
            e = B * hL
            boxes.append([(u, v), (u + e, v), (u + e, v + e), (u, v + e), (u, v)])
    fig = plt.figure(figsize=(size[0] / 100, size[1] / 100), dpi=100)
    ax = fig.add_subplot(111)
    ext = [origin[plane[0]], origin[plane[0]] + nx * pix, origin[plane[1]], origin[plane[1]] + ny * pix]
    im = ax.imshow(img, origin="lower", extent=ext, interpolation="nearest", cmap="viridis")
    if boxes:
        ax.add_collection(LineCollection(boxes, colors="k", linewidths=0.15, alpha=0.6))
    fig.colorbar(im, ax=ax, label=field)
    ax.set_xlabel(AXES[plane[0]])
    ax.set_ylabel(AXES[plane[1]])
    ax.set_aspect("equal")
    title = f"{os.path.basename(path)}: {field}, levels {lo}..{min(hi, int(level.max()))}"
    if dim == 3:
        title += f", slice {AXES[axis]} = {at:.6g}"
    ax.set_title(title)
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    fig.savefig(png)
    plt.close(fig)
    return png, field


def render(path, png, field=None, size=(1200, 900), axis=None, at=None, edges=True):
    """Render path to png with ParaView; returns (png, field). Raises ValueError for an unusable
    file or field."""
    from paraview import simple as pv

    dim, names = file_info(path)
    field = check_field(path, names, field)
    axis = 0 if axis is None else axis
    if dim == 3 and at is None:
        at = finest_position(path, axis)

    reader = pv.OpenDataFile(path)
    if reader is None:  # 5.11 registers .hdf for this reader; other names need it spelled out
        reader = pv.VTKHDFReader(FileName=[path])
    reader.MaximumLevelsToReadByDefaultForAMR = 0  # 0 = every level (a user setting may cap it)
    reader.UpdatePipeline()
    bounds = reader.GetDataInformation().GetBounds()
    center = [0.5 * (bounds[2 * a] + bounds[2 * a + 1]) for a in range(3)]
    extent = max(bounds[2 * a + 1] - bounds[2 * a] for a in range(3))

    view = pv.CreateView("RenderView")
    view.ViewSize = list(size)
    view.OrientationAxesVisibility = 1
    view.Background = [0.32, 0.34, 0.43]
    try:  # 5.10+: the palette's background would override the colour above
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass

    if dim == 2:
        shown = reader
    else:
        # Keep the half below the plane: the camera looks at the cut face from the + side.
        shown = pv.Clip(Input=reader)
        shown.ClipType = "Plane"
        shown.ClipType.Origin = [at if a == axis else center[a] for a in range(3)]
        shown.ClipType.Normal = [1.0 if a == axis else 0.0 for a in range(3)]
        shown.Crinkleclip = 1
        outline = pv.Show(reader, view)
        outline.Representation = "Outline"
        outline.AmbientColor = outline.DiffuseColor = [0.9, 0.9, 0.9]
        outline.ColorArrayName = ["POINTS", ""]  # a plain outline, not coloured by a field

    disp = pv.Show(shown, view)
    disp.Representation = "Surface With Edges" if edges else "Surface"
    disp.EdgeColor = [0.1, 0.1, 0.15]
    pv.ColorBy(disp, ("CELLS", field))
    disp.RescaleTransferFunctionToDataRange(True, False)
    disp.SetScalarBarVisibility(view, True)
    bar = pv.GetScalarBar(pv.GetColorTransferFunction(field), view)
    bar.Title = field
    bar.ComponentTitle = ""

    # The camera is placed from the bounds: ResetCamera walks every block and takes seconds on
    # meshes of 10^4 boxes, and the first Render would reset it again unless told not to.
    pv._DisableFirstRenderCameraReset()
    view.CameraFocalPoint = center
    if dim == 2:
        view.InteractionMode = "2D"
        view.CameraParallelProjection = 1
        width, height = bounds[1] - bounds[0], bounds[3] - bounds[2]
        # a wider horizontal margin keeps the colour bar and the axes off the mesh
        view.CameraParallelScale = 0.5 * max(1.08 * height, 1.3 * width * size[1] / size[0])
        view.CameraPosition = [center[0], center[1], center[2] + 3.0 * extent]
        view.CameraViewUp = [0.0, 1.0, 0.0]
    else:
        radius = 0.5 * math.sqrt(sum((bounds[2 * a + 1] - bounds[2 * a]) ** 2 for a in range(3)))
        direction = {0: [2.0, -1.6, 1.4], 1: [-1.6, 2.0, 1.4], 2: [1.4, -1.6, 2.0]}[axis]
        norm = math.sqrt(sum(v * v for v in direction))
        distance = 0.95 * radius / math.sin(math.radians(15.0))  # the default 30-degree view angle
        view.CameraPosition = [center[a] + distance * direction[a] / norm for a in range(3)]
        view.CameraViewUp = [0.0, 0.0, 1.0] if axis != 2 else [0.0, 1.0, 0.0]
    pv.Render(view)
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    pv.SaveScreenshot(png, view, ImageResolution=list(size))
    pv.Delete(view)
    return png, field


def paraview_usable():
    """ParaView renders only with an X display here (Debian's build is GLX): without one it waits
    and aborts, so it is not even imported then."""
    if not os.environ.get("DISPLAY"):
        return False
    try:
        import paraview.simple  # noqa: F401
    except ImportError:
        return False
    return True


def parse_levels(text):
    try:
        lo, hi = (int(v) for v in text.split(":"))
        if 0 <= lo <= hi:
            return lo, hi
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"{text}: expected LO:HI with 0 <= LO <= HI, e.g. 2:6")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Render a dpamr output file to a PNG (ParaView with a display, "
                                 "else matplotlib off-screen).")
    ap.add_argument("file", help="input .hdf file written by dpamr run")
    ap.add_argument("png", help="output PNG")
    ap.add_argument("--field", help="cell field to colour by (default: the first one in the file)")
    ap.add_argument("--size", default="1200x900", help="image size WxH (default 1200x900)")
    ap.add_argument("--axis", choices=list(AXES), help="3D: the slice plane's normal (default x for ParaView, z for matplotlib)")
    ap.add_argument("--at", type=float, help="3D: the slice position along --axis (default: through the finest tiles)")
    ap.add_argument("--edges", action=argparse.BooleanOptionalAction, default=True,
                    help="draw tile outlines (matplotlib) or cell edges (ParaView); default on")
    ap.add_argument("--levels", type=parse_levels, help="LO:HI, the levels to draw (matplotlib only)")
    ap.add_argument("--renderer", choices=["auto", "paraview", "matplotlib"], default="auto",
                    help="auto: ParaView when $DISPLAY is set and it imports, else matplotlib")
    a = ap.parse_args(argv)
    try:
        w, h = (int(v) for v in a.size.lower().split("x"))
        if w < 16 or h < 16:
            raise ValueError
    except ValueError:
        ap.error(f"--size {a.size}: expected WxH, e.g. 1200x900")
    if not os.path.isfile(a.file):
        print(f"render.py: error: {a.file}: no such file", file=sys.stderr)
        return 1
    renderer = a.renderer
    if renderer == "auto":
        renderer = "matplotlib" if a.levels or not paraview_usable() else "paraview"
    elif renderer == "paraview" and not os.environ.get("DISPLAY"):
        print("render.py: error: --renderer paraview needs an X display: run it under `xvfb-run -a`, "
              "or use --renderer matplotlib", file=sys.stderr)
        return 1
    # before any work: the file is read with h5py and numpy by either renderer
    require(PROG, ["numpy", "h5py", "paraview.simple" if renderer == "paraview" else "matplotlib"])
    axis = AXES.index(a.axis) if a.axis else None
    try:
        if renderer == "paraview":
            png, field = render(a.file, a.png, a.field, (w, h), axis, a.at, a.edges)
        else:
            png, field = render_matplotlib(a.file, a.png, a.field, (w, h), axis, a.at, a.edges, a.levels)
    except (ValueError, OSError, KeyError) as e:
        print(f"render.py: error: {e}", file=sys.stderr)
        return 1
    print(f"render.py: wrote {png} ({w}x{h}, {field} of {a.file}, {renderer})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
