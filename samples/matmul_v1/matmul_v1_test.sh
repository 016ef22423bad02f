#!/bin/bash
# The sample end to end on a CPU: it must generate, describe and compile the
# kernel, then skip the run for want of a driver and exit 0. PTXGEN_LIBCUDA
# names a missing library so the run is skipped on GPU hosts too, and the
# kernel cache lives under the test's own directory.
set -u

binary="$1"
output="$TEST_TMPDIR/output.txt"

PTXGEN_CACHE_DIR="$TEST_TMPDIR/cache" \
PTXGEN_LIBCUDA=/nonexistent/libcuda.so.1 \
  "$binary" --m=256 --n=256 --k=256 >"$output" 2>&1
status=$?

fail() {
  echo "FAIL: $1" >&2
  echo "---- output of $binary ----" >&2
  cat "$output" >&2
  exit 1
}

[[ $status -eq 0 ]] || fail "exit status $status, expected 0"
# The A and B descriptor template of a 128B-swizzled K-major tile: LBO 16,
# SBO 1024, swizzle 128B.
grep -q "0x4000004000010000" "$output" || fail "no descriptor 0x4000004000010000"
grep -q "skipped" "$output" || fail "the run was not reported as skipped"
# Every step printed, the K loop excerpt found, and a compiled kernel.
for step in 1 2 3 4 5 6 7; do
  grep -q "^== $step\. " "$output" || fail "step $step is missing"
done
grep -q "for (int k0" "$output" || fail "no K loop excerpt"
grep -q "wgmma.mma_async" "$output" || fail "no wgmma device function excerpt"
grep -Eq "[0-9]+ registers" "$output" || fail "no resource report"

# --help takes no value: --help=x is an unknown flag, not help.
"$binary" --help=x >"$output" 2>&1
status=$?
[[ $status -ne 0 ]] || fail "--help=x exited 0"
grep -q "unknown flag '--help=x'" "$output" || fail "--help=x was not named as unknown"
"$binary" --help >"$output" 2>&1 || fail "--help exited $?"
echo "PASS"
