#!/bin/bash
# The tests, in the tiers of the README's "Testing":
#   bash tools/test.sh           the CI tier (.ci/run): every Bazel test (GPU
#                                tests skip, saying why, without a GPU), the
#                                Python package's, the CMake and Bazel-client
#                                checks, format and clang-tidy, then
#                                tools/sanitize.sh: the tests of code that
#                                reads outside input (tag asan) under ASan +
#                                UBSan instead of the default build, and
#                                every fuzz target for FUZZ_SECONDS (10) each
#   bash tools/test.sh --quick   the edit-test loop: the Bazel tests but the
#                                compile sweeps (tag compile_sweep), the
#                                Python package's, and the fuzz targets'
#                                seed corpora replayed
# (The exhaustive tier is tools/exhaustive_sweep.sh.) Prints each part's
# summary, a table of each part's wall time and counts, then one line of
# all last: "N passed, N failed". Exit status 0 only when nothing failed.
# PTXGEN_SANITIZE=0 leaves out tools/sanitize.sh, PTXGEN_CONSUMER_CHECKS=0
# the two consumer checks, PTXGEN_LINT=0 the format and clang-tidy checks.
set -uo pipefail
cd "$(dirname "$0")/.."
tier=ci
case "${1:-}" in
  "") ;;
  --quick) tier=quick ;;
  *) echo "usage: bash tools/test.sh [--quick]" >&2; exit 2 ;;
esac
bash tools/setup.sh || exit 1

passed=0
failed=0
table=()
# Adds a part's counts (its output's last line, "N passed, N failed"; none
# is one failure, and so is a failing exit status with no failed case) and
# its row of the time table.
tally() {
  local name=$1 status=$2 seconds=$3 output=$4 line p f
  line=$(echo "$output" | tail -n 1 | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p')
  read -r p f <<< "${line:-0 1}"
  if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + p))
  failed=$((failed + f))
  table+=("$(printf '%-16s %6d s %6d passed %4d failed' "$name" "$seconds" "$p" "$f")")
}
# Runs one part: its lines prefixed "<name>: " (a prefix of "" leaves them
# as they are), then tallied.
part() {
  local name=$1 prefix=$2 log start status
  shift 2
  log=$(mktemp "${TMPDIR:-/tmp}/ptxgen-part.XXXXXX")
  start=$SECONDS
  "$@" 2>&1 | tee "$log" | sed "s/^/$prefix/"
  status=${PIPESTATUS[0]}
  tally "$name" "$status" $((SECONDS - start)) "$(cat "$log")"
  rm -f "$log"
}
# A part that counts as one test, passed or not by its exit status.
check() {
  if "$@"; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; return 1; fi
}

# The Bazel suite, counted by test case (tools/test_summary.py). In the CI
# tier the tests tagged asan run once, under ASan (tools/sanitize.sh), and
# are neither built nor run here.
bazel_suite() {
  local filters=() patterns=(//...)
  [ "$tier" = quick ] && filters=(--test_tag_filters=-compile_sweep)
  if [ "$tier" = ci ] && [ "${PTXGEN_SANITIZE:-1}" != "0" ]; then
    mapfile -t -O 1 patterns < <(bazel query 'attr(tags, "\basan\b", tests(//...))' \
      2>/dev/null | sed 's/^/-/')
  fi
  bazel test "${filters[@]}" -- "${patterns[@]}" 2>&1 | tee /tmp/ptxgen-test.log |
    grep -vE "^(\[|INFO: From|Loading|Analyzing)" |
    grep -E "PASSED|FAILED|SKIPPED|TIMEOUT|NO STATUS|ERROR|Executed"
  local status=${PIPESTATUS[0]} summary
  summary=$(python3 tools/test_summary.py bazel-testlogs /tmp/ptxgen-test.log)
  echo "$summary" | sed 's/^/test: /'
  echo "$summary" | tail -n 1
  return "$status"
}

part "bazel suite" "" bazel_suite
consumers=0
[ "$tier" = ci ] && [ "${PTXGEN_CONSUMER_CHECKS:-1}" != "0" ] && consumers=1
if [ "$consumers" = 1 ]; then
  # The consumer paths (README, "Use it from your project"). The CMake
  # check's build folder is the pip install test's (tests/python), so the
  # library compiles once.
  export PTXGEN_CMAKE_BUILD_DIR
  PTXGEN_CMAKE_BUILD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ptxgen-cmake-build.XXXXXX")
  trap 'rm -rf "$PTXGEN_CMAKE_BUILD_DIR"' EXIT
  part "cmake client" "" check bash tools/cmake_check.sh
fi
part "python" "python: " bash tools/python_test.sh

if [ "$tier" = quick ]; then
  PTXGEN_SANITIZE_PARTS=fuzz FUZZ_SECONDS=0 part "fuzz corpora" "sanitize: " bash tools/sanitize.sh
else
  if [ "$consumers" = 1 ]; then
    part "bazel client" "" check bash tools/bazel_client_check.sh
  fi
  # The habits (README, "Format and clang-tidy").
  if [ "${PTXGEN_LINT:-1}" != "0" ]; then
    part "format" "format: " check bash tools/format_check.sh
    part "tidy" "tidy: " check bash tools/tidy_check.sh
  fi
  if [ "${PTXGEN_SANITIZE:-1}" != "0" ]; then
    PTXGEN_SANITIZE_PARTS=suite PTXGEN_SANITIZE_KEEP_SERVER=1 \
      part "asan suite" "sanitize: " bash tools/sanitize.sh
    PTXGEN_SANITIZE_PARTS=fuzz part "fuzz" "sanitize: " bash tools/sanitize.sh
  fi
fi

echo "== tools/test.sh, $tier tier: time per part"
printf '%s\n' "${table[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
