#!/bin/bash
# restart.sh DPAMR DECK WORKDIR - a written hierarchy loads back as a restart mesh:
# refining to level 3 and then continuing to max_level gives the same datasets as one run;
# loading a finished file and writing it again (nothing left to refine) gives identical datasets.
set -euo pipefail
dpamr=$1 deck=$2 work=$3
source "$(dirname "$0")/lib.sh"
fresh_dir "$work"
"$dpamr" run "$deck" variant=cpu output="$work/direct.hdf"
"$dpamr" run "$deck" variant=cpu max_level=3 output="$work/part.hdf"
"$dpamr" run "$deck" variant=cpu mesh_file="$work/part.hdf" output="$work/restart.hdf"
h5cmp "$work/direct.hdf" "$work/restart.hdf" --ignore /dpamr/deck
"$dpamr" run "$deck" variant=cpu mesh_file="$work/direct.hdf" output="$work/again.hdf"
h5cmp "$work/direct.hdf" "$work/again.hdf" --ignore /dpamr/deck
"$dpamr" check "$work/restart.hdf"
echo "restart OK"
