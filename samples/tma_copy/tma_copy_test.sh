#!/bin/bash
# tma_copy without a driver: it prints a source built from the PTX layer's
# emitters, compiles it (NVRTC, sm_90a), prints the PTX's TMA and mbarrier
# instructions, says why it stops and exits 0. Then as the machine is: on a
# Hopper GPU it must print PASS.
set -u
binary="$1"
log="$TEST_TMPDIR/log"
source samples/sample_test.sh

PTXGEN_LIBCUDA=/nonexistent/libcuda.so.1 "$binary" >"$log" 2>&1 || fail "exit status $?"
# The source: device functions rendered from the emitters, and their calls.
source_part=$(sed -n '/^== The CUDA source/,/^== PTX/p' "$log")
for function in mbarrier_init fence_mbarrier_init mbarrier_arrive_expect_tx \
                tma_load_2d mbarrier_wait; do
  grep -q "__device__ __forceinline__ void $function(" <<<"$source_part" ||
    fail "the source defines no $function"
done
grep -q 'tma_load_2d(box_address, (unsigned long long)&map, {32u, 80u}, barrier_address);' \
  <<<"$source_part" || fail "the kernel does not call tma_load_2d as expected"
grep -q '^extern "C" __global__' <<<"$source_part" || fail "no kernel in the source"
# The PTX NVRTC made: each instruction of the copy and its barrier.
ptx_part=$(sed -n '/^== PTX/,/^ptxas/p' "$log")
for instruction in \
    "mbarrier.init.shared::cta.b64" \
    "fence.mbarrier_init.release.cluster" \
    "mbarrier.arrive.expect_tx.shared::cta.b64" \
    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" \
    "mbarrier.try_wait.parity.shared::cta.b64"; do
  grep -qF "  $instruction" <<<"$ptx_part" || fail "the PTX lacks $instruction"
done
grep -Eq "^ptxas: tma_copy, [0-9]+ registers, 4[0-9]{3} bytes of static shared" "$log" ||
  fail "no ptxas report with the 4 KiB box"
grep -q "^no GPU: .*libcuda" "$log" || fail "the missing driver was not reported"
grep -q "^stopping after compilation" "$log" || fail "no stop reported"
grep -q "^PASS\|^FAIL" "$log" && fail "a result printed without a GPU"

"$binary" --bogus >"$log" 2>&1 && fail "--bogus accepted"
grep -q "unknown flag '--bogus'" "$log" || fail "--bogus not named"

pass_as_the_machine_is "copied" "the copy was not run"
