#!/bin/bash
# Runs every test of the repository (GPU tests skip, saying why, without a
# GPU) and prints a summary of test cases: "N passed, N failed" last.
# Exit status 0 only when nothing failed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
bazel test //... 2>&1 | tee /tmp/ptxgen-test.log | grep -vE "^(\[|INFO: From|Loading|Analyzing)" \
  | grep -E "PASSED|FAILED|SKIPPED|TIMEOUT|NO STATUS|ERROR|Executed"
status=${PIPESTATUS[0]}  # Bazel's, whatever grep found
python3 tools/test_summary.py bazel-testlogs /tmp/ptxgen-test.log
summary_status=$?
[ "$status" -eq 0 ] && [ "$summary_status" -eq 0 ]
