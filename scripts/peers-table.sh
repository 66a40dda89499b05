#!/bin/sh
# peers-table.sh — the README's table of every shipped scenario: our pick (auto) against
# each peer's algorithm, first-order (`--network bottleneck`), one row per scenario.
# Usage: scripts/peers-table.sh [RESHARD] (default build/cli/reshard); run from the source
# tree. Prints Markdown on stdout, progress on stderr.
set -eu
reshard=${1:-build/cli/reshard}
cols="auto nccl-broadcast m2n m2n-direct checkpoint-engine rdma-p2p"
printf '| scenario | bound s | auto s (pick) | nccl-broadcast s | m2n s | m2n-direct s | checkpoint-engine s | rdma-p2p s |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
for f in scenarios/*.yaml; do
    name=$(basename "$f" .yaml)
    echo "peers-table: $name ..." >&2
    "$reshard" simulate --scenario "$name" --all-strategies --network bottleneck \
        --format csv -q | awk -F, -v name="$name" -v cols="$cols" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        {
            s = $col["strategy"]; t[s] = $col["predicted_s"]; bound = $col["lower_bound_s"]
            if (s ~ /^auto/) { t["auto"] = $col["predicted_s"]; pick = $col["variant"] }
        }
        END {
            n = split(cols, c, " ")
            best = t["auto"]
            line = sprintf("| %s | %.3g | %.3g (%s) |", name, bound, best, pick)
            for (i = 2; i <= n; i++)
                line = line sprintf(" %.3g (%.1fx) |", t[c[i]], t[c[i]] / best)
            print line
        }'
done
