#!/bin/sh
# peers-table.sh — the README's table of every shipped scenario: our pick (auto) against
# each peer's algorithm, first-order (`--network bottleneck`), one row per scenario.
# Usage: scripts/peers-table.sh [RESHARD [NAME...]] (default build/cli/reshard, every
# scenarios/*.yaml); run from the source tree. Prints Markdown on stdout, progress on
# stderr. Each scenario runs once with --all-strategies; a peer whose plan is too large to
# build there is left out by reshard (a warning on stderr) and reads "n/a". When the run
# fails anyway (the memory limit below), each strategy runs alone and a failed one reads
# "n/a" with the reason on stderr.
# RESHARD_TABLE_MEMORY_KB caps each run's virtual memory (default 12000000 KB).
set -u
reshard=${1:-build/cli/reshard}
[ $# -gt 0 ] && shift
names=${*:-$(for f in scenarios/*.yaml; do basename "$f" .yaml; done)}
limit=${RESHARD_TABLE_MEMORY_KB:-12000000}
peers="nccl-broadcast m2n m2n-direct checkpoint-engine rdma-p2p"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# simulate NAME CSV-OUT ARGS...: one capped run; returns its status.
simulate() {
    name=$1 out=$2
    shift 2
    (ulimit -v "$limit"; "$reshard" simulate --scenario "$name" --network bottleneck \
        --format csv -q "$@") > "$out" 2> "$tmp/err"
}

printf '| scenario | bound s | auto s (pick) |'
for p in $peers; do printf ' %s s (× auto) |' "$p"; done
printf '\n|---|---:|---:|---:|---:|---:|---:|---:|\n'
for name in $names; do
    echo "peers-table: $name ..." >&2
    if ! simulate "$name" "$tmp/all.csv" --all-strategies; then
        echo "peers-table: $name: --all-strategies failed ($(tail -1 "$tmp/err")); one by one" >&2
        : > "$tmp/all.csv"
        for s in auto $peers; do
            if simulate "$name" "$tmp/one.csv" --strategy "$s"; then
                if [ -s "$tmp/all.csv" ]; then tail -n +2 "$tmp/one.csv" >> "$tmp/all.csv";
                else cat "$tmp/one.csv" > "$tmp/all.csv"; fi
            else
                echo "peers-table: $name $s: $(tail -1 "$tmp/err")" >&2
            fi
        done
    fi
    awk -F, -v name="$name" -v peers="$peers" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        {
            s = $col["strategy"]; t[s] = $col["predicted_s"]; bound = $col["lower_bound_s"]
            if (s ~ /^auto/) { t["auto"] = $col["predicted_s"]; pick = $col["variant"] }
        }
        END {
            n = split(peers, c, " ")
            best = t["auto"]
            line = sprintf("| %s | %.3g | %.3g (%s) |", name, bound, best, pick)
            for (i = 1; i <= n; i++)
                if (c[i] in t) line = line sprintf(" %.3g (%.1fx) |", t[c[i]], t[c[i]] / best)
                else line = line " n/a |"
            print line
        }' "$tmp/all.csv"
done
