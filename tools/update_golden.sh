#!/bin/bash
# Regenerates the golden generated sources in tests/gen/golden/ (one file
# per GEMM configuration of tests/gen/golden/CONFIGS and per attention
# configuration of tests/gen/golden/ATTENTION) from the current generators,
# removes golden files neither list writes, then runs
# //tests/gen:golden_test against them. Run it after an intended change of
# generated text (or of either list), review `git diff tests/gen/golden`
# and commit the files with the change:
#
#   bash tools/update_golden.sh
#
# The writer is //tests/gen:golden_writer under `bazel run`, which writes
# into $BUILD_WORKSPACE_DIRECTORY (this checkout); the test only reads.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel run //tests/gen:golden_writer
bazel test //tests/gen:golden_test
git status --short -- tests/gen/golden 2>/dev/null || true
