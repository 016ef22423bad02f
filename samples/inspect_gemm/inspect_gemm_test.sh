#!/bin/bash
# The sample on a CPU, with the driver hidden: it plans, prints the plan and
# writes a CUDA source and a PTX module that name the fused form.
set -u
binary="$1"
out="$TEST_TMPDIR/out"
mkdir -p "$out"
log="$TEST_TMPDIR/log"
fail() { echo "FAIL: $1" >&2; cat "$log" >&2; exit 1; }

PTXGEN_CACHE_DIR="$TEST_TMPDIR/cache" PTXGEN_LIBCUDA=/nonexistent/libcuda.so.1 \
  "$binary" --out="$out" >"$log" 2>&1 || fail "exit status $?"
grep -q "^form          bf16.km->f32+bias_n.f32+gelu$" "$log" || fail "no fused form"
grep -q "^config        ws " "$log" || fail "no warp-specialized config"
grep -q "kBlockM" "$log" || fail "no planned constants"
grep -Eq "^  [0-9]+ registers, 0 bytes spilled" "$log" || fail "no resources, or spills"
cu=$(ls "$out"/*.cu 2>/dev/null) || fail "no CUDA source written"
ptx=$(ls "$out"/*.ptx 2>/dev/null) || fail "no PTX written"
grep -q "epilogue_value" "$cu" || fail "the source has no epilogue transform"
grep -q "wgmma.mma_async" "$ptx" || fail "the PTX has no wgmma"
"$binary" --bogus >"$log" 2>&1 && fail "--bogus accepted"
grep -q "unknown flag '--bogus'" "$log" || fail "--bogus not named"
echo PASS
