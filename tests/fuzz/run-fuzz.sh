#!/usr/bin/env bash
# Runs each libFuzzer target of a -Dfuzz=true build for a given time, seeded with the
# shipped files (models/, topologies/, scenarios/, tests/data) and tests/fuzz/seeds; new
# inputs go to WORK/corpus-NAME, crashes to WORK/artifacts/. Prints one line per target:
# its run time, executions and whether it found anything. Exit 1 when one did.
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
[ ${#targets[@]} -eq 0 ] && targets=(units layout topology messages model scenario)
seeds_of() {
    local s="$src/tests/fuzz/seeds/$1"
    [ -d "$s" ] && echo "$s"
    case $1 in
    topology) echo "$src/topologies" "$src/tests/data" ;;
    model) echo "$src/models" ;;
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
    # shellcheck disable=SC2046
    "$exe" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/$t-" "$work/corpus-$t" $(seeds_of "$t") \
        > "$log" 2>&1
    rc=$?
    end=$(date +%s)
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    if [ $rc -ne 0 ]; then
        found=1
        echo "$t: FOUND a fault after $((end - start)) s (exit $rc); see $log and $work/artifacts"
    else
        echo "$t: ran $((end - start)) s, ${execs:-?} executions, $cov, nothing found"
    fi
done
exit $found
