#!/bin/bash
# quickstart.sh [CMAKE_ARGS...] - install what is missing, build, and run the default deck. Extra
# arguments go to cmake, e.g. `bash tools/quickstart.sh -DDPAMR_CUDA=OFF` on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/deps.sh
bash tools/build.sh build "$@"
./build/dpamr run inputs/default.inp output=default.hdf   # command-line paths: from the current directory
./build/dpamr check default.hdf
echo "open default.hdf in ParaView, or: xvfb-run -a /usr/bin/python3 validation/render.py default.hdf default.png"
