#!/bin/bash
# Builds the GPU tests and benchmarks (optimized; static apart from
# libnvrtc, which /usr/local/cuda/lib64 has on every CUDA 13 host) and
# copies them with their runner into dist/gpu/, a folder that runs as is on
# a GPU host without Bazel:   dist/gpu/run.sh [tests|sanitize [TOOL]|bench ...]
set -euo pipefail
cd "$(dirname "$0")/.."
binaries=(
  tests/runtime/gpu_test
  tests/ptx/descriptor_gpu_test
  tests/gemm/gemm_gpu_test
  tests/gemm/gemm_forms_gpu_test
  tests/gemm/gemm_concurrency_gpu_test
  tests/gemm/gemm_devices_gpu_test
  tests/gemm/cublaslt_gpu_test
  tests/capi/capi_gpu_test
  bench/gemm_bench
  bench/compile_bench
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
cp tools/gpu_run.sh dist/gpu/run.sh
chmod +x dist/gpu/*
du -sh dist/gpu
