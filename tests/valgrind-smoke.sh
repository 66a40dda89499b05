#!/usr/bin/env bash
# valgrind memcheck of the command-line smoke cases (slow suite): each command runs under
# memcheck and must exit with its own code (0, or 2 for the bad-input case) with no
# invalid read or write, no use of uninitialised memory and no definite leak; memcheck's
# own exit code 99 marks an error. Usage: valgrind-smoke.sh VALGRIND RESHARD SRCDIR
set -uo pipefail
valgrind=$1
reshard=$2
src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'message,src,dst,bytes,phase,depends_on\n7,0,2,10000000,0,\n8,2,3,10000000,0,7\n' \
    > "$tmp/m.csv"
failed=0
check() {
    local want=$1
    shift
    "$valgrind" -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        --show-leak-kinds=definite --track-origins=yes "$reshard" "$@" -q \
        > "$tmp/out" 2> "$tmp/err"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL (exit $rc, want $want): reshard $*"
        cat "$tmp/err"
        failed=1
    else
        echo "ok (exit $rc): reshard $*"
    fi
}
check 0 simulate --model llama-3.1-8b --nodes 2 --train megatron:tp=2,pp=2 --train-gpus 0-7 \
    --infer vllm:tp=4 --infer-gpus 8-15 --strategy all --trace "$tmp/t.csv" \
    --link-stats "$tmp/l.csv"
check 0 simulate --messages "$tmp/m.csv" --topology "$src/tests/data/two-node.yaml" \
    --format json
check 0 layout --shape 8x4 --mesh 2x2 --placements "(Shard(dim=-1), Replicate())"
check 0 plan --model llama-3.1-8b --train megatron:tp=2 --infer vllm:tp=4 --format json
check 0 run --shape 64x48 --src-mesh 2 --src-placements "S(0)" --dst-mesh 3 \
    --dst-placements "S(1)" --runs 2 --timeout 30
check 3 run --shape 64x48 --src-mesh 2 --src-placements "S(0)" --dst-mesh 2 \
    --dst-placements "S(1)" --dst-ranks 2,3 --corrupt-byte 0:5
check 0 models --model llama-3.1-8b
check 0 topology show dgx-h100
check 2 simulate --scenario "$tmp/m.csv" --strategy direct
check 2 simulate --messages "$tmp/m.csv" --topology dgx-h100 --trace "$tmp/m.csv"
exit $failed
