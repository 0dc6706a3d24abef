#!/bin/bash
# run.sh FUZZER SEEDS_DIR SECONDS WORKDIR - run one libFuzzer target for SECONDS from the seeds;
# exit non-zero on any crash, sanitizer report, leak or timeout (libFuzzer's own exit status), and
# print its final statistics (executions, coverage).
set -euo pipefail
fuzzer=$1 seeds=$2 seconds=$3 work=$4
rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts"
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp:print_suppressions=0"
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds" 2>"$work/log" || {
    rc=$?
    tail -60 "$work/log"
    echo "FAIL $(basename "$fuzzer"): libFuzzer exit $rc; reproducers in $work/artifacts"
    exit 1
}
grep -E "^stat::(number_of_executed_units|peak_rss_mb|new_units_added)|cov:" "$work/log" | tail -4
echo "$(basename "$fuzzer") OK"
