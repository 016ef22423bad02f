#!/bin/bash
# fused_epilogue without a driver: it says so, plans the fused kernel for an
# H200, prints its configuration and the generated epilogue, and exits 0.
# Then as the machine is: on a Hopper GPU it must print PASS.
set -u
binary="$1"
log="$TEST_TMPDIR/log"
source samples/sample_test.sh
export PTXGEN_CACHE_DIR="$TEST_TMPDIR/cache"

PTXGEN_LIBCUDA=/nonexistent/libcuda.so.1 "$binary" >"$log" 2>&1 || fail "exit status $?"
grep -q "^no GPU: .*libcuda" "$log" || fail "the missing driver was not reported"
grep -q "^form          f16.kk->f16+c+bias_n.f32+gelu$" "$log" || fail "no fused form"
grep -q "^config        " "$log" || fail "no configuration"
grep -q "^  | __device__ __forceinline__ float epilogue_value(" "$log" ||
  fail "no epilogue_value excerpt"
# The excerpt holds each fused operation: alpha, beta * C, the bias, GELU (erf).
for op in "e.alpha \* value" "e.beta \* c" "v += bias" "erff("; do
  grep -q "^  | .*$op" "$log" || fail "the epilogue excerpt lacks '$op'"
done
grep -q "^PASS\|^FAIL" "$log" && fail "a result printed without a GPU"

# Flags: a size the library refuses is its message; an unknown flag is named.
"$binary" --k=260 >"$log" 2>&1 && fail "--k=260 accepted"
grep -q "^fused_epilogue: .*16-byte" "$log" || fail "--k=260 not refused by its rule"
"$binary" --bogus >"$log" 2>&1 && fail "--bogus accepted"
grep -q "unknown flag '--bogus'" "$log" || fail "--bogus not named"

pass_as_the_machine_is "relative error" "the run was skipped"
