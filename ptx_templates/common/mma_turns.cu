// Two consumers' turns at the tensor cores, in a fixed alternation: a
// consumer waits on its own named barrier until the other has issued its
// wgmma of the turn before, so that one runs its other work (a GEMM's
// epilogue, attention's softmax) while the other's wgmma run, rather than
// both sharing the tensor cores and then both waiting. In a GEMM the turns
// also keep a consumer's waits within one lap of the ring, as its parity
// waits need: the stages of the other's pieces, which it passes over, are
// all consumed before it waits on the next.
__device__ __forceinline__ void wait_mma_turn(int consumer) {
  named_barrier_sync(plan::kFirstTurnBarrier + consumer, 2 * plan::kThreadsPerWarpgroup);
}

__device__ __forceinline__ void pass_mma_turn(int consumer) {
  named_barrier_arrive(plan::kFirstTurnBarrier + 1 - consumer,
                       2 * plan::kThreadsPerWarpgroup);
}
