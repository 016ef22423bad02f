// A ring of shared-memory stages between a producer and its consumers; a
// kernel may have several, each over its own mbarriers. Each stage has a
// "full" mbarrier (its TxBytes of TMA arrived) and an "empty" one
// (EmptyArrivals consumer warps of the cluster finished reading it):
// full[s] at barriers + s * kBarrierBytes, then empty[s] after all of them.
// A position in the ring is the stage and the parity of the lap around it,
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

template <int Stages, unsigned EmptyArrivals, unsigned TxBytes>
struct Pipeline {
  static constexpr int kStages = Stages;

  unsigned barriers;

  __device__ __forceinline__ unsigned full(int stage) const {
    return barriers + plan::kBarrierBytes * stage;
  }

  __device__ __forceinline__ unsigned empty(int stage) const {
    return barriers + plan::kBarrierBytes * (stage + Stages);
  }

  __device__ __forceinline__ void advance(PipelineState& state) const {
    if (++state.stage == Stages) {
      state.stage = 0;
      state.phase ^= 1u;
    }
  }

  // Moves `stages` stages on, as that many advance calls would.
  __device__ __forceinline__ void skip(PipelineState& state, int stages) const {
    const int position = state.stage + stages;
    state.phase ^= (unsigned)(position / Stages) & 1u;
    state.stage = position % Stages;
  }

  // Thread 0 before the block starts: every stage empty, nothing arrived.
  __device__ __forceinline__ void init() const {
    for (int s = 0; s < Stages; ++s) {
      mbarrier_init(full(s), 1u);
      mbarrier_init(empty(s), EmptyArrivals);
    }
    fence_mbarrier_init();
  }

  // The producer takes a stage once its consumers released it and announces
  // the bytes that TMA will deliver there; returns the full barrier.
  __device__ __forceinline__ unsigned producer_acquire(const PipelineState& state) const {
    mbarrier_wait(empty(state.stage), state.phase ^ 1u);
    mbarrier_arrive_expect_tx(full(state.stage), TxBytes);
    return full(state.stage);
  }

  // A consumer waits until the stage's bytes have arrived.
  __device__ __forceinline__ void consumer_wait(const PipelineState& state) const {
    mbarrier_wait(full(state.stage), state.phase);
  }

  // A consumer warp hands `stage` back to the producer(s) once its reads of
  // it are complete, in every CTA of its cluster (with a 2-CTA cluster
  // their producers multicast into this CTA's stage too).
  __device__ __forceinline__ void consumer_release(int stage, int lane) const {
    const unsigned empty_barrier = empty(stage);
{{RELEASE_STAGE}}
  }
};
