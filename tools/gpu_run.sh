#!/bin/bash
# Runs inside the folder tools/gpu_bundle.sh makes, on a GPU host.
#   run.sh tests            the GPU test suites
#   run.sh sanitize [TOOL]  the GPU test suites under compute-sanitizer TOOL
#                           (memcheck, racecheck or synccheck; memcheck by
#                           default); GTEST_FILTER narrows the cases
#   run.sh bench ARGS...    gemm_bench ARGS
# Logs go to $OUT when set (the device tool's output folder), else ./logs.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${OUT:-$here/logs}"
mkdir -p "$logs"
export PTXGEN_CACHE_DIR="${PTXGEN_CACHE_DIR:-$here/cache}"
mapfile -t suites < "$here/suites"  # gpu_bundle.sh: the tests tagged gpu
status=0
case "${1:-tests}" in
  tests)
    for suite in "${suites[@]}"; do
      "$here/$suite" --gtest_brief=1 2>&1 | tee "$logs/$suite.log" | tail -n 25
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    done ;;
  sanitize)
    tool="${2:-memcheck}"
    for suite in "${suites[@]}"; do
      # gpu_test provokes driver API errors on purpose and checks them.
      compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 9 \
        "$here/$suite" --gtest_brief=1 > "$logs/${tool}_$suite.log" 2>&1
      code=$?
      echo "$tool $suite: exit $code"; tail -n 4 "$logs/${tool}_$suite.log"
      [ "$code" -eq 0 ] || status=1
    done ;;
  bench)
    shift
    "$here/gemm_bench" "$@" 2>&1 | tee -a "$logs/gemm_bench.log"
    status=${PIPESTATUS[0]} ;;
  *) echo "usage: run.sh tests|sanitize [memcheck|racecheck|synccheck]|bench [gemm_bench flags]" >&2; exit 2 ;;
esac
exit $status
