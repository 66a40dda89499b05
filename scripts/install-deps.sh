#!/usr/bin/env bash
# Installs the Debian packages reshard builds and tests with (Debian bookworm).
# Run as root or with sudo available. Safe to run again.
# gnuplot-nox draws the plots (--plot, reshard report; its cairo terminals pngcairo and svg,
# with DejaVu fonts); chromium opens the HTML report in the slow suite's screenshot test.
# --fuzz: also clang and libFuzzer (libclang_rt.fuzzer, in libclang-rt-14-dev on bookworm)
# for the -Dfuzz=true build of tests/fuzz.
set -euo pipefail
packages=(
  meson ninja-build pkg-config gcc
  libglib2.0-dev libyaml-dev libjson-glib-dev
  openmpi-bin libopenmpi-dev
  gnuplot-nox fonts-dejavu-core
  chromium
  valgrind
)
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-14-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
