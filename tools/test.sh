#!/bin/bash
# Runs every test of the repository (GPU tests skip, saying why, without a
# GPU), then the CMake and Bazel-client checks (tools/cmake_check.sh,
# tools/bazel_client_check.sh: one test each), the format and clang-tidy
# checks (tools/format_check.sh, tools/tidy_check.sh: one test each), then
# tools/sanitize.sh: the CPU tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer, and every fuzz target of fuzz/ for
# FUZZ_SECONDS (30 by default). Prints each part's summary, then one of all
# last: "N passed, N failed". Exit status 0 only when nothing failed.
# PTXGEN_SANITIZE=0 leaves out tools/sanitize.sh, PTXGEN_CONSUMER_CHECKS=0
# the two consumer checks, PTXGEN_LINT=0 the format and clang-tidy checks
# (quicker local runs).
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1

# "N passed, N failed" -> "N N"; a part that printed none counts 1 failure.
counts() {
  local line
  line=$(tail -n 1 | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p')
  echo "${line:-0 1}"
}

bazel test //... 2>&1 | tee /tmp/ptxgen-test.log | grep -vE "^(\[|INFO: From|Loading|Analyzing)" \
  | grep -E "PASSED|FAILED|SKIPPED|TIMEOUT|NO STATUS|ERROR|Executed"
status=${PIPESTATUS[0]}  # Bazel's, whatever grep found
summary=$(python3 tools/test_summary.py bazel-testlogs /tmp/ptxgen-test.log)
echo "$summary" | sed 's/^/test: /'
read -r passed failed < <(echo "$summary" | counts)
# Bazel failed where no test case did (a broken build): one failure.
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi

# The Python package's cases (tests/python, over libptxgen.so), counted alike.
python_summary=$(bash tools/python_test.sh 2>&1); echo "$python_summary" | sed 's/^/python: /'
read -r python_passed python_failed < <(echo "$python_summary" | counts)
passed=$((passed + python_passed)); failed=$((failed + python_failed))

# The consumer paths (README, "Use it from your project"): the CMake build,
# installed and used by a client (tools/cmake_check.sh), and a Bazel client
# workspace (tools/bazel_client_check.sh); one test each.
consumer_status=0
if [ "${PTXGEN_CONSUMER_CHECKS:-1}" != "0" ]; then
  for check in cmake_check bazel_client_check; do
    if bash "tools/$check.sh" 2>&1; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      consumer_status=1
    fi
  done
fi

# The habits (README, "Format and clang-tidy"): every C++ file as
# .clang-format says (tools/format_check.sh) and clang-tidy-14 with
# .clang-tidy's checks (tools/tidy_check.sh); one test each, its lines
# prefixed "format: " and "tidy: ".
lint_status=0
if [ "${PTXGEN_LINT:-1}" != "0" ]; then
  for check in format tidy; do
    bash "tools/${check}_check.sh" 2>&1 | sed "s/^/$check: /"
    if [ "${PIPESTATUS[0]}" -eq 0 ]; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      lint_status=1
    fi
  done
fi

sanitize_status=0
if [ "${PTXGEN_SANITIZE:-1}" != "0" ]; then
  sanitize_log=$(mktemp "${TMPDIR:-/tmp}/ptxgen-sanitize-log.XXXXXX")
  bash tools/sanitize.sh 2>&1 | tee "$sanitize_log" | sed 's/^/sanitize: /'
  sanitize_status=${PIPESTATUS[0]}
  read -r sanitize_passed sanitize_failed < <(counts < "$sanitize_log")
  rm -f "$sanitize_log"
  if [ "$sanitize_status" -ne 0 ] && [ "$sanitize_failed" -eq 0 ]; then sanitize_failed=1; fi
  passed=$((passed + sanitize_passed))
  failed=$((failed + sanitize_failed))
fi

echo "$passed passed, $failed failed"
[ "$status" -eq 0 ] && [ "$consumer_status" -eq 0 ] && [ "$lint_status" -eq 0 ] &&
  [ "$sanitize_status" -eq 0 ] && [ "$failed" -eq 0 ]
