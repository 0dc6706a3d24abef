#!/bin/bash
# ptx_diff.sh [REF_COMMIT] - does a change of the shared host/device code (src/core.h, src/mesh.h, ...)
# change what the GPU runs? Compiles every device/*.cu of REF_COMMIT (default HEAD) and of the working
# tree to PTX for sm_90 with the build's device flags, drops what names the source (.file, .loc,
# comments, the per-file hash in internal names) and prints the differences per file. No GPU needed:
# for sessions without the device machine. Identical PTX means identical device code; a difference
# still has to run on the H200 (docs/testing.md).
ref=${1:-HEAD}
source "$(dirname "$0")/device_ref.sh" "$ref"
mkdir -p "$work/ref/ptx" "$work/new"
ptx() { # ptx SRC_TREE OUT_DIR
    local f
    for f in "$1"/device/*.cu; do
        "$nvcc" "${dflags[@]}" -I"$1" -ptx \
            -o "$2/$(basename "$f" .cu).ptx" "$f"
    done
}
norm() {
    sed -E 's/INTERNAL_[0-9a-f]{8}/INTERNAL_X/g; s/__[0-9a-f]{8}_([0-9]+_)/__X_\1/g; /^\s*\.file/d; /^\s*\.loc/d; /^\s*\/\//d' "$1"
}
ptx "$work/ref/src" "$work/ref/ptx"
ptx . "$work/new"
status=0
for f in "$work"/ref/ptx/*.ptx; do
    b=$(basename "$f")
    if [ ! -f "$work/new/$b" ]; then echo "$b: not in the working tree"; status=1; continue; fi
    if diff -q <(norm "$f") <(norm "$work/new/$b") >/dev/null; then
        echo "$b: same"
    else
        echo "$b: $(diff <(norm "$f") <(norm "$work/new/$b") | grep -c '^[<>]') lines differ"
        diff <(norm "$f") <(norm "$work/new/$b") | head -${PTX_DIFF_LINES:-20} || true
        status=1
    fi
done
for f in "$work"/new/*.ptx; do [ -f "$work/ref/ptx/$(basename "$f")" ] || { echo "$(basename "$f"): new"; status=1; }; done
exit $status
