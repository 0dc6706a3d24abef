#!/bin/bash
# deps.sh - install what dpamr's build and tests need on Debian 12 (only what is missing).
set -euo pipefail
pkgs=(cmake gcc make libhdf5-dev libhdf5-openmpi-dev libopenmpi-dev openmpi-bin python3 python3-h5py python3-numpy python3-matplotlib python3-paraview xvfb xauth clang hdf5-tools strace)
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all present"
    exit 0
fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
echo "deps: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
