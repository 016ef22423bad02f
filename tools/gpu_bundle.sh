#!/bin/bash
# Builds the GPU tests and benchmarks (optimized; static apart from
# libnvrtc, which /usr/local/cuda/lib64 has on every CUDA 13 host) and
# copies them with their runner into dist/gpu/, a folder that runs as is on
# a GPU host without Bazel:   dist/gpu/run.sh [tests|sanitize [TOOL]|bench ...]
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
labels=()
for binary in "${binaries[@]}"; do
  labels+=("//$(dirname "${binary}"):$(basename "${binary}")")
done
bazel build -c opt "${labels[@]}" 2>&1 | tail -n 3
rm -rf dist/gpu
mkdir -p dist/gpu
for binary in "${binaries[@]}"; do
  cp "bazel-bin/${binary}" dist/gpu/
done
printf '%s\n' "${gpu_tests[@]##*/}" > dist/gpu/suites
cp tools/gpu_run.sh dist/gpu/run.sh
chmod +x dist/gpu/*
chmod -x dist/gpu/suites
du -sh dist/gpu
