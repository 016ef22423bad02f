#!/bin/bash
# Runs inside the folder tools/gpu_bundle.sh makes, on a GPU host.
#   run.sh tests            the GPU test suites
#   run.sh sanitize         the GPU test suites under compute-sanitizer memcheck
#   run.sh bench ARGS...    gemm_bench ARGS
# Logs go to $OUT when set (the device tool's output folder), else ./logs.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${OUT:-$here/logs}"
mkdir -p "$logs"
export PTXGEN_CACHE_DIR="${PTXGEN_CACHE_DIR:-$here/cache}"
suites=(gpu_test descriptor_gpu_test gemm_gpu_test)
status=0
case "${1:-tests}" in
  tests)
    for suite in "${suites[@]}"; do
      "$here/$suite" --gtest_brief=1 2>&1 | tee "$logs/$suite.log" | tail -n 25
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    done ;;
  sanitize)
    for suite in "${suites[@]}"; do
      compute-sanitizer --tool memcheck --error-exitcode 9 "$here/$suite" \
        --gtest_brief=1 > "$logs/memcheck_$suite.log" 2>&1
      code=$?
      echo "memcheck $suite: exit $code"; tail -n 4 "$logs/memcheck_$suite.log"
      [ "$code" -eq 0 ] || status=1
    done ;;
  bench)
    shift
    "$here/gemm_bench" "$@" 2>&1 | tee -a "$logs/gemm_bench.log"
    status=${PIPESTATUS[0]} ;;
  *) echo "usage: run.sh tests|sanitize|bench [gemm_bench flags]" >&2; exit 2 ;;
esac
exit $status
