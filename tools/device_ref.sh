# device_ref.sh - sourced by tools/ptx_diff.sh and tools/ptxas_report.sh, which compare the device code
# of a reference commit with the working tree's without a GPU: the compiler and the build's device
# flags (CMakeLists.txt: -O3, -fmad=false, relocatable device code, sm_90), a scratch folder `work`
# removed at exit, and the reference commit's tree in $work/ref/src. Sets nvcc, dflags, work.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
dflags=(-O3 -DNDEBUG -D_POSIX_C_SOURCE=200809L -arch=sm_90 -fmad=false -rdc=true)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ref/src"
git archive "${1:-HEAD}" | tar -x -C "$work/ref/src"
