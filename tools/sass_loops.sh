#!/bin/bash
# sass_loops.sh FILE [KERNEL_REGEX] [MAX] - where a kernel's instructions and spills are, without the
# GPU: compiles device/FILE.cu of the working tree for sm_90 with the build's device flags and
# -lineinfo, disassembles it (cuobjdump -xelf, nvdisasm -g) and prints, for every kernel whose mangled
# name matches KERNEL_REGEX (default: all), its loops innermost first with their size, their spill
# instructions and the source lines they hold (tools/sass_loops.py). ptxas -v counts a kernel's spills;
# this says which loops they are in, which is what costs time. Needs cuobjdump and nvdisasm: the
# development VM's CUDA has neither, the GPU machine's has both (5.6 MB; copy them back through $OUT
# once: run: cp /usr/local/cuda/bin/cuobjdump /usr/local/cuda/bin/nvdisasm $OUT/), found in
# $CUDA_TOOLS, /usr/local/cuda/bin or /work/.cache/cuda-bin. Exit 77 without them.
set -euo pipefail
file=${1:?usage: sass_loops.sh FILE [KERNEL_REGEX] [MAX]} re=${2:-.} most=${3:-1000}
cd "$(dirname "$0")/.."
source tools/device_ref.sh HEAD >/dev/null
tool() {
    local d
    for d in ${CUDA_TOOLS:-} /usr/local/cuda/bin /work/.cache/cuda-bin; do
        [ -x "$d/$1" ] && { echo "$d/$1"; return; }
    done
    echo "sass_loops: no $1 (see the top of $0)" >&2
    exit 77
}
cuobjdump=$(tool cuobjdump) nvdisasm=$(tool nvdisasm)
"$nvcc" "${dflags[@]}" -lineinfo -I. -c -o "$work/k.o" "device/$file.cu"
(cd "$work" && "$cuobjdump" -xelf all k.o >/dev/null)
"$nvdisasm" -g -c -sf "$work"/*.cubin >"$work/k.sass"
grep -o '^\.text\.[^:]*' "$work/k.sass" | cut -c7- | grep -E -- "$re" | while read -r k; do
    python3 tools/sass_loops.py "$work/k.sass" "$k" "$most"
    echo
done
