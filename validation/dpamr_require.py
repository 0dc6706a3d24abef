"""The third-party modules a dpamr script needs, imported up front: when one is missing (or broken),
one line on stderr says which, the Debian packages that bring them and which python this is, and the
script exits 1, instead of a traceback. Used by validation/*.py and tools/*.py (which find this file
beside them once installed, and in validation/ in the source tree).

    from dpamr_require import require
    require("render.py", ["numpy", "h5py", "matplotlib"])
"""
import importlib
import os
import sys

DEBIAN = {"h5py": "python3-h5py", "numpy": "python3-numpy", "matplotlib": "python3-matplotlib",
          "paraview": "python3-paraview"}


def require(prog, modules):
    """Import each of modules (dotted names allowed); when any fails, the one line and exit 1."""
    missing, detail = [], ""
    for name in modules:
        top = name.split(".")[0]
        try:
            importlib.import_module(name)
        except ImportError as e:
            missing.append(top)
            if not detail and not (isinstance(e, ModuleNotFoundError) and e.name == top):
                detail = f" (import {name}: {' '.join(str(e).split())})"  # a broken install, not a missing one
    if missing:
        line = (f"{prog}: needs {', '.join(missing)}{detail} (Debian: apt-get install "
                f"{' '.join(DEBIAN[m] for m in missing)}); this python is {sys.executable}")
        if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
            line += "; Debian's /usr/bin/python3 has them"
        print(line, file=sys.stderr)
        sys.exit(1)
