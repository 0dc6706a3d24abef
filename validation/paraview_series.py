#!/usr/bin/python3
"""Check that a dpamr time series opens in ParaView 5.11 as one time-varying dataset.

    xvfb-run -a /usr/bin/python3 validation/paraview_series.py NAME.hdf.series [--png-dir DIR]

ParaView opens the JSON series file (`dpamr run` with steps > 0 writes it beside the step files)
with its file-series reader around the VTKHDF reader. Checked against the series file and each
step's own /dpamr group (read with h5py):
  - the reader's time steps are the series' times, in order, one per file;
  - at every time step the reader's vtkOverlappingAMR has the step file's levels (those /VTKHDF
    shows) and, per level, as many boxes as the file has tiles;
  - each file's /dpamr@step and @time: the time equals the series' time for that file.
With --png-dir, the first and last time steps are rendered to PNGs there (Surface With Edges); the
folder is made when missing, and rendering needs an X display (xvfb-run): both are checked first.
Prints one line per time step (and per render) and exits 0 when everything matched and rendered, 1
otherwise. Needs Debian's python3-numpy, python3-h5py and python3-paraview: without one, it says so
in one line and exits 1.
"""
import argparse
import json
import os
import sys

PROG = "paraview_series.py"
from dpamr_require import require  # noqa: E402  (beside this script)


if __name__ == "__main__":
    require(PROG, ["numpy", "h5py", "paraview.simple"])
import numpy as np  # noqa: E402


def file_tree(path):
    import h5py

    from dpamr_file import read_mesh

    with h5py.File(path, "r") as f:
        m = read_mesh(f)
        counts = [int(np.count_nonzero(m["level"] == L)) for L in range(m["nlevels"])]
        while counts and counts[-1] == 0:  # /VTKHDF leaves out trailing empty levels
            counts.pop()
        return counts, int(f["dpamr"].attrs["step"]), float(f["dpamr"].attrs["time"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("series")
    ap.add_argument("--png-dir")
    a = ap.parse_args()
    try:
        with open(a.series) as fp:
            s = json.load(fp)
    except (OSError, ValueError) as e:
        print(f"FAIL {a.series}: cannot read it as a series file: {getattr(e, 'strerror', None) or e}")
        return 1
    if s.get("file-series-version") != "1.0":
        print(f"FAIL {a.series}: file-series-version is {s.get('file-series-version')!r}, not '1.0'")
        return 1
    files = s["files"]
    if a.png_dir:  # before any work: the folder (made when missing) and the display rendering needs
        if not os.environ.get("DISPLAY"):
            print(f"{PROG}: error: --png-dir renders with ParaView, which needs an X display: run it under "
                  "`xvfb-run -a`", file=sys.stderr)
            return 1
        why = None
        if os.path.exists(a.png_dir) and not os.path.isdir(a.png_dir):
            why = "it exists and is not a folder"
        else:
            try:
                os.makedirs(a.png_dir, exist_ok=True)
                if not os.access(a.png_dir, os.W_OK | os.X_OK):
                    why = "cannot write in it (permission denied)"
            except OSError as e:
                why = f"cannot make it: {e.strerror or e}"
        if why:
            print(f"{PROG}: error: --png-dir {a.png_dir}: {why}", file=sys.stderr)
            return 1
    folder = os.path.dirname(os.path.abspath(a.series))
    from paraview import simple as pv

    reader = pv.OpenDataFile(os.path.abspath(a.series))
    if reader is None:
        print(f"FAIL {a.series}: ParaView has no reader for it")
        return 1
    times = list(reader.TimestepValues) if not isinstance(reader.TimestepValues, float) else [reader.TimestepValues]
    want = [float(e["time"]) for e in files]
    fails = 0
    if len(times) != len(files) or any(abs(x - y) > 1e-12 * max(1.0, abs(y)) for x, y in zip(times, want)):
        print(f"FAIL {a.series}: ParaView's time steps {times} are not the series' {want}")
        return 1
    print(f"{a.series}: {reader.GetXMLName()} reads {len(times)} time steps")
    for e, t in zip(files, times):
        path = os.path.join(folder, e["name"])
        counts, step, ftime = file_tree(path)
        reader.UpdatePipeline(t)
        amr = reader.GetClientSideObject().GetOutputDataObject(0)
        if amr is None or amr.GetClassName() != "vtkOverlappingAMR":
            print(f"FAIL t={t}: not read as vtkOverlappingAMR ({amr.GetClassName() if amr else None})")
            fails += 1
            continue
        got = [amr.GetNumberOfDataSets(L) for L in range(amr.GetNumberOfLevels())]
        ok = got == counts and ftime == float(e["time"])
        print(f"{'ok  ' if ok else 'FAIL'} t={t:g} {e['name']} (step {step}, @time {ftime:g}): levels {len(got)}, "
              f"boxes per level {got}" + ("" if got == counts else f", the file has {counts}"))
        fails += not ok
    bad_renders = 0  # counted apart: a failed render is not a failed time step
    if a.png_dir and fails == 0:
        view = pv.CreateView("RenderView")
        view.ViewSize = [800, 800]
        disp = pv.Show(reader, view)
        disp.SetRepresentationType("Surface With Edges")
        pv.ColorBy(disp, ("CELLS", "rho"))
        renders = sorted({0, len(times) - 1})
        for k in renders:
            view.ViewTime = times[k]
            pv.ResetCamera(view)
            out = os.path.join(a.png_dir, f"series_{k}.png")
            pv.SaveScreenshot(out, view)
            if not os.path.exists(out) or os.path.getsize(out) < 10 * 1024:
                print(f"FAIL the render of t={times[k]} ({out}) is missing or blank")
                bad_renders += 1
            else:
                print(f"rendered t={times[k]:g} to {out}")
    print(f"{len(times) - fails} of {len(times)} time steps passed"
          + (f"; {bad_renders} of {len(renders)} renders failed" if bad_renders else ""))
    return 1 if fails or bad_renders else 0


if __name__ == "__main__":
    sys.exit(main())
