#!/bin/bash
# Installs what building and testing ptxgen needs, where it is missing:
# Debian's Bazel (4.2.3) with rules_java, Abseil and GoogleTest, and for
# tools/sanitize.sh clang-14 with its sanitizer and libFuzzer runtimes
# (libclang-rt-14-dev) and llvm-14 (llvm-symbolizer: file:line in sanitizer
# reports), for tools/cmake_check.sh CMake and pkg-config (pkgconf), for
# tools/python_test.sh pytest and Hypothesis (python3-pytest,
# python3-hypothesis) and what the package's pip install needs
# (python3-venv, python3-pip, python3-setuptools, python3-wheel), and for
# tools/format_check.sh and tools/tidy_check.sh clang-format-14 and
# clang-tidy-14.
# CUDA 13.0 is expected at /usr/local/cuda (NVRTC, headers, libcublas); the
# GPU driver is not needed to build or test. Idempotent: a second run
# installs nothing.
set -euo pipefail
packages=(bazel-bootstrap bazel-rules-java libabsl-dev libgtest-dev googletest
          clang-14 libclang-rt-14-dev llvm-14 cmake pkgconf python3-pytest python3-hypothesis
          python3-venv python3-pip python3-setuptools python3-wheel
          clang-format-14 clang-tidy-14)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "setup: CUDA 13.0 is expected at /usr/local/cuda (nvrtc.h not found)" >&2
  exit 1
fi
