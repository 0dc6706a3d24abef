#!/bin/bash
# scale_session.sh - issue 13's gates on the GPU machine, end to end and without interaction, in
# about 9 minutes on an H200 (139 GB) with 128 GiB of host memory and a 64 GiB disk:
#   1. build (Release, sm_90, no MPI: `dpamr run` takes the serial writer) into build-scale/;
#   2. the disk: sequential write (dd from /dev/zero, conv=fdatasync) and read (the file's pages
#      dropped from the page cache first: dd iflag=nocache count=0; then a buffered read and an
#      iflag=direct read, REPS times each; the faster median is the read rate);
#   3. `dpamr run` of bench2d, bench3d and the scale deck (inputs/scale2d.inp, its level-0 mesh made
#      here with `dpamr mesh`) under /usr/bin/time -v (peak resident memory, wall time), then the
#      output flushed to the disk (timed: what the page cache held back) and dropped from the cache;
#   4. `dpamr check` of each output, cold, timed (its read rate = file bytes / check time), REPS
#      times (the median is the gate's: the issue asks for medians), each followed by the same file
#      read by dd, cold (reported beside the gate: the disk's rate for that file);
#   5. bench2d and bench3d also with the other variants (cpu, cdp): datasets byte-identical
#      (tests/h5compare.py, when python3 has h5py);
#   6. every gate of issue 13 with measured value, limit and pass/fail (gates.txt).
# Logs and the table go to $OUT (default out/); big files to $SCRATCH (default scale_tmp/ in the
# repository, on the disk being measured), removed at the end, also on failure or interruption.
# Settings (environment): VARIANT (hostlaunch), DD_GB (8), REPS (3: reads of the disk and checks), BUDGET_S (540: the scale run is skipped,
# saying why, when what is left cannot hold it), SCALE_DECK (inputs/scale2d.inp), SCALE_ARGS (extra
# key=value for the scale run), DECKS (bench2d bench3d), COMPARE (1), BUILD (1; 0: use build-scale/
# as it is), CMAKE_ARGS (extra CMake options, e.g. -DDPAMR_COMMIT=HASH), BIN (the dpamr to run;
# default build-scale/dpamr), KEEP (0; 1: the scale deck's file and
# $SCRATCH are left for what runs next, not removed). A dry run on a machine without a GPU:
# VARIANT=cpu DD_GB=1 SCALE_ARGS=max_level=6 BUILD=0 BIN=build/dpamr_serial bash tools/scale_session.sh
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
scratch=${SCRATCH:-$root/scale_tmp}
variant=${VARIANT:-hostlaunch}
dd_gb=${DD_GB:-8}
budget=${BUDGET_S:-540}
scale_deck=${SCALE_DECK:-inputs/scale2d.inp}
decks=${DECKS:-bench2d bench3d}
t_start=$(date +%s.%N)
bin=${BIN:-$root/build-scale/dpamr}
gates=$out/gates.txt

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
left() { awk -v a="$t_start" -v b="$(now)" -v t="$budget" 'BEGIN { printf "%d", t - (b - a) }'; }
say() { echo "[$(awk -v a="$t_start" -v b="$(now)" 'BEGIN { printf "%6.1f", b - a }') s] $*" | tee -a "$out/session.log"; }
calc() { awk "BEGIN { printf \"%.4g\", $1 }"; }
cleanup() { [ "${KEEP:-0}" = 1 ] || rm -rf "$scratch"; }
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

mkdir -p "$scratch"
: >"$out/session.log"
printf '%-34s %-9s %14s %14s  %s\n' gate deck measured limit result >"$gates"
gate() { # gate NAME DECK MEASURED LIMIT OP(le|ge) [NOTE]
    local res
    res=$(awk -v m="$3" -v l="$4" -v op="$5" 'BEGIN { if (m == "" || l == "") print "n/a";
          else if ((op == "le" && m + 0 <= l + 0) || (op == "ge" && m + 0 >= l + 0)) print "pass"; else print "FAIL" }')
    printf '%-34s %-9s %14s %14s  %s%s\n' "$1" "$2" "${3:--}" "${4:--}" "$res" "${6:+ ($6)}" >>"$gates"
}

# ---- 1. machine and build -------------------------------------------------------------------------
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,memory.free --format=csv 2>&1
    nproc
    free -g
    df -h "$scratch"
    git log --oneline -1
} >"$out/machine.txt" 2>&1
say "machine: $(head -3 "$out/machine.txt" | tail -1); $(nproc) cores; scratch $scratch ($(df -h --output=avail "$scratch" | tail -1 | tr -d ' ') free)"
if [ "${BUILD:-1}" = 1 ]; then
    if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
    say "build (build-scale/, Release, sm_90, no MPI)"
    { cmake -S . -B build-scale -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDPAMR_MPI=OFF ${CMAKE_ARGS:-} &&
        cmake --build build-scale -j "$(nproc)" --target dpamr; } >"$out/build.log" 2>&1 ||
        { tail -30 "$out/build.log"; say "build failed"; exit 1; }
fi
[ -x "$bin" ] || { say "no $bin"; exit 1; }
"$bin" --version >>"$out/machine.txt" 2>&1
if [ "$variant" != cpu ] && ! "$bin" gpu >>"$out/machine.txt" 2>&1; then
    say "no usable GPU: $(tail -1 "$out/machine.txt")"; exit 1
fi

# ---- 2. the disk ----------------------------------------------------------------------------------
ddf=$scratch/dd.tmp
count=$((dd_gb * 16)) # blocks of 64 MiB
say "disk write: $dd_gb x 16 x 64 MiB from /dev/zero, conv=fdatasync"
t0=$(now)
dd if=/dev/zero of="$ddf" bs=64M count=$count conv=fdatasync 2>"$out/dd_write.log"
tw=$(elapsed "$t0")
bytes=$(stat -c %s "$ddf")
write_rate=$(calc "$bytes / $tw / 1e9")
say "disk write: $(calc "$bytes / 1e9") GB in $tw s = $write_rate GB/s ($(tail -1 "$out/dd_write.log"))"
# median WORDS...: the median of numbers (the lower middle one of an even count)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# the read rate: the median of REPS reads of each kind (one read of the same file differs by up to
# 15% from the next on the H200 machines' disk: docs/results.md, "Session 18")
reps=${REPS:-3}
bufs=() dirs=()
for ((i = 0; i < reps; ++i)); do
    dd if="$ddf" iflag=nocache count=0 2>/dev/null # drop its (clean) pages from the page cache
    t0=$(now)
    dd if="$ddf" of=/dev/null bs=64M 2>>"$out/dd_read.log"
    bufs+=("$(calc "$bytes / $(elapsed "$t0") / 1e9")")
    t0=$(now)
    dd if="$ddf" of=/dev/null bs=64M iflag=direct 2>>"$out/dd_read_direct.log"
    dirs+=("$(calc "$bytes / $(elapsed "$t0") / 1e9")")
done
read_buf=$(median "${bufs[@]}")
read_dir=$(median "${dirs[@]}")
read_rate=$(awk -v a="$read_buf" -v b="$read_dir" 'BEGIN { print (a > b ? a : b) }')
say "disk read ($reps times each): buffered after dropping the cache ${bufs[*]} GB/s (median $read_buf), iflag=direct ${dirs[*]} (median $read_dir): read rate $read_rate GB/s"
rm -f "$ddf"
echo "write_GBps=$write_rate read_buffered_GBps=$read_buf read_direct_GBps=$read_dir" >"$out/disk.txt"

# ---- 3-4. runs and checks ---------------------------------------------------------------------------
# timed CMD...: run CMD under /usr/bin/time -v (python3's getrusage without it); sets wall (s) and
# rss (bytes, peak resident) and rc; CMD's output in $log
timed() {
    local tv=$scratch/time.txt
    local t0
    t0=$(now)
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -v -o "$tv" "$@" >"$log" 2>&1
        rc=$?
        rss=$(awk -F': ' '/Maximum resident set size/ { print $2 * 1024 }' "$tv")
    else
        python3 -c 'import resource, subprocess, sys
r = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.STDOUT)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024); sys.exit(r)' "$log" "$@" >"$tv"
        rc=$?
        rss=$(cat "$tv")
    fi
    wall=$(elapsed "$t0")
    cat "$tv" >>"$log" 2>/dev/null
}
# flush FILE: write its dirty pages to the disk (timed into flush) and drop it from the page cache
flush() {
    local t0
    t0=$(now)
    dd if=/dev/null of="$1" oflag=nocache conv=notrunc,fdatasync count=0 2>/dev/null
    flush=$(elapsed "$t0")
    dd if="$1" iflag=nocache count=0 2>/dev/null
}
has_h5py=0
python3 -c 'import h5py' 2>/dev/null && has_h5py=1

# one deck: NAME DECK [key=value...]
one_deck() {
    local name=$1 deck=$2
    shift 2
    local o=$scratch/$name.hdf
    log=$out/run_$name.log
    say "$name: dpamr run $deck variant=$variant $*"
    timed "$bin" run "$deck" variant="$variant" output="$o" "$@"
    if [ "$rc" -ne 0 ] || [ ! -f "$o" ]; then
        say "$name: run failed (exit $rc): $(grep -m1 'error' "$log")"
        gate "run succeeds" "$name" "$rc" 0 le "exit $rc"
        return
    fi
    local run_wall=$wall run_rss=$rss
    flush "$o"
    local fbytes tiles B nf dim cells
    fbytes=$(stat -c %s "$o")
    tiles=$(sed -n 's/^refined in .*: \([0-9]*\) tiles on .*/\1/p' "$log" | tail -1)
    dim=$(sed -n 's/^dpamr run .*variant=[^,]*, \([23]\)D, tile \([0-9]*\)^.*/\1/p' "$log" | head -1)
    B=$(sed -n 's/^dpamr run .*variant=[^,]*, [23]D, tile \([0-9]*\)^.*/\1/p' "$log" | head -1)
    nf=$(awk -F'=' '/^fields[ \t]*=/ { n = split($2, a, " "); print n }' "$deck" | tail -1)
    nf=${nf:-1}
    cells=$(awk -v t="$tiles" -v b="$B" -v d="$dim" 'BEGIN { printf "%.0f", t * b ^ d }')
    local field_bytes tree_bytes
    field_bytes=$(awk -v c="$cells" -v f="$nf" 'BEGIN { printf "%.0f", c * 4 * f }')
    tree_bytes=$(awk -v t="$tiles" 'BEGIN { printf "%.0f", t * 33 }')
    say "$name: $tiles tiles, $cells cells, fields $(calc "$field_bytes / 1e9") GB, file $(calc "$fbytes / 1e9") GB; run $run_wall s, peak RSS $(calc "$run_rss / 1e9") GB; flush after it $flush s"
    grep '^phases:' "$log" | sed "s/^/[$name] /" | tee -a "$out/session.log"
    # REPS cold checks (their median is the gate's), each followed by a cold dd of the same file (the
    # disk's rate for this file, reported beside the gate)
    local checks=() files=() t0 k crc=0
    for ((k = 0; k < reps; ++k)); do
        log=$out/check_$name.log
        [ "$k" -gt 0 ] && dd if="$o" iflag=nocache count=0 2>/dev/null
        timed "$bin" check "$o"
        [ "$rc" -ne 0 ] && crc=$rc
        checks+=("$(calc "$fbytes / $wall / 1e9")")
        say "$name: dpamr check $((k + 1)) of $reps exit $rc in $wall s (cold): ${checks[k]} GB/s, peak RSS $(calc "$rss / 1e9") GB"
        dd if="$o" iflag=nocache count=0 2>/dev/null
        t0=$(now)
        dd if="$o" of=/dev/null bs=64M 2>/dev/null
        files+=("$(calc "$fbytes / $(elapsed "$t0") / 1e9")")
        dd if="$o" iflag=nocache count=0 2>/dev/null
    done
    rc=$crc
    local check_rate file_rate
    check_rate=$(median "${checks[@]}")
    file_rate=$(median "${files[@]}")
    say "$name: checks ${checks[*]} GB/s (median $check_rate); dd of the file, cold: ${files[*]} GB/s (median $file_rate)"
    # the gates
    gate "file <= 1.05 x (fields + tree)" "$name" "$(calc "$fbytes / ($field_bytes + $tree_bytes)")" 1.05 le
    gate "run s <= 1.3 x file/write + 0.5" "$name" "$run_wall" "$(calc "1.3 * $fbytes / ($write_rate * 1e9) + 0.5")" le \
        "+ $flush s flush after it"
    [ "$name" = scale ] && gate "peak RSS <= 1.25 x field bytes" "$name" "$(calc "$run_rss / $field_bytes")" 1.25 le \
        "$(calc "$run_rss / 1e9") GB of $(calc "$field_bytes / 1e9") GB"
    gate "check GB/s >= 0.8 x read rate" "$name" "$check_rate" "$(calc "0.8 * $read_rate")" ge \
        "median of $reps; exit $rc; dd of the file $file_rate GB/s"
    # the other variants give the same datasets
    if [ "${COMPARE:-1}" = 1 ] && [ "$name" != scale ]; then
        for v in cpu cdp hostlaunch; do
            [ "$v" = "$variant" ] && continue
            log=$out/run_${name}_$v.log
            "$bin" run "$deck" variant="$v" output="$scratch/${name}_$v.hdf" "$@" >"$log" 2>&1 ||
                { gate "$v run succeeds" "$name" 1 0 le "$(grep -m1 error "$log")"; continue; }
            if [ $has_h5py = 1 ]; then
                # /dpamr/deck records each run's variant and output path: every other dataset must match
                if python3 tests/h5compare.py "$o" "$scratch/${name}_$v.hdf" --ignore /dpamr/deck >>"$log" 2>&1; then
                    gate "$v datasets identical to $variant" "$name" 1 1 ge
                else
                    gate "$v datasets identical to $variant" "$name" 0 1 ge "$(tail -1 "$log")"
                fi
            else
                gate "$v datasets identical to $variant" "$name" "" "" le "no h5py"
            fi
            rm -f "$scratch/${name}_$v.hdf"
        done
    fi
    [ "${KEEP:-0}" = 1 ] && [ "$name" = scale ] || rm -f "$o"
}

for name in $decks; do one_deck "$name" "inputs/$name.inp"; done

# the scale deck: its level-0 mesh made here; skipped (saying why) when the budget, the disk or the
# host cannot hold it
sname=scale
smesh=$scratch/$sname.mesh.hdf
log=$out/mesh_$sname.log
"$bin" mesh "$scale_deck" mesh_file="$smesh" ${SCALE_ARGS:-} >"$log" 2>&1 || { say "dpamr mesh $scale_deck failed"; cat "$log"; }
est_gb=18.6 # inputs/scale2d.inp: 17.6M tiles x (1024 + 33) bytes
case " ${SCALE_ARGS:-} " in *" max_level="*) est_gb=1 ;; esac
need_s=$(awk -v g="$est_gb" -v w="$write_rate" -v r="$read_rate" 'BEGIN { printf "%d", 15 + 1.5 * g / w + g / r + g / 0.6 }')
avail_gb=$(df -B1 --output=avail "$scratch" | tail -1 | awk '{ printf "%.1f", $1 / 1e9 }')
mem_gb=$(awk '/MemAvailable/ { printf "%.1f", $2 * 1024 / 1e9 }' /proc/meminfo)
why=""
[ -f "$smesh" ] || why="no level-0 mesh"
[ -z "$why" ] && [ "$(left)" -lt "$need_s" ] && why="$(left) s left of BUDGET_S=$budget, the run and check need about $need_s s"
[ -z "$why" ] && awk -v a="$avail_gb" -v g="$est_gb" 'BEGIN { exit !(a < 1.1 * g + 1) }' &&
    why="the disk has $avail_gb GB free, the file needs about $est_gb GB"
[ -z "$why" ] && awk -v a="$mem_gb" -v g="$est_gb" 'BEGIN { exit !(a < 1.3 * g) }' &&
    why="the host has $mem_gb GB available, the run holds about $est_gb GB"
if [ -n "$why" ]; then
    say "scale deck skipped: $why"
    gate "scale run" "$sname" "skipped" "" le "$why"
else
    one_deck "$sname" "$scale_deck" mesh_file="$smesh" ${SCALE_ARGS:-}
fi

say "done in $(elapsed "$t_start") s; disk write $write_rate GB/s, read $read_rate GB/s (same session)"
echo
cat "$gates" | tee -a "$out/session.log"
grep -q FAIL "$gates" && exit 2
exit 0
