#!/bin/bash
# The exhaustive tier (README, "Testing"): compiles every candidate GEMM
# configuration the library offers (the heuristic's picks, the autotuner's
# candidates for every input type and the heaviest epilogues, each type's
# v1 space; each distinct kernel text once) and requires each to compile
# without spills, a stack frame or a ptxas diagnostic. When all are clean
# it writes tests/gen/candidate_sweep.record: the digest of the kernels it
# compiled (their text, every NVRTC argument, NVRTC's version) and their
# counts. //tests/gen:sweep_record_test, in every tier, fails when the
# library would offer other kernels than the record names; run this then,
# and commit the record with the change. About 10 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
start=$SECONDS
bazel run //tests/gen:candidate_sweep
bazel test //tests/gen:sweep_record_test
echo "exhaustive_sweep: took $((SECONDS - start)) s"
git status --short -- tests/gen/candidate_sweep.record 2>/dev/null || true
