#!/usr/bin/env bash
# run.sh — the GPU checks of reshard in one script, at most 8 minutes on one H100/H200:
# builds with CUDA (nvcc for sm_90 and sm_100), runs the `gpu` suite and the cli-gpu test,
# a cuda-local refit from the command line (validated on the device, exit 3 on a wrong byte)
# and the GPU benchmark (tests/gpu/bench-gpu.c: pack/unpack GB/s against cudaMemcpy device
# to device by row length; cuda-local refits of a scaled DeepSeek-V3 and Qwen3-30B-A3B,
# predicted against measured per strategy after an on-the-spot calibration).
#
# Usage: tests/gpu/run.sh [BUILD_DIR]     (default: build-gpu in the source tree)
#   OUT=DIR    also write the results there: gpu-suite.txt (the suite's TAP output and,
#              under meson, its JSON log as gpu-testlog.json), bench-gpu.txt, bench-gpu.json,
#              run-cuda-local.json, calibrate.json (reshard calibrate's points and fits),
#              summary.txt
#   QUICK=1    a shorter benchmark (fewer row lengths, one model)
#   BUNDLE=DIR run the programs of a bundle made by tests/gpu/bundle.sh instead of building:
#              no compiler, meson or GLib needed on this machine, only the CUDA driver and
#              runtime; NCCL is looked for under /usr/local/cuda, then /usr and /opt. The
#              tests run as plain programs (TAP), not through meson.
# Needs: meson, ninja, gcc, pkg-config, GLib, libyaml, json-glib (scripts/install-deps.sh),
# the CUDA toolkit (-Dcudatoolkit_dir, default /usr/local/cuda) and a CUDA device; with
# BUNDLE, the device and the CUDA runtime alone.
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

if command -v nvidia-smi >/dev/null; then nvidia-smi -L; fi
bundle=${BUNDLE:-}
if [ -n "$bundle" ]; then
  bundle=$(cd "$bundle" 2>/dev/null && pwd) || { echo "run.sh: BUNDLE=$BUNDLE: no such folder" >&2; exit 2; }
  bin=$bundle/bin
  for p in reshard test-gpu test-cli-gpu bench-gpu; do
    if [ ! -x "$bin/$p" ]; then
      echo "run.sh: $bin/$p is missing: make the bundle with tests/gpu/bundle.sh" >&2
      exit 2
    fi
  done
  nccl=$(ls /usr/local/cuda/lib64/libnccl.so.2 /usr/local/cuda/lib/libnccl.so.2 2>/dev/null | head -n 1)
  if [ -z "$nccl" ]; then nccl=$(find /usr /opt -name libnccl.so.2 2>/dev/null | head -n 1); fi
  export LD_LIBRARY_PATH=$bundle/lib${nccl:+:$(dirname "$nccl")}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  if ldd "$bin/reshard" "$bin/test-gpu" "$bin/test-cli-gpu" "$bin/bench-gpu" | grep "not found" >&2; then
    echo "run.sh: the bundle's programs miss the libraries above" >&2
    exit 2
  fi
  export RESHARD_BIN=$bin/reshard G_TEST_SRCDIR=$root/tests G_TEST_BUILDDIR=$root/tests \
    RESHARD_DATA_DIR=$root RS_BUILT_WITH_CUDA=1
  reshard=$bin/reshard
  bench=$bin/bench-gpu
  step "gpu suite and cli-gpu (bundle $bundle)"
  log=$(mktemp)
  timeout 150 "$bin/test-gpu" --tap >"$log" 2>&1
  rc=$?
  timeout 60 "$bin/test-cli-gpu" --tap >>"$log" 2>&1
  rc2=$?
  if [ "$rc" -eq 0 ]; then rc=$rc2; fi
  grep -E "^(not )?ok|Bail out|ERROR" "$log" | tail -n 60
else
  for tool in meson ninja pkg-config; do
    if ! command -v "$tool" >/dev/null; then
      echo "run.sh: $tool is missing: run scripts/install-deps.sh first (or BUNDLE=DIR)" >&2
      exit 2
    fi
  done
  reshard=$build/cli/reshard
  bench=$build/tests/gpu/bench-gpu
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
  save "$build/meson-logs/testlog.json" gpu-testlog.json
fi
record "gpu suite" "$rc"
save "$log" gpu-suite.txt

step "reshard run --transport cuda-local (scaled DeepSeek-V3, layers 29-30)"
json=$(mktemp)
timeout 120 "$reshard" run --transport cuda-local --model deepseek-v3 --scale 8 \
  --layers 29-30 --train megatron:tp=1,pp=2,ep=2 --train-gpus 0-3 --infer vllm:tp=4 \
  --infer-gpus 0-3 --runs 3 --timeout 60 --format json >"$json"
rc=$?
record "reshard run cuda-local" "$rc"
save "$json" run-cuda-local.json

step "reshard run --transport nccl (one GPU: a one-rank refit)"
timeout 60 "$reshard" run --transport nccl --shape 4096x4096 --src-mesh 1 \
  --src-placements 'R' --dst-mesh 1 --dst-placements 'R' --timeout 30 >/dev/null
record "reshard run nccl (1 rank)" "$?"

step "reshard calibrate --transport cuda-local (4 ranks)"
cal=$(mktemp)
timeout 120 "$reshard" calibrate --transport cuda-local --ranks 4 --format json >"$cal"
record "reshard calibrate cuda-local" "$?"
save "$cal" calibrate.json

step "benchmark"
bench_txt=$(mktemp)
bench_args=(--runs 10)
if [ "${QUICK:-0}" = 1 ]; then bench_args=(--runs 5 --quick); fi
if [ -n "$out" ]; then bench_args+=(--json "$out/bench-gpu.json"); fi
timeout 270 "$bench" "${bench_args[@]}" | tee "$bench_txt"
rc=${PIPESTATUS[0]}
record benchmark "$rc"
save "$bench_txt" bench-gpu.txt

step "done"
echo "total $(( $(date +%s) - start )) s" >>"$summary"
cat "$summary"
save "$summary" summary.txt
exit "$status"
