#!/bin/bash
# Runs inside the folder tools/gpu_bundle.sh makes, on a GPU host.
#   run.sh tests            the GPU test suites, then a line of their time
#                           against the budget (README "Testing": 180 s)
#   run.sh sanitize [TOOL]  the GPU test suites under compute-sanitizer TOOL
#                           (memcheck, racecheck or synccheck; memcheck by
#                           default); GTEST_FILTER narrows the cases
#   run.sh bench ARGS...    gemm_bench ARGS
# Logs go to $OUT when set (the device tool's output folder), else ./logs.
# Kernels come from the bundle's read-only cache folder (kernels/, compiled
# by gpu_bundle.sh); one it lacks is compiled here into cache/, and the
# summary says how many were (not counting the few compiles of tests that
# test compiling itself, outside the kernel cache: runtime's gpu_test,
# gemm_gpu_test's cache cases).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${OUT:-$here/logs}"
mkdir -p "$logs"
export PTXGEN_CACHE_DIR="${PTXGEN_CACHE_DIR:-$here/cache}"
[ -d "$here/kernels" ] && export PTXGEN_CACHE_PATH="$here/kernels"
mkdir -p "$PTXGEN_CACHE_DIR"
compiled_before=$(find "$PTXGEN_CACHE_DIR" -maxdepth 1 -name '*.kernel' | wc -l)
mapfile -t suites < "$here/suites"  # gpu_bundle.sh: the tests tagged gpu
status=0
start=$SECONDS
table=()
case "${1:-tests}" in
  tests)
    for suite in "${suites[@]}"; do
      suite_start=$SECONDS
      "$here/$suite" --gtest_brief=1 2>&1 | tee "$logs/$suite.log" | tail -n 25
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      table+=("$(printf '%-28s %5d s' "$suite" $((SECONDS - suite_start)))")
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
    exit "${PIPESTATUS[0]}" ;;
  *) echo "usage: run.sh tests|sanitize [memcheck|racecheck|synccheck]|bench [gemm_bench flags]" >&2; exit 2 ;;
esac
compiled=$(( $(find "$PTXGEN_CACHE_DIR" -maxdepth 1 -name '*.kernel' | wc -l) - compiled_before ))
{
  echo "== run.sh ${1:-tests}: time per suite"
  [ "${#table[@]}" -eq 0 ] || printf '%s\n' "${table[@]}"
  echo "GPU suites: $((SECONDS - start)) s (budget: 180 s for run.sh tests, README \"Testing\");" \
    "$compiled kernels compiled on this host ($( [ -d "$here/kernels" ] &&
    echo "the bundle's kernels/ lacked them" || echo "the bundle has no kernels/"))"
} | tee "$logs/summary.txt"
exit $status
