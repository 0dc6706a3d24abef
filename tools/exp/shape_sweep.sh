#!/bin/bash
# shape_sweep.sh [SHAPES] - one device call: regridStep's block shape against the regrid time per step
# (issue 15: cdp's rebuild is slower than hostlaunch's on the large levels, and host-launched it is as
# slow on cdp's shape, 1024 threads in four teams). STALE since session 36: only regridStep's instances
# of RG_THREADS_CDP threads chain (device graph launch), so cdp at 768x1 would stop after level 0
# (caught by the byte gate, not by dpamr) and hostlaunch at 1024x1 fails to launch; the patch needs an
# explicit CHAIN template parameter before this runs again. Applies tools/exp/2-diag-rg-shape.patch to the
# device machine's copy (DPAMR_DIAG_RG picks the shape of either engine), builds dpamr for sm_90,
# then benches movingbench2d (4 steps, pdl on and off, every variant gated byte-identical to cpu) at
# every shape of SHAPES (default "256x4 256x3 768x1 1024x1"; threads x blocks per SM compiled for,
# teams of 256; cdp takes only the shapes of one block per SM and keeps its own for the others: its
# level grids are a wave of resident blocks) in two rounds, and prints per shape and variant the regrid ms per step (median of the
# rounds' medians) and the rebuild's per-level medians. With PROFILE=1 after that, Nsight Compute on
# hostlaunch's regridStep grids of one step at 256x4 and 1024x1. Output under $OUT: sweep.txt (the
# table), logs.tgz (the benches' logs and JSON, the profiles). The call, from the repository root:
#   run: bash tools/exp/shape_sweep.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:?the device tool sets OUT}
shapes=${1:-256x4 256x3 768x1 1024x1}
work=$(mktemp -d)
nvidia-smi >"$out/machine.txt" 2>&1
git apply tools/exp/2-diag-rg-shape.patch 2>>"$out/machine.txt" ||
    patch -p1 --forward -s <tools/exp/2-diag-rg-shape.patch >>"$out/machine.txt" 2>&1 ||
    { echo "shape_sweep: the patch does not apply" | tee -a "$out/machine.txt"; exit 1; }
rm -rf build-sweep
t0=$(date +%s)
{ cmake -S . -B build-sweep -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDPAMR_MPI=OFF \
    -DDPAMR_COMMIT="${DPAMR_COMMIT:-tree}+shape" && cmake --build build-sweep -j16 --target dpamr; } >"$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log" | tee -a "$out/machine.txt"; tar czf "$out/logs.tgz" -C "$work" .; exit 1; }
echo "build: $(($(date +%s) - t0)) s" >>"$out/machine.txt"
deck=inputs/movingbench2d.inp
for round in 1 2; do
    for s in $shapes; do
        t1=$(date +%s)
        DPAMR_DIAG_RG=$s timeout -k 5 100 ./build-sweep/dpamr bench "$deck" steps=4 bench_repeats=1 bench_cpu=off \
            bench_out="$work/${s}_$round" >"$work/${s}_$round.log" 2>&1 ||
            { echo "shape $s round $round failed:"; tail -5 "$work/${s}_$round.log"; } >>"$out/machine.txt"
        echo "shape $s round $round: $(($(date +%s) - t1)) s" >>"$out/machine.txt"
    done
done
python3 - "$work" $shapes >"$out/sweep.txt" 2>&1 <<'EOF'
import json, statistics, sys, os
work, shapes = sys.argv[1], sys.argv[2:]
print('movingbench2d, 4 steps: regrid ms per step (median of each round\'s median over the steps), per round;'
      ' then the rebuild\'s per-level medians (ms) of round 1')
for s in shapes:
    per, lev = {}, {}
    for r in (1, 2):
        try:
            d = json.load(open(f'{work}/{s}_{r}.json'))
        except (OSError, ValueError) as e:
            print(f'{s} round {r}: no JSON ({e})')
            continue
        got = {}
        for row in d['rows']:
            got.setdefault(f"{row['variant']} pdl={row['pdl']}", []).extend(row['regrid_samples_ms'])
        for k, v in got.items():
            per.setdefault(k, []).append(statistics.median(v))
        if r == 1:
            for l in d.get('level_ms', []):
                lev[f"{l['variant']} pdl={l['pdl']}"] = l['median_ms']
    for k, v in per.items():
        if k.startswith('cpu'):
            continue
        print(f'{s:7s} {k:18s} ' + ' '.join(f'{x:.3f}' for x in v) + f'  median {statistics.median(v):.3f}')
        if k in lev:
            print(f'{"":7s} {"  levels":18s} ' + ' '.join('-' if x is None else f'{x:.4f}' for x in lev[k]))
EOF
cat "$out/sweep.txt"
if [ "${PROFILE:-0}" = 1 ]; then
    for s in 256x4 1024x1; do
        DPAMR_DIAG_RG=$s KERNELS=regridStep ARGS=steps=1 timeout -k 5 120 \
            bash tools/gpu_profile.sh build-sweep/dpamr "$deck" "$work/prof_$s" hostlaunch >>"$out/machine.txt" 2>&1
    done
fi
tar czf "$out/logs.tgz" -C "$work" . 2>/dev/null
rm -rf "$work"
