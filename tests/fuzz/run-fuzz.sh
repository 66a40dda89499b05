#!/usr/bin/env bash
# Runs each libFuzzer target of a -Dfuzz=true build for a given time, seeded with the
# shipped files (models/, topologies/, scenarios/, tests/data) and tests/fuzz/seeds; new
# inputs go to WORK/corpus-NAME, crashes, timeouts and out-of-memory inputs to
# WORK/artifacts/NAME-* (the run goes on after each). Prints one line per target: its run
# time, executions and what it found. Exit 1 when one found anything.
# Usage: run-fuzz.sh BUILD_DIR SECONDS_EACH [WORK_DIR] [TARGET...]
#   e.g. CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
#          -Db_lundef=false && meson compile -C build-fuzz
#        tests/fuzz/run-fuzz.sh build-fuzz 600
set -uo pipefail
build=$(realpath "$1")
seconds=$2
work=${3:-$build/fuzz-work}
shift $(( $# >= 3 ? 3 : $# ))
src=$(realpath "$(dirname "$0")/../..")
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(units layout topology messages model hf-config hf-index scenario)
seeds_of() {
    local s="$src/tests/fuzz/seeds/$1"
    [ -d "$s" ] && echo "$s"
    case $1 in
    topology) echo "$src/topologies" "$src/tests/data" ;;
    model) echo "$src/models" ;;
    hf-config) echo "$src/tests/data/zoo" ;;
    scenario) echo "$src/scenarios" ;;
    esac
}
mkdir -p "$work/artifacts"
found=0
export RESHARD_DATA_DIR=$src
for t in "${targets[@]}"; do
    exe=$build/tests/fuzz/fuzz-$t
    if [ ! -x "$exe" ]; then
        echo "$t: not built ($exe)"
        found=1
        continue
    fi
    mkdir -p "$work/corpus-$t"
    log=$work/$t.log
    start=$(date +%s)
    # Fork mode: a crash, timeout or out-of-memory input is saved to the artifacts and the
    # run goes on to its full time, so one run finds every fault it reaches.
    # shellcheck disable=SC2046
    "$exe" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
        -artifact_prefix="$work/artifacts/$t-" "$work/corpus-$t" $(seeds_of "$t") \
        > "$log" 2>&1
    rc=$?
    end=$(date +%s)
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
    execs=$(echo "$last" | grep -oE '^#[0-9]+' | tr -d '#')
    cov=$(echo "$last" | grep -oE 'cov: [0-9]+')
    faults=$(echo "$last" | grep -oE 'oom/timeout/crash: [0-9/]+' | cut -d' ' -f2)
    n_art=$(find "$work/artifacts" -name "$t-*" -newermt "@$start" | wc -l)
    if [ $rc -ne 0 ] || [ "$n_art" -gt 0 ]; then
        found=1
        echo "$t: ran $((end - start)) s, ${execs:-?} executions, $cov, FOUND oom/timeout/crash ${faults:-?} (exit $rc, $n_art new artifacts); see $log and $work/artifacts"
    else
        echo "$t: ran $((end - start)) s, ${execs:-?} executions, $cov, nothing found"
    fi
done
exit $found
