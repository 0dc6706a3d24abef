#!/bin/bash
# check_io.sh - how `dpamr check` reads on the GPU machine's disk, in one call (about 5 minutes):
#   1. build dpamr (Release, sm_90, no MPI) into build-io/ (BUILD=0: use it as it is);
#   2. the disk: a DD_GB file written (dd, conv=fdatasync), then read cold in several ways: dd
#      buffered and iflag=direct (bs=64M), and P dd processes at once on slices of it, buffered and
#      direct (the rate the disk gives to several requests in flight), three times; the block
#      queue's settings;
#   3. bench2d and bench3d written by `dpamr run` (VARIANT, default hostlaunch), flushed; with REF
#      (a source tree, as tools/gpu_ab.sh's ab_ref) also by that tree's dpamr (build-io-ref/);
#   4. ROUNDS rounds: each deck's file read cold by dd, then checked cold once with each setting of
#      CONFIGS, words BIN@FILE:ENV: BIN and FILE `new` (this tree's dpamr, its file) or `ref`, ENV
#      comma-separated environment settings for the check (e.g. OMP_NUM_THREADS=8) or `-`; the wall
#      time of every check and its phases line, and a table of medians per setting.
# Example (the reference tree prepared as for tools/gpu_ab.sh, carried to the device as ab_ref):
#   REF=ab_ref CONFIGS="ref@ref:- new@ref:- new@new:-" ROUNDS=6 bash tools/check_io.sh
# The cold reads drop the file's pages first (dd iflag=nocache count=0, as tools/scale_session.sh).
# Output in $OUT (default out/): io.log (everything), table.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
scratch=${SCRATCH:-$root/io_tmp}
mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT
bin=${BIN:-$root/build-io/dpamr}
variant=${VARIANT:-hostlaunch}
dd_gb=${DD_GB:-4}
rounds=${ROUNDS:-3}
configs=${CONFIGS:-"new@new:-"}
ref=${REF:-}
log=$out/io.log
: >"$log"
say() { echo "$*" | tee -a "$log"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.4f", b - a }'; }
drop() { dd if="$1" iflag=nocache count=0 2>/dev/null; }

if [ "${BUILD:-1}" = 1 ]; then
    command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
    { cmake -S . -B build-io -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDPAMR_MPI=OFF ${CMAKE_ARGS:-} &&
        cmake --build build-io -j16 --target dpamr; } >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
    if [ -n "$ref" ]; then
        { cmake -S "$ref" -B build-io-ref -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDPAMR_MPI=OFF &&
            cmake --build build-io-ref -j16 --target dpamr; } >"$out/build_ref.log" 2>&1 || { tail -30 "$out/build_ref.log"; exit 1; }
    fi
fi
say "$(date -u) $(nproc) cores; $(git log --oneline -1 2>/dev/null)"
dev=$(basename "$(df --output=source "$scratch" | tail -1)")
for q in /sys/block/*/queue; do
    b=$(basename "$(dirname "$q")")
    case $b in loop* | ram*) continue ;; esac
    say "queue $b: read_ahead_kb $(cat $q/read_ahead_kb) max_sectors_kb $(cat $q/max_sectors_kb) nr_requests $(cat $q/nr_requests) logical_block $(cat $q/logical_block_size) dma_alignment $(cat $q/dma_alignment 2>/dev/null) scheduler $(cat $q/scheduler) hw queues $(ls -d $q/../mq/* 2>/dev/null | wc -l)"
done
say "scratch on $dev"

# ---- the disk ----
f=$scratch/dd.tmp
t0=$(now)
dd if=/dev/zero of="$f" bs=64M count=$((dd_gb * 16)) conv=fdatasync 2>/dev/null
bytes=$(stat -c %s "$f")
say "disk write $(awk -v b="$bytes" -v t="$(secs "$t0")" 'BEGIN { printf "%.3f", b / t / 1e9 }') GB/s"
rate() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.3f", b / t / 1e9 }'; }
par_read() { # FILE P BS(MiB) FLAG: P dd at once on slices; prints GB/s
    local file=$1 p=$2 bs=$3 flag=$4 size blocks per t0 i
    size=$(stat -c %s "$file")
    blocks=$(((size + bs * 1048576 - 1) / (bs * 1048576)))
    per=$(((blocks + p - 1) / p))
    drop "$file"
    t0=$(now)
    for ((i = 0; i < p; ++i)); do
        dd if="$file" of=/dev/null bs=${bs}M skip=$((i * per)) count=$per $flag 2>/dev/null &
    done
    wait
    rate "$size" "$(secs "$t0")"
}
for rep in 1 2 3; do
    say "disk read $dd_gb GB, rep $rep: buffered bs=64M $(par_read "$f" 1 64 '') direct bs=64M $(par_read "$f" 1 64 iflag=direct)" \
        "| 4 x buffered 8M $(par_read "$f" 4 8 '') 8 x $(par_read "$f" 8 8 '') | 8 x direct 8M $(par_read "$f" 8 8 iflag=direct)"
done
rm -f "$f"

# ---- the files ----
binof() { [ "$1" = ref ] && echo "$root/build-io-ref/dpamr" || echo "$bin"; }
for d in ${DECKS:-bench2d bench3d}; do
    for side in new ${ref:+ref}; do
        o=$scratch/${d}_$side.hdf
        "$(binof $side)" run "inputs/$d.inp" variant="$variant" output="$o" >"$out/run_${d}_$side.log" 2>&1 ||
            { say "run $d ($side) failed: $(tail -2 "$out/run_${d}_$side.log")"; exit 1; }
        dd if=/dev/null of="$o" oflag=nocache conv=notrunc,fdatasync count=0 2>/dev/null
        drop "$o"
        say "$d ($side): $(stat -c %s "$o") bytes"
    done
done

# ---- the checks ----
res=$out/checks.tsv
: >"$res"
for ((r = 1; r <= rounds; ++r)); do
    for d in ${DECKS:-bench2d bench3d}; do
        printf '%s\t%s\t%s\n' "$d" "dd bs=64M (new file)" "$(par_read "$scratch/${d}_new.hdf" 1 64 '')" >>"$res"
        for c in $configs; do
            b=${c%%@*} rest=${c#*@}
            o=$scratch/${d}_${rest%%:*}.hdf e=${rest#*:}
            size=$(stat -c %s "$o")
            env=()
            [ "$e" != - ] && IFS=, read -r -a env <<<"$e"
            drop "$o"
            t0=$(now)
            env "${env[@]}" "$(binof "$b")" check "$o" >"$scratch/c.log" 2>&1
            rc=$?
            t=$(secs "$t0")
            printf '%s\t%s\t%s\n' "$d" "check $c" "$(rate "$size" "$t")" >>"$res"
            say "round $r $d [$c] exit $rc ${t} s = $(rate "$size" "$t") GB/s; $(grep '^phases' "$scratch/c.log")"
            cp "$scratch/c.log" "$out/check_${d}_r${r}_$(echo "$c" | tr -c 'A-Za-z0-9_\n' _).log" # every check's whole output
            grep -qE '^  (arrays|checked) ' "$scratch/c.log" && say "    $(grep -E '^ +[a-zA-Z0-9]+ [0-9.]+$' "$scratch/c.log" | tr -s ' \n' ' ')"
        done
    done
done
python3 - "$res" <<'EOF' | tee "$out/table.txt"
import collections, statistics, sys
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    d, what, r = line.rstrip('\n').split('\t')
    rows.setdefault((d, what), []).append(float(r))
print(f"{'deck':8} {'reader':70} {'median GB/s':>11}  all")
for (d, what), v in rows.items():
    print(f"{d:8} {what:70} {statistics.median(v):11.3f}  {' '.join(f'{x:.3f}' for x in v)}")
EOF
