#!/usr/bin/python3
"""Render a dpamr output file (VTKHDF OverlappingAMR) to a PNG with ParaView.

    xvfb-run -a /usr/bin/python3 validation/render.py OUT.hdf OUT.png [--field NAME] [--size 1200x900]

Needs Debian's python3-paraview (5.11) for /usr/bin/python3; headless it needs an X server, hence
xvfb-run (Debian's ParaView is built for GLX, offscreen rendering without X aborts).

2D meshes are drawn from above with every tile's cells edged, so the refinement shows directly.
3D meshes are drawn isometrically: the hierarchy is cut in half along a plane through the centre
(a crinkle clip keeps whole cells, so the cut face shows the cells of the finest level present
there), with the domain outline left in place for orientation.

`render(path, png, field=None, size=(1200, 900))` is the entry point for other scripts
(validation/paraview_check.py imports it).
"""
import argparse
import math
import os
import sys

GHOST = "vtkGhostType"


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


def render(path, png, field=None, size=(1200, 900)):
    """Render path to png; returns (png, field). Raises ValueError for an unusable file or field."""
    from paraview import simple as pv

    dim, names = file_info(path)
    if not names:
        raise ValueError(f"{path}: /VTKHDF/Level0/CellData holds no field besides {GHOST}")
    if field is None:
        field = names[0]
    elif field not in names:
        raise ValueError(f"{path}: no cell field '{field}' (fields: {', '.join(names)})")

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
        # Keep the half x < centre: the camera looks at the cut face from +x.
        shown = pv.Clip(Input=reader)
        shown.ClipType = "Plane"
        shown.ClipType.Origin = center
        shown.ClipType.Normal = [1.0, 0.0, 0.0]
        shown.Crinkleclip = 1
        outline = pv.Show(reader, view)
        outline.Representation = "Outline"
        outline.AmbientColor = outline.DiffuseColor = [0.9, 0.9, 0.9]
        outline.ColorArrayName = ["POINTS", ""]  # a plain outline, not coloured by a field

    disp = pv.Show(shown, view)
    disp.Representation = "Surface With Edges"
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
        direction = [2.0, -1.6, 1.4]
        norm = math.sqrt(sum(v * v for v in direction))
        distance = 0.95 * radius / math.sin(math.radians(15.0))  # the default 30-degree view angle
        view.CameraPosition = [center[a] + distance * direction[a] / norm for a in range(3)]
        view.CameraViewUp = [0.0, 0.0, 1.0]
    pv.Render(view)
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    pv.SaveScreenshot(png, view, ImageResolution=list(size))
    pv.Delete(view)
    return png, field


def main(argv=None):
    ap = argparse.ArgumentParser(description="Render a dpamr VTKHDF OverlappingAMR file to a PNG (ParaView 5.11).")
    ap.add_argument("file", help="input .hdf file (VTKHDF OverlappingAMR)")
    ap.add_argument("png", help="output PNG")
    ap.add_argument("--field", help="cell field to colour by (default: the first one in the file)")
    ap.add_argument("--size", default="1200x900", help="image size WxH (default 1200x900)")
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
    try:
        png, field = render(a.file, a.png, a.field, (w, h))
    except (ValueError, OSError) as e:
        print(f"render.py: error: {e}", file=sys.stderr)
        return 1
    print(f"render.py: wrote {png} ({w}x{h}, {field} of {a.file})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
