// The ring of shared-memory stages between the producer and the consumers.
// Each stage has a "full" mbarrier (its TMA bytes arrived) and an "empty"
// one (every consumer warp of the cluster has finished reading it): full[s]
// at barriers + s * kBarrierBytes, then empty[s] after all of them. A
// position in the ring is the stage and the parity of the lap around it,
// which is what an mbarrier wait compares.
struct PipelineState {
  int stage;
  unsigned phase;
};

__device__ __forceinline__ PipelineState pipeline_start() {
  PipelineState state;
  state.stage = 0;
  state.phase = 0u;
  return state;
}

__device__ __forceinline__ void pipeline_advance(PipelineState& state) {
  if (++state.stage == plan::kStages) {
    state.stage = 0;
    state.phase ^= 1u;
  }
}

// Moves `stages` stages on, as that many pipeline_advance calls would.
__device__ __forceinline__ void pipeline_skip(PipelineState& state, int stages) {
  const int position = state.stage + stages;
  state.phase ^= (unsigned)(position / plan::kStages) & 1u;
  state.stage = position % plan::kStages;
}

__device__ __forceinline__ unsigned full_barrier(unsigned barriers, int stage) {
  return barriers + plan::kBarrierBytes * stage;
}

__device__ __forceinline__ unsigned empty_barrier(unsigned barriers, int stage) {
  return barriers + plan::kBarrierBytes * (stage + plan::kStages);
}

// Thread 0 before the block starts: every stage empty, nothing arrived.
__device__ __forceinline__ void pipeline_init(unsigned barriers) {
  for (int s = 0; s < plan::kStages; ++s) {
    mbarrier_init(full_barrier(barriers, s), 1u);
    mbarrier_init(empty_barrier(barriers, s), plan::kEmptyArrivals);
  }
  fence_mbarrier_init();
}

// The producer takes a stage once its consumers released it and announces
// the bytes that TMA will deliver there; returns the full barrier.
__device__ __forceinline__ unsigned producer_acquire(const PipelineState& state,
                                                     unsigned barriers) {
  const unsigned empty = empty_barrier(barriers, state.stage);
  const unsigned full = full_barrier(barriers, state.stage);
  mbarrier_wait(empty, state.phase ^ 1u);
  mbarrier_arrive_expect_tx(full, plan::kStageTxBytes);
  return full;
}

// A consumer waits until the stage's bytes have arrived.
__device__ __forceinline__ void consumer_wait(const PipelineState& state,
                                              unsigned barriers) {
  const unsigned full = full_barrier(barriers, state.stage);
  mbarrier_wait(full, state.phase);
}

// A consumer warp hands `stage` back to the producer(s) once its wgmma
// reads of it are complete, in every CTA of its cluster (with a 2-CTA
// cluster their producers multicast into this CTA's stage too).
__device__ __forceinline__ void consumer_release(int stage, unsigned barriers,
                                                 int lane) {
  const unsigned empty = empty_barrier(barriers, stage);
{{RELEASE_STAGE}}
}
