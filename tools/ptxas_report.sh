#!/bin/bash
# ptxas_report.sh [REF_COMMIT] - what ptxas makes of every kernel, for a change of device code made
# without the GPU machine: compiles every device/*.cu of REF_COMMIT (default HEAD) and of the working
# tree for sm_90 with the build's device flags (-Xptxas -v) and prints, per kernel, registers, spill
# stores and loads and stack frame of both, and what changed (with -rdc ptxas does not report shared
# memory: it is laid out at link time). More registers
# can lower a kernel's occupancy (its __launch_bounds__ caps them; past the cap ptxas spills), spills
# add local-memory traffic: the first things to look at before the H200 measures the change. No GPU
# needed. Exit 0; the table is the output. FILES="engine_host regrid_gpu" limits it to those files.
ref=${1:-HEAD}
source "$(dirname "$0")/device_ref.sh" "$ref"
report() { # report SRC_TREE OUT: one line per kernel, "file kernel regs spill_st spill_ld stack"
    local f
    for f in "$1"/device/*.cu; do
        [ -z "${FILES:-}" ] || [[ " $FILES " == *" $(basename "$f" .cu) "* ]] || continue
        "$nvcc" "${dflags[@]}" -I"$1" -Xptxas -v \
            -c -o "$work/o.o" "$f" 2>&1 | awk -v file="$(basename "$f" .cu)" '
            /Compiling entry function/ { match($0, /'"'"'[^'"'"']*'"'"'/); k = substr($0, RSTART + 1, RLENGTH - 2) }
            /bytes stack frame/ { st = $1; ss = $5; sl = $9 }
            /Used [0-9]+ registers/ && k != "" {
                match($0, /Used [0-9]+ registers/); r = substr($0, RSTART + 5, RLENGTH - 15)
                print file, k, r, ss, sl, st; k = "" }'
    done >"$2"
}
report "$work/ref/src" "$work/ref.txt"
report . "$work/new.txt"
python3 - "$work/ref.txt" "$work/new.txt" "$ref" <<'EOF'
import subprocess, sys
def load(path):
    rows = {}
    for line in open(path):
        f, k, *v = line.split()
        rows[(f, k)] = v
    return rows
ref, new = load(sys.argv[1]), load(sys.argv[2])
names = sorted(set(ref) | set(new))
dem = subprocess.run(['c++filt'], input='\n'.join(k for _, k in names), capture_output=True, text=True).stdout.split('\n')
print(f'ptxas (sm_90): {sys.argv[3]} -> working tree; registers, spill stores/loads (bytes), stack frame (bytes)')
print(f'{"file":12s} {"kernel":60s} {"ref":>17s} {"tree":>17s}')
fmt = lambda v: '-' if v is None else f'{v[0]:>3s} r {v[1]:>4s}/{v[2]:<4s} {v[3]:>4s}'
changed = 0
for (f, k), d in zip(names, dem):
    a, b = ref.get((f, k)), new.get((f, k))
    mark = '' if a == b else ' *'
    changed += a != b
    short = d.split('(')[0][:60]
    print(f'{f:12s} {short:60s} {fmt(a):>17s} {fmt(b):>17s}{mark}')
print(f'{changed} of {len(names)} kernels changed (*)')
EOF
