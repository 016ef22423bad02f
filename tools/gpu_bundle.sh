#!/bin/bash
# Builds the GPU tests and benchmarks (optimized; static apart from
# libnvrtc, which /usr/local/cuda/lib64 has on every CUDA 13 host) and
# copies them with their runner into dist/gpu/, a folder that runs as is on
# a GPU host without Bazel:   dist/gpu/run.sh [tests|sanitize [TOOL]|bench ...]
# and packs it as dist/gpu.tar.xz (what the device tool carries: the
# binaries and kernels compress about ten times).
#
# The kernels the GPU suites prepare are compiled here, not on the GPU
# host: each suite runs once against tools' stand-in driver
# (tests/support/fake_libcuda.c: an H100 that runs nothing, so its
# comparisons fail, which is expected), and every kernel it generates is
# compiled by NVRTC into the kernel cache folder dist/kernel-cache. That
# folder is kept between bundles (entries are content-addressed: an
# unchanged kernel is not compiled again); the entries this bundle's suites
# used go to dist/gpu/kernels, which run.sh reads through PTXGEN_CACHE_PATH.
# A kernel the bundle lacks still compiles on the GPU host, and run.sh says
# how many did. PTXGEN_BUNDLE_KERNELS=0 leaves the kernels out.
set -euo pipefail
cd "$(dirname "$0")/.."
# The GPU tests are the ones tagged gpu; dist/gpu/suites names them for
# run.sh.
mapfile -t gpu_tests < <(bazel query 'attr(tags, "\bgpu\b", tests(//...))' \
  2>/dev/null | sed -E 's|^//([^:]*):(.*)$|\1/\2|' | sort)
[ "${#gpu_tests[@]}" -gt 0 ] || { echo "gpu_bundle: no test is tagged gpu" >&2; exit 1; }
binaries=(
  "${gpu_tests[@]}"
  bench/gemm_bench
  bench/compile_bench
  bench/attention_bench
  tools/ptxgen
  samples/matmul_v1/matmul_v1
  samples/fused_epilogue/fused_epilogue
  samples/tma_copy/tma_copy
)
labels=(//tests/support:libfakecuda.so)
for binary in "${binaries[@]}"; do
  labels+=("//$(dirname "${binary}"):$(basename "${binary}")")
done
bazel build -c opt "${labels[@]}" 2>&1 | tail -n 3
rm -rf dist/gpu dist/gpu.tar.xz
mkdir -p dist/gpu
for binary in "${binaries[@]}"; do
  cp "bazel-bin/${binary}" dist/gpu/
done
printf '%s\n' "${gpu_tests[@]##*/}" > dist/gpu/suites
cp tools/gpu_run.sh dist/gpu/run.sh
cp bench/ncu_side_by_side.sh dist/gpu/
chmod +x dist/gpu/*
chmod -x dist/gpu/suites

# The suites' kernels, two suites at a time (one a core); gemm_gpu_test,
# the longest, in two shards.
if [ "${PTXGEN_BUNDLE_KERNELS:-1}" != "0" ]; then
  start=$SECONDS
  cache=$PWD/dist/kernel-cache
  mkdir -p "$cache" dist/gpu/kernels
  chmod 700 "$cache"
  marker=$(mktemp "${TMPDIR:-/tmp}/ptxgen-bundle.XXXXXX")
  logs=$(mktemp -d "${TMPDIR:-/tmp}/ptxgen-bundle-logs.XXXXXX")
  fake=$(realpath bazel-bin/tests/support/libfakecuda.so)
  runs=()
  for test in "${gpu_tests[@]}"; do
    if [ "${test##*/}" = gemm_gpu_test ]; then
      runs+=("$test 0 2" "$test 1 2")
    else
      runs+=("$test 0 1")
    fi
  done
  printf '%s\n' "${runs[@]}" |
    PTXGEN_LIBCUDA=$fake PTXGEN_CACHE_DIR=$cache LOGS=$logs xargs -P 2 -L 1 bash -c '
      GTEST_SHARD_INDEX=$1 GTEST_TOTAL_SHARDS=$2 timeout 1800 "bazel-bin/$0" \
        > "$LOGS/$(basename "$0").$1.log" 2>&1 || true'
  # The entries these runs wrote or read: the bundle's.
  find "$cache" -maxdepth 1 -name '*.kernel' -newer "$marker" -exec cp {} dist/gpu/kernels/ \;
  echo "gpu_bundle: $(find dist/gpu/kernels -name '*.kernel' | wc -l) kernels" \
    "($(du -sh dist/gpu/kernels | cut -f1)) for the GPU suites, compiled or found in" \
    "$cache in $((SECONDS - start)) s"
  rm -rf "$marker" "$logs"
fi
tar -cf - -C dist gpu | xz -T2 -6 > dist/gpu.tar.xz
echo "gpu_bundle: dist/gpu $(du -sh dist/gpu | cut -f1), packed as dist/gpu.tar.xz" \
  "$(du -sh dist/gpu.tar.xz | cut -f1) (carry it; on the host: tar -xJf" \
  "dist/gpu.tar.xz -C /tmp && /tmp/gpu/run.sh tests)"
