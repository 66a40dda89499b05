#!/usr/bin/env bash
# run.sh — the GPU checks of reshard in one script, at most 8 minutes on one H100/H200:
# builds with CUDA (nvcc for sm_90 and sm_100), runs the `gpu` suite and the cli-gpu test,
# a cuda-local refit from the command line (validated on the device, exit 3 on a wrong byte)
# and the GPU benchmark (tests/gpu/bench-gpu.c: pack/unpack GB/s against cudaMemcpy device
# to device by row length; cuda-local refits of a scaled DeepSeek-V3 and Qwen3-30B-A3B,
# predicted against measured per strategy after an on-the-spot calibration).
#
# Usage: tests/gpu/run.sh [BUILD_DIR]     (default: build-gpu in the source tree)
#   OUT=DIR    also write the results there: gpu-suite.txt (the suite's TAP output and
#              meson's JSON log as gpu-testlog.json), bench-gpu.txt, bench-gpu.json,
#              run-cuda-local.json, summary.txt
#   QUICK=1    a shorter benchmark (fewer row lengths, one model)
# Needs: meson, ninja, gcc, pkg-config, GLib, libyaml, json-glib (scripts/install-deps.sh),
# the CUDA toolkit (-Dcudatoolkit_dir, default /usr/local/cuda) and a CUDA device.
# Exit status: 0 when every step passed, else that of the first failing step.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-gpu}
out=${OUT:-}
status=0
start=$(date +%s)

step() { echo "=== $* ($(( $(date +%s) - start )) s)" >&2; }
record() { # record NAME RC
  if [ "$2" -ne 0 ] && [ "$status" -eq 0 ]; then status=$2; fi
  echo "$1: exit $2" >>"$summary"
}
summary=$(mktemp)
if [ -n "$out" ]; then mkdir -p "$out"; fi
save() { if [ -n "$out" ]; then cp "$1" "$out/$2"; fi; }

for tool in meson ninja pkg-config; do
  if ! command -v "$tool" >/dev/null; then
    echo "run.sh: $tool is missing: run scripts/install-deps.sh first" >&2
    exit 2
  fi
done
if command -v nvidia-smi >/dev/null; then nvidia-smi -L; fi

step "build with CUDA in $build"
if [ ! -f "$build/build.ninja" ]; then
  setup_log=$(mktemp)
  meson setup "$build" "$root" -Dcuda=enabled -Dbuildtype=release >"$setup_log" 2>&1 ||
    { cat "$setup_log" >&2; exit 2; }
fi
timeout 240 meson compile -C "$build" 2>&1 | tail -n 5
rc=${PIPESTATUS[0]}
record build "$rc"
if [ "$rc" -ne 0 ]; then cat "$summary"; exit "$rc"; fi

step "gpu suite and cli-gpu"
log=$(mktemp)
timeout 150 meson test -C "$build" --print-errorlogs --verbose gpu cli-gpu >"$log" 2>&1
rc=$?
grep -E "▶|^ *(Ok|Fail|Skipped):" "$log" | tail -n 60
record "gpu suite" "$rc"
save "$log" gpu-suite.txt
save "$build/meson-logs/testlog.json" gpu-testlog.json

step "reshard run --transport cuda-local (scaled DeepSeek-V3, layers 29-30)"
json=$(mktemp)
timeout 120 "$build/cli/reshard" run --transport cuda-local --model deepseek-v3 --scale 8 \
  --layers 29-30 --train megatron:tp=1,pp=2,ep=2 --train-gpus 0-3 --infer vllm:tp=4 \
  --infer-gpus 0-3 --runs 3 --timeout 60 --format json >"$json"
rc=$?
record "reshard run cuda-local" "$rc"
save "$json" run-cuda-local.json

step "reshard run --transport nccl (one GPU: a one-rank refit)"
timeout 60 "$build/cli/reshard" run --transport nccl --shape 4096x4096 --src-mesh 1 \
  --src-placements 'R' --dst-mesh 1 --dst-placements 'R' --timeout 30 >/dev/null
record "reshard run nccl (1 rank)" "$?"

step "benchmark"
bench_txt=$(mktemp)
bench_args=(--runs 10)
if [ "${QUICK:-0}" = 1 ]; then bench_args=(--runs 5 --quick); fi
if [ -n "$out" ]; then bench_args+=(--json "$out/bench-gpu.json"); fi
timeout 270 "$build/tests/gpu/bench-gpu" "${bench_args[@]}" | tee "$bench_txt"
rc=${PIPESTATUS[0]}
record benchmark "$rc"
save "$bench_txt" bench-gpu.txt

step "done"
echo "total $(( $(date +%s) - start )) s" >>"$summary"
cat "$summary"
save "$summary" summary.txt
exit "$status"
