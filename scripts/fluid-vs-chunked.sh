#!/bin/sh
# fluid-vs-chunked.sh — the README's table of the fluid relay model against the chunked one
# (issue 14: totals within 1%, every GPU's finish time within 2%).
# Usage: scripts/fluid-vs-chunked.sh [RESHARD [NAME...]] (default build/cli/reshard and the
# scenarios of the README's table); run from the source tree. Each scenario is simulated
# twice, `--relays fluid` then `--relays chunked`, one candidate at a time (-j 1), with the
# default strategies (ours, nccl-broadcast, auto) and `--format json`. Prints Markdown on
# stdout: per strategy the two `total_s`, their ratio, the largest relative difference of
# any GPU's `finish_s`, and per scenario the wall time of each whole command (seconds,
# `date`; a ratio only on a machine without other jobs). Progress on stderr. Needs
# python3 (meson's own interpreter).
set -u
reshard=${1:-build/cli/reshard}
[ $# -gt 0 ] && shift
names=${*:-qwen3-30b-colocated qwen3-235b-gb200 m2n-qwen3-235b-gb200 deepseek-v3-gb200 m2n-deepseek-v3-gb200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '| scenario | strategy | chunked s | fluid s | fluid / chunked | worst GPU | wall s, chunked / fluid |\n'
printf '|---|---|---:|---:|---:|---:|---|\n'
status=0
for name in $names; do
    for relays in fluid chunked; do
        echo "$name: --relays $relays ..." >&2
        t0=$(date +%s.%N)
        if ! "$reshard" simulate --scenario "$name" --relays "$relays" -j 1 --format json \
            > "$tmp/$relays.json" 2> "$tmp/err"; then
            echo "$name: reshard simulate --relays $relays failed:" >&2
            cat "$tmp/err" >&2
            status=1
            continue 2
        fi
        t1=$(date +%s.%N)
        echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}' > "$tmp/$relays.wall"
    done
    python3 - "$name" "$tmp/fluid.json" "$tmp/chunked.json" "$(cat "$tmp/chunked.wall")" \
        "$(cat "$tmp/fluid.wall")" <<'EOF' || status=1
import json, sys
name, fluid_path, chunked_path, wall_chunked, wall_fluid = sys.argv[1:6]
fluid = json.load(open(fluid_path))
chunked = {s["name"]: s for s in json.load(open(chunked_path))["strategies"]}
first = True
for s in fluid["strategies"]:
    c = chunked.get(s["name"])
    if c is None or "flow" not in s or "flow" not in c:
        continue
    tf, tc = s["flow"]["total_s"], c["flow"]["total_s"]
    gf = {g["gpu"]: g["finish_s"] for g in s["flow"]["gpu_finish_s"]}
    worst = max((abs(gf[g["gpu"]] - g["finish_s"]) / g["finish_s"]
                 for g in c["flow"]["gpu_finish_s"]
                 if g["gpu"] in gf and g["finish_s"] > 0), default=0.0)
    wall = f"{wall_chunked} / {wall_fluid}" if first else ""
    first = False
    print(f"| {name} | {s['name']} | {tc:.5g} | {tf:.5g} | {tf / tc:.4f} | {100 * worst:.2f}% | {wall} |")
EOF
done
exit $status
