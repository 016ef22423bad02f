#!/bin/bash
# The CMake build, as a client sees it: configures and builds the library,
# the ptxgen CLI and the C API's libptxgen.so (CMakeLists.txt,
# PTXGEN_CMAKE_JOBS jobs, default 2), installs them into a temporary prefix,
# runs the installed CLI, checks that libptxgen.so exports ptxgen.h's
# functions alone (tests/capi/exports_test.sh) and runs a C program linked
# with it, then builds and runs tests/cmake_client against that prefix
# twice: with find_package(ptxgen CONFIG) and with `pkg-config --cflags
# --libs ptxgen`. Last, compares the files CMake compiled, installed and
# embedded with those of Bazel's //:ptxgen, //tools:ptxgen and
# //lib/capi:libptxgen.so (`bazel query`, the checkout's default server):
# the two builds share one set of sources.
# Prints "cmake_check: passed" or "cmake_check: failed: <why>" last; exit
# status 0 only when it passed. Leaves nothing behind (PTXGEN_CMAKE_KEEP=1
# keeps and names the work folder) but the build folder
# $PTXGEN_CMAKE_BUILD_DIR when that is set (tools/test.sh shares it with
# the Python package's install test, so the library compiles once).
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
root=$PWD
jobs=${PTXGEN_CMAKE_JOBS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/ptxgen-cmake.XXXXXX")
if [ "${PTXGEN_CMAKE_KEEP:-0}" = "1" ]; then
  echo "cmake_check: work folder $work"
else
  trap 'rm -rf "$work"' EXIT
fi
prefix=$work/prefix
build=${PTXGEN_CMAKE_BUILD_DIR:-$work/build}
start=$SECONDS
fail() {
  echo "cmake_check: failed: $1 ($((SECONDS - start)) s)"
  exit 1
}
# Runs a step quietly; shows the end of its output when it fails.
step() {
  local what=$1
  shift
  if ! "$@" > "$work/step.log" 2>&1; then
    tail -n 30 "$work/step.log" | sed 's/^/cmake_check: | /'
    fail "$what"
  fi
}

# 1. The library, the CLI and libptxgen.so, installed.
step "cmake configure" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix"
step "cmake build" cmake --build "$build" -j "$jobs"
warnings=$(grep -c "warning:" "$work/step.log")
echo "cmake_check: library, CLI and libptxgen.so built in $((SECONDS - start)) s ($warnings compiler warnings)"
step "cmake install" cmake --install "$build"
for file in include/ptxgen/version.h include/ptxgen/gemm/plan.h include/ptxgen/ptxgen.h \
            lib/libptxgen_cxx.a lib/libptxgen.so bin/ptxgen \
            lib/cmake/ptxgen/ptxgenConfig.cmake lib/cmake/ptxgen/ptxgenConfigVersion.cmake \
            lib/cmake/ptxgen/ptxgenTargets.cmake lib/pkgconfig/ptxgen.pc; do
  [ -e "$prefix/$file" ] || fail "not installed: $file"
done
step "installed ptxgen wgmma" "$prefix/bin/ptxgen" wgmma --shape=m64n8k16 --a=bf16 --d=f32 --trans-b
grep -q "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16" "$work/step.log" ||
  fail "the installed ptxgen printed no wgmma"
step "installed libptxgen.so's exports" bash tests/capi/exports_test.sh "$prefix/lib/libptxgen.so" \
  include/ptxgen/ptxgen.h
cat > "$work/c_client.c" << 'EOF'
#include <stdio.h>

#include "ptxgen/ptxgen.h"

int main(void) {
  printf("ptxgen %s\n", ptxgenGetVersionString());
  return 0;
}
EOF
step "C client build" gcc -std=c11 -Wall -Werror "$work/c_client.c" -I"$prefix/include" \
  -L"$prefix/lib" -lptxgen -Wl,-rpath,"$prefix/lib" -o "$work/c_client"
version=$(sed -nE 's/.*kVersion\[\] = "([0-9.]+)".*/\1/p' include/ptxgen/version.h)
step "C client" "$work/c_client"
grep -qx "ptxgen $version" "$work/step.log" || fail "the C client printed $(cat "$work/step.log")"
echo "cmake_check: libptxgen.so exports ptxgen.h alone; a C client printed ptxgen $version"

# 2. The client: find_package(ptxgen CONFIG), then pkg-config.
run_client() {
  local how=$1 binary=$2 output
  output=$(PTXGEN_CACHE_DISABLE=1 "$binary" 2>&1) || { echo "$output"; fail "$how client exited $?"; }
  echo "$output" | grep -qE "^kernel ptxgen_gemm_\S+: [1-9][0-9]* bytes of PTX$" ||
    { echo "$output"; fail "$how client printed no kernel"; }
  echo "cmake_check: $how client: $output"
}
step "client configure (find_package)" cmake -S "$root/tests/cmake_client" -B "$work/client" \
  -DCMAKE_PREFIX_PATH="$prefix"
step "client build (find_package)" cmake --build "$work/client"
run_client find_package "$work/client/plan_client"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pkg_flags=$(pkg-config --cflags --libs ptxgen 2>"$work/step.log") || {
  cat "$work/step.log"
  fail "pkg-config --cflags --libs ptxgen"
}
# shellcheck disable=SC2086  # the flags are words
step "client build (pkg-config)" g++ -std=c++17 "$root/tests/cmake_client/main.cc" $pkg_flags \
  -o "$work/pkg_config_client"
run_client pkg-config "$work/pkg_config_client"

# 3. One set of sources: what CMake listed against what Bazel's targets hold
# (lib/ and tools/ sources, public headers, templates, the version script).
sort -u "$build/ptxgen_sources.txt" > "$work/cmake_files.txt"
if ! bazel query \
    'kind("source file", deps(//:ptxgen) + deps(//tools:ptxgen) + deps(//lib/capi:libptxgen.so))' \
    --output=label > "$work/bazel_labels.txt" 2> "$work/step.log"; then
  tail -n 20 "$work/step.log" | sed 's/^/cmake_check: | /'
  fail "bazel query of //:ptxgen, //tools:ptxgen and //lib/capi:libptxgen.so"
fi
sed -nE 's#^//((lib|tools)(/[^:]*)?):([^ ]+\.(cc|lds))$#\1/\4#p;
         s#^//include:(ptxgen/[^ ]+\.h)$#include/\1#p;
         s#^//ptx_templates:([^ ]+\.cu)$#ptx_templates/\1#p' "$work/bazel_labels.txt" |
  sort -u > "$work/bazel_files.txt"
if ! diff "$work/bazel_files.txt" "$work/cmake_files.txt" > "$work/files.diff"; then
  sed -e 's/^< /cmake_check: only in Bazel: /' -e 's/^> /cmake_check: only in CMake: /' \
    "$work/files.diff" | grep "^cmake_check:"
  fail "the CMake build's files differ from Bazel's (cmake/sources.cmake against the BUILD files)"
fi
echo "cmake_check: the same $(wc -l < "$work/cmake_files.txt") files as Bazel's //:ptxgen," \
  "//tools:ptxgen and //lib/capi:libptxgen.so"
echo "cmake_check: took $((SECONDS - start)) s"
echo "cmake_check: passed"
