#!/bin/bash
# quick_each.sh PATCH... - tools/exp/quick_ab.sh once per patch, in one device call: B = this tree with
# that patch alone, A = this tree, each answered apart (about 130 s a patch on a started machine;
# a call's start costs more than that, and often fails). Each patch's quick.txt, table.txt and
# logs.tgz go under $OUT/NAME/ (the device tool brings back 8 files: two patches a call, three with
# NO_LOGS=1, which leaves the logs out). The patch is taken back out of the tree after its run. The call:
#   run: DPAMR_COMMIT=<hash> bash tools/exp/quick_each.sh tools/exp/4-*.patch tools/exp/8-*.patch
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:?the device tool sets OUT}
for p in "$@"; do
    n=$(basename "$p" .patch)
    mkdir -p "$out/$n"
    OUT="$out/$n" bash tools/exp/quick_ab.sh "$p"
    echo "$n: quick_ab exit $?"
    [ "${NO_LOGS:-0}" = 1 ] && rm -f "$out/$n/logs.tgz"
    # take the patch back out (quick_ab applied it to this tree) before the next one
    git apply -R "$p" 2>/dev/null || patch -R -p1 -s <"$p" || { echo "quick_each: could not take $p back out"; exit 1; }
done
