#!/usr/bin/env bash
# Every benchmark answers --help with its usage (exit 0, nothing run) and refuses an unknown
# option or a stray argument with exit 2 (bench-sweep took "--help" for a run with its
# defaults and ran for minutes). Each call is bounded to 10 s: a benchmark that starts
# measuring instead fails here. Usage: check-bench-help.sh BENCH_EXE...
set -u
fail=0
for exe in "$@"; do
    name=$(basename "$exe")
    out=$(timeout 10 "$exe" --help 2>&1)
    rc=$?
    if [ $rc -ne 0 ] || [[ "$out" != Usage:* ]] || [[ "$out" != *"$name"* ]]; then
        echo "$name --help: exit $rc, output: ${out:0:200}"
        fail=1
    fi
    for bad in --no-such-option stray-argument; do
        out=$(timeout 10 "$exe" "$bad" 2>&1)
        rc=$?
        if [ $rc -ne 2 ]; then
            echo "$name $bad: exit $rc (expected 2), output: ${out:0:200}"
            fail=1
        fi
    done
done
exit $fail
