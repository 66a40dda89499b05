#!/usr/bin/env bash
# bundle.sh — build the GPU binaries here and gather them, with the shared libraries a bare
# GPU node may lack, into one folder that tests/gpu/run.sh runs with BUNDLE=DIR on a
# machine that has a CUDA driver but no compiler, no meson and no GLib (a cluster's compute
# node, a container with only the CUDA runtime).
#
# Usage: tests/gpu/bundle.sh [BUNDLE_DIR] [BUILD_DIR]
#   BUNDLE_DIR  default gpu-bundle in the source tree (ignored by git); bin/ holds reshard,
#               test-gpu, test-cli-gpu and bench-gpu, lib/ the libraries below
#   BUILD_DIR   default build-gpu: a release build with -Dcuda=enabled -Dnccl=enabled
#               -Dmpi=disabled (MPI's plugins do not travel as plain libraries)
# The libraries copied are those ldd resolves outside the C library, the C++ runtime
# (libc, libm, libdl, libpthread, librt, ld-linux, libstdc++, libgcc_s: a node's own, at
# least as new, are used) and the CUDA driver, runtime and NCCL (the node's own: libcudart
# by the rpath to /usr/local/cuda, NCCL from run.sh's search). The node's C library must be
# at least as new as this machine's (glibc's symbol versions); ldd there says so otherwise.
# Exit status: 0, or that of the failing step.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${1:-$root/gpu-bundle}
build=${2:-$root/build-gpu}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$root" -Dcuda=enabled -Dnccl=enabled -Dmpi=disabled -Dbuildtype=release
fi
meson compile -C "$build" cli/reshard tests/test-gpu tests/test-cli-gpu tests/gpu/bench-gpu
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
bins=("$build/cli/reshard" "$build/tests/test-gpu" "$build/tests/test-cli-gpu"
      "$build/tests/gpu/bench-gpu")
if ldd "${bins[@]}" | grep -q 'libmpi'; then
  echo "bundle.sh: $build links MPI; reconfigure it with meson configure -Dmpi=disabled" >&2
  exit 2
fi
cp "${bins[@]}" "$bundle/bin/"
skip='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcuda|libcudart|libnccl)\.'
ldd "${bins[@]}" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    if ! [[ $name =~ $skip ]]; then cp -L "$path" "$bundle/lib/$name"; fi
  done
echo "bundle.sh: $bundle: $(ls "$bundle/bin" | wc -l) programs, $(ls "$bundle/lib" | wc -l) libraries, $(du -sh "$bundle" | cut -f1)"
