#!/bin/bash
# next.sh [STEPS] - the next device session's calls (tools/exp/README.md, "Next"), one step or several
# per call, each under its own time limit so that a call cut at its limit still brings back what ran.
# Steps (default: launch):
#   steps  test_teams and test_chain, then gpu_steps on this tree alone (a non-MPI Release build), its output streamed to
#          $OUT/gpu_steps.txt, so a cut run still shows which parts passed (STEPS_LIMIT, default 420 s)
#   label  the rest of the gpu label (gpu_session.sh without benches, gpu_steps and gpu_validate_bench
#          left out; LABEL_LIMIT, default 400 s): $OUT/label: ctest.log, build.log, machine.txt, session.txt
#   small  the small levels: single runs' device timelines (trace=) of bench2d and bench3d, both engines,
#          and Nsight Compute on their host-launched refineStep, flagTiles and initLevelScans grids, with
#          the source page of bench3d's first hostlaunch step: $OUT/small.tgz
#   launch tools/exp/launch_cost.cu and graph_launch_cost.cu built and run: $OUT/launch_cost.txt (about 30 s with the two builds;
#          session 38: the early-launched graph chain, f&f or sibling, closes the gap: 0.9-1.6 us against 3.3-4.5)
#   resid  tools/cdp_residency.cu built and run: blocks per SM of host-launched, device-launched and
#          device-graph-launched grids: $OUT/residency.txt (about 20 s; session 37: a device graph
#          tail launch gets 4 blocks of 256 per SM, as a host launch; session 38 added the fire-and-
#          forget graph launch of cdp's step_chain: does it too?)
#   early  quick_ab.sh: this tree (cdp's chains launch each step early, fire and forget, its blocks
#          waiting for the step before: step_chain, session 38) against it with the chains of 1f6c029
#          (each step a tail launch of the running graph; A_DIFF tools/exp/base/graph-tail-chain.diff):
#          $OUT/early (quick.txt, table.txt, logs.tgz; about 130-200 s)
#   record the figures of record (README "Now"): this tree against base/roots-copies-nested-chain.diff, quick_ab's
#          default gates and decks: $OUT/rec (quick.txt, table.txt, logs.tgz; at most RECORD_LIMIT, default 260 s)
#   twice  where a flagged level's time goes (issue 12): quick_ab of this tree + 47-diag-flag-twice.patch (each flag pass
#          run a second time, the same flags written: a level grows by what its flags cost; ptxas: no spills added)
#          into $OUT/fl2, then + 48-diag-fill-twice.patch (each fill pass a second time: what the fill costs, every
#          level; ptxas: it adds 8-60 bytes of spills to some instances, so an upper bound) into $OUT/fi2; gates
#          default and deep2d, decks bench2d and bench3d (TWICE_LIMIT each, default 170 s)
#   uniform UNIFORM_PATCHES (required: patches of the model fill) against this tree, quick_ab on bench3d,
#          movingbench2d (gaussians only) and bench2d, the model decks as gates against cpu:
#          $OUT/${UNIFORM_NAME:-uni} (quick.txt, table.txt, logs.tgz; at most UNIFORM_LIMIT, default 270 s).
#          Session 49 (H100): patch 51 bench3d 0.960-0.963 (hostlaunch), movingbench2d 1.015-1.021 (regridStep's
#          model instances spilled more; its pair-fill form landed), 49 1.12 and 1.21 (removed)
#   probe  52-flag-octant-probe.patch (refineStep's flag pass probes every octant first and reads only the
#          octants left unflagged) against this tree: quick_ab on bench2d and bench3d, gates against cpu on
#          prolong and model decks, tile_size 4 (the old path), 8, 16 and 32: $OUT/probe (quick.txt,
#          table.txt, logs.tgz; at most PROBE_LIMIT, default 270 s)
#   race   test_teams -s under compute-sanitizer racecheck, synccheck and memcheck, each under its own
#          limit (RACE_LIMIT, default 150 s), a line per configuration as it ends and the time each tool
#          took: $OUT/race.txt (session 37: gpu_racecheck did not finish; slow, or a hang under the tool?)
#   deep   dpamr bench on deep2d and deep3d (bench_cpu=off, 5 repeats, two rounds): $OUT/deep.txt, the
#          small levels' cost per variant (tests/decks: their level-0 meshes made first)
#   mem    the DRAM and L2 traffic of every hostlaunch level step of bench2d and bench3d (gpu_profile.sh
#          METRICS=...), with the tile counts per level from a plain run: $OUT/mem.tgz (issue 12: how many
#          bytes a level moves against the new cells and metadata the floor counts)
#   outside the regrid's rebuild outside its levels, per variant (issue 15: cdp's 19 us more than hostlaunch's
#          PDL, H200, session 39): movingbench2d with 25-diag-rebuild-outside.patch (device stamps at the
#          probes and kernels before the first level and after the last), the median of every interval
#          per variant: $OUT/outside.txt (about 60 s; session 39, H100: cdp's chain ends 11 us after its
#          last level against hostlaunch's 2.6, level 0 starts 4 us later; OUTSIDE_PATCHES: patches
#          applied after the diagnostic one)
#   prof   Nsight Compute on hostlaunch refineSteps with the SASS source page (gpu_profile.sh SOURCE=1):
#          PROF_DECK (default bench3d), one launch per entry of PROF_SKIPS (default 5: bench3d's finest;
#          refineStep k makes level k + 1), with whatever patches PROF_PATCHES names applied
# At most 8 files come back from $OUT: steps 1, label 4, small 1, launch 1, resid 1, early 3, record 3, twice 6, uniform 3, probe 3, race 1, deep 1, mem 1, prof 1,
# outside 1 (tarballs).
# The call, from the repository root: run: DPAMR_COMMIT=<hash> bash tools/exp/next.sh launch
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:?the device tool sets OUT} c=${DPAMR_COMMIT:-tree}
[ $# -gt 0 ] || set -- launch
cfg="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDPAMR_MPI=OFF -DDPAMR_COMMIT=$c"
unapply() { # unapply PATCH...: take back patches quick_ab applied to this tree, last first (not git checkout: the
    # device copy's .git need not be this tree's commit)
    local i
    for ((i = $#; i > 0; --i)); do git apply -R "${!i}" || exit 1; done
}
build() { # build DIR: dpamr alone
    [ -x "$1/dpamr" ] || { cmake -S . -B "$1" $cfg >"$1.log" 2>&1 && cmake --build "$1" -j16 --target dpamr >>"$1.log" 2>&1; } ||
        { tail -20 "$1.log"; return 1; }
}
patch_ab() { # patch_ab NAME LIMIT GATES DECKS PATCH...: quick_ab of this tree + PATCH... (B) against it (A) into
    # $out/NAME (quick.txt, table.txt, logs.tgz), the patches taken back after
    local name=$1 limit=$2 gates=$3 decks=$4
    shift 4
    mkdir -p "$out/$name"
    OUT=$out/$name DPAMR_COMMIT=$c QA_GATES="$gates" QA_DECKS="$decks" timeout "$limit" bash tools/exp/quick_ab.sh "$@"
    unapply "$@"
}
diag_build() { # diag_build COPY BUILD PATCH...: this tree copied to COPY with PATCH... applied, dpamr built in BUILD
    local d=$1 b=$2 p
    shift 2
    rm -rf "$d" && mkdir "$d" && tar --exclude="./$d" --exclude='./build*' --exclude='./ab_ref' --exclude='./.git' -cf - . |
        tar -x -C "$d" || return 1
    for p in "$@"; do patch -d "$d" -p1 --forward -s <"$p" || return 1; done
    (cmake -S "$d" -B "$b" $cfg && cmake --build "$b" -j16 --target dpamr) >"$b.log" 2>&1 || { tail -20 "$b.log"; return 1; }
}
diag_medians() { # diag_medians FILE TITLE: per variant, the median of every field of FILE's lines "diag VARIANT: key value ..."
    python3 - "$1" "$2" <<'PY'
import sys, statistics as st, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if not line.startswith("diag "): continue
    head, rest = line[5:].split(":", 1)
    t = rest.split()
    rows[head].append({t[i]: float(t[i + 1]) for i in range(0, len(t), 2)})
print("\n" + sys.argv[2])
keys = list(next(iter(rows.values()))[0].keys()) if rows else []
print("%-22s %3s " % ("variant", "n") + " ".join("%11s" % k for k in keys))
for h, r in rows.items():
    print("%-22s %3d " % (h, len(r)) + " ".join("%11.2f" % st.median(x[k] for x in r) for k in keys))
PY
}
# the model fill's A/Bs (uniform): gates against cpu (model decks, and default), then bench3d (the model's
# arithmetic), movingbench2d (gaussians only) and bench2d (prolong: the model only on its first level)
model_gates="inputs/default.inp tests/decks/deep3d.inp tests/decks/objects16.inp tests/decks/objects11.inp inputs/blob3d.inp"
model_gates="$model_gates inputs/sphere3d.inp inputs/moving3d.inp:steps=4 tests/decks/skew2d.inp:steps=4"
model_decks="inputs/bench3d.inp:bench_repeats=5,bench_cpu=off inputs/movingbench2d.inp:steps=6,bench_repeats=1,bench_cpu=off"
model_decks="$model_decks inputs/bench2d.inp:bench_repeats=5,bench_cpu=off"
for step in "$@"; do
    case $step in
    steps)
        { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date; } >"$out/gpu_steps.txt"
        # first test_teams (session 32 added its one-round look-back cases after its last call)
        { nvcc -std=c++17 -arch=sm_90 -I. -diag-suppress=20044 tests/test_teams.cu -o /tmp/test_teams && /tmp/test_teams -q;
            echo "test_teams exit $?"; } >>"$out/gpu_steps.txt" 2>&1
        # cdp's early step chain on its own (session 38; linked with dpamr's device library)
        build build-next && { cmake --build build-next -j16 --target test_chain >>build-next.log 2>&1 &&
            build-next/tests/test_chain; echo "test_chain exit $?"; } >>"$out/gpu_steps.txt" 2>&1
        build build-next && timeout "${STEPS_LIMIT:-420}" bash tests/gpu_steps.sh "$PWD/build-next/dpamr" "$PWD" \
            "$PWD/build-next/gs" >>"$out/gpu_steps.txt" 2>&1
        echo "gpu_steps exit $? ($(date))" >>"$out/gpu_steps.txt"
        ;;
    label)
        mkdir -p "$out/label"
        OUT=$out/label TESTS=1 CTEST_EXCLUDE='gpu_steps|gpu_validate_bench' timeout "${LABEL_LIMIT:-400}" \
            bash tools/gpu_session.sh >"$out/label/session.txt" 2>&1
        echo "label exit $?" >>"$out/label/session.txt"
        ;;
    small)
        # the small levels: what a level step of a few hundred tiles is made of (issue 12's 8 us) and why
        # cdp level's host-launched first step takes 28-41 us against hostlaunch's 10-16 (session 33)
        build build-next || exit 1
        mkdir -p "$out/small"
        # the device timeline of single runs (kernel starts, ends and gaps), modules loaded eagerly so that
        # the first launch does not load them
        for dk in bench2d bench3d; do
            for v in hostlaunch cdp; do
                for i in 1 2 3; do
                    CUDA_MODULE_LOADING=EAGER ./build-next/dpamr run inputs/$dk.inp variant=$v cdp_grain=level pdl=on \
                        verbosity=quiet output="$PWD/build-next/small.hdf" trace="$out/small/trace_${dk}_${v}_$i.json" \
                        >>"$out/small/runs.txt" 2>&1 || echo "run $dk $v $i failed" >>"$out/small/runs.txt"
                    rm -f build-next/small.hdf
                done
            done
        done
        # Nsight Compute: every host-launched refineStep and flagTiles of both engines (cdp's first step's
        # duration there includes the steps it launches: session 34), then the source page of bench3d's
        # first hostlaunch step
        KERNELS='refineStep|flagTiles|initLevelScans' timeout 150 bash tools/gpu_profile.sh build-next/dpamr \
            inputs/bench3d.inp "$out/small" hostlaunch cdp
        KERNELS='refineStep|flagTiles|initLevelScans' timeout 100 bash tools/gpu_profile.sh build-next/dpamr \
            inputs/bench2d.inp "$out/small" hostlaunch cdp
        SOURCE=1 LAUNCH_SKIP=0 timeout 100 bash tools/gpu_profile.sh build-next/dpamr inputs/bench3d.inp \
            "$out/small" hostlaunch
        tar czf "$out/small.tgz" -C "$out" small && rm -rf "$out/small"
        ;;
    launch)
        # what a device-side launch costs (tools/exp/launch_cost.cu): idle, beside a memory stream, and a
        # launch of the running kernel itself against one of another function
        mkdir -p build-next && nvcc -arch=sm_90 -rdc=true -O2 tools/exp/launch_cost.cu -o build-next/launch_cost -lcudadevrt &&
            ./build-next/launch_cost >"$out/launch_cost.txt" 2>&1
        # and a chain of self-launching grids as kernel tail launches against device graph launches
        nvcc -arch=sm_90 -rdc=true -O2 tools/exp/graph_launch_cost.cu -o build-next/graph_launch_cost -lcudadevrt &&
            ./build-next/graph_launch_cost >>"$out/launch_cost.txt" 2>&1
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$out/launch_cost.txt"
        ;;
    resid)
        mkdir -p build-next && nvcc -arch=sm_90 -rdc=true -O3 tools/cdp_residency.cu -o build-next/cdp_residency -lcudadevrt &&
            ./build-next/cdp_residency >"$out/residency.txt" 2>&1
        nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$out/residency.txt"
        ;;
    early)
        # A = this tree with the tail-launched chains back (tools/exp/base/graph-tail-chain.diff: 1f6c029),
        # B = this tree; no patches, so the tree stays as it is for later steps
        mkdir -p "$out/early"
        OUT=$out/early DPAMR_COMMIT=$c A_DIFF=tools/exp/base/graph-tail-chain.diff timeout "${EARLY_LIMIT:-280}" \
            bash tools/exp/quick_ab.sh none
        ;;
    record)
        # the figures of record: this tree (B) against the device code of 4ec5aee (A), every gate
        # compared with cpu, movingbench2d, bench3d and bench2d timed A, B, A, B (RECORD_LIMIT, default 260 s)
        mkdir -p "$out/rec"
        OUT=$out/rec DPAMR_COMMIT=$c A_DIFF=tools/exp/base/roots-copies-nested-chain.diff timeout "${RECORD_LIMIT:-260}" \
            bash tools/exp/quick_ab.sh none
        ;;
    twice)
        k=0 # the second keeps the first's A build (quick_ab's QA_KEEP_A)
        for pt in fl2:47-diag-flag-twice fi2:48-diag-fill-twice; do
            QA_KEEP_A=$k patch_ab "${pt%%:*}" "${TWICE_LIMIT:-170}" "inputs/default.inp tests/decks/deep2d.inp" \
                "inputs/bench2d.inp:bench_repeats=5,bench_cpu=off inputs/bench3d.inp:bench_repeats=5,bench_cpu=off" \
                "tools/exp/${pt#*:}.patch"
            k=1
        done
        ;;
    uniform)
        [ -n "${UNIFORM_PATCHES:-}" ] || { echo "next.sh uniform: set UNIFORM_PATCHES (no model patch waits)"; exit 2; }
        patch_ab "${UNIFORM_NAME:-uni}" "${UNIFORM_LIMIT:-270}" "$model_gates" "$model_decks" $UNIFORM_PATCHES
        ;;
    probe)
        patch_ab probe "${PROBE_LIMIT:-270}" "inputs/default.inp inputs/model2d.inp tests/decks/deep2d.inp
            tests/decks/deep3d.inp tests/decks/tile32_3d.inp tests/decks/objects11.inp inputs/sphere3d.inp inputs/blob3d.inp" \
            "inputs/bench2d.inp:bench_repeats=5,bench_cpu=off inputs/bench3d.inp:bench_repeats=5,bench_cpu=off" \
            tools/exp/52-flag-octant-probe.patch
        ;;
    race)
        san=/usr/local/cuda/bin/compute-sanitizer
        nvcc -std=c++17 -arch=sm_90 -I. -lineinfo -diag-suppress=20044 tests/test_teams.cu -o /tmp/test_teams >"$out/race.txt" 2>&1 || exit 1
        for tool in "racecheck --racecheck-report all" synccheck memcheck; do
            t0=$(date +%s)
            echo "== ${tool%% *}" >>"$out/race.txt"
            timeout "${RACE_LIMIT:-150}" $san --tool $tool --error-exitcode 99 --print-limit 20 /tmp/test_teams -s >>"$out/race.txt" 2>&1
            echo "== ${tool%% *} exit $? after $(($(date +%s) - t0)) s" >>"$out/race.txt"
        done
        ;;
    deep)
        build build-next || exit 1
        for r in 1 2; do
            for dk in deep2d deep3d; do
                m=$PWD/build-next/$dk.mesh.hdf
                [ -e "$m" ] || ./build-next/dpamr mesh tests/decks/$dk.inp mesh_file="$m" >/dev/null
                echo "== round $r $dk" >>"$out/deep.txt"
                timeout 90 ./build-next/dpamr bench tests/decks/$dk.inp mesh_file="$m" bench_cpu=off bench_repeats=5 \
                    bench_groups=64 bench_out="$PWD/build-next/bo_$dk" >>"$out/deep.txt" 2>&1
            done
        done
        ;;
    mem)
        build build-next || exit 1
        mkdir -p "$out/mem"
        m=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
        m=$m,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
        m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
        m=$m,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
        m=$m,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
        for dk in bench2d bench3d; do
            ./build-next/dpamr run inputs/$dk.inp variant=hostlaunch output="$PWD/build-next/mem.hdf" \
                >"$out/mem/run_$dk.txt" 2>&1
            rm -f build-next/mem.hdf
            METRICS=$m KERNELS='refineStep|flagTiles|initLevelScans' timeout 150 bash tools/gpu_profile.sh \
                build-next/dpamr inputs/$dk.inp "$out/mem" hostlaunch
            # the copy bandwidth dpamr bench measured on each card (docs/results.md: H200 4.2 TB/s, H100 2.98)
            case $(nvidia-smi --query-gpu=name --format=csv,noheader) in *H200*) g=4200 ;; *) g=2980 ;; esac
            python3 tools/exp/mem_levels.py "$out/mem/run_$dk.txt" "$out/mem/ncu_${dk}_hostlaunch.csv" --copy-gbps $g \
                >"$out/mem/levels_$dk.txt" 2>&1
        done
        tar czf "$out/mem.tgz" -C "$out" mem && rm -rf "$out/mem"
        ;;
    outside)
        diag_build diag_ref build-diag tools/exp/25-diag-rebuild-outside.patch ${OUTSIDE_PATCHES:-} || exit 1
        DPAMR_DIAG=1 ./build-diag/dpamr bench inputs/movingbench2d.inp steps=8 bench_repeats=1 bench_cpu=off \
            bench_out=build-diag/ob >"$out/outside.txt" 2>build-diag/diag.txt
        diag_medians build-diag/diag.txt "rebuild outside its levels, us (median over every rebuild of the bench; device stamps):" \
            >>"$out/outside.txt"
        ;;
    prof)
        for p in ${PROF_PATCHES:-}; do git apply "$p" || exit 1; done
        rm -rf build-prof && build build-prof && mkdir -p "$out/prof" || exit 1
        for skip in ${PROF_SKIPS:-5}; do
            mkdir -p "$out/prof/skip$skip"
            SOURCE=1 LAUNCH_SKIP=$skip timeout 120 bash tools/gpu_profile.sh build-prof/dpamr inputs/${PROF_DECK:-bench3d}.inp \
                "$out/prof/skip$skip" hostlaunch
        done
        tar czf "$out/prof.tgz" -C "$out" prof && rm -rf "$out/prof"
        unapply ${PROF_PATCHES:-}
        ;;
    *) echo "next.sh: unknown step $step (steps, label, small, launch, resid, early, record, twice, uniform, race, deep, mem, prof, outside)"; exit 2 ;;
    esac
done
