// Split-K inside a cluster: the CTA of rank r computes slice r of each
// tile's K, and the slices meet in rank 0 through distributed shared
// memory. Each consumer of another rank leaves its partial sums in its own
// partials buffer and every thread arrives on rank 0's ready barrier;
// rank 0's consumer waits for all of them, adds each peer's buffer into
// its accumulators, arrives on every peer's free barrier and stores the
// tile. A peer waits on its free barrier before it overwrites the buffer
// with the next tile's sums. `meetings` counts the tiles met so far: the
// phase parity of both barriers. Buffers hold each thread's accumulators
// 4 at a time (their bits in f32 words), thread-minor, so both sides move
// whole lines.
__device__ __forceinline__ unsigned partials_ready_barrier(unsigned barriers, int consumer) {
  return barriers + plan::kBarrierBytes * (2 * plan::kStages + consumer);
}

__device__ __forceinline__ unsigned partials_free_barrier(unsigned barriers, int consumer) {
  return barriers + plan::kBarrierBytes * (2 * plan::kStages + plan::kConsumers + consumer);
}

// Thread 0 before the block starts, beside the stage ring's init.
__device__ __forceinline__ void meeting_init(unsigned barriers) {
  for (int consumer = 0; consumer < plan::kConsumers; ++consumer) {
    mbarrier_init(partials_ready_barrier(barriers, consumer), plan::kReadyArrivals);
    mbarrier_init(partials_free_barrier(barriers, consumer), plan::kThreadsPerWarpgroup);
  }
}

// True in rank 0, its accumulators now the whole tile's; false elsewhere.
__device__ __forceinline__ bool meet_in_cluster(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators], const Work& w,
    unsigned base, unsigned barriers, int consumer, int thread, int& meetings) {
  constexpr int kVectors = plan::kSliceAccumulators / 4;
  const unsigned slice = (unsigned)(w.unit % plan::kSplitK);
  const unsigned partials =
      base + plan::kPartialsOffset + consumer * plan::kConsumerPartialsBytes;
  const unsigned ready = partials_ready_barrier(barriers, consumer);
  const unsigned free_barrier = partials_free_barrier(barriers, consumer);
  const unsigned parity = (unsigned)(meetings & 1);
  ++meetings;
  if (slice != 0) {
    if (meetings > 1) {
      mbarrier_wait_cluster(free_barrier, parity ^ 1u);
    }
    float4* const mine = (float4*)__cvta_shared_to_generic(partials);
#pragma unroll
    for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
      for (int q = 0; q < kVectors; ++q) {
        mine[(s * kVectors + q) * plan::kThreadsPerWarpgroup + thread] = make_float4(
            accumulator_word(acc[s][4 * q]), accumulator_word(acc[s][4 * q + 1]),
            accumulator_word(acc[s][4 * q + 2]), accumulator_word(acc[s][4 * q + 3]));
      }
    }
    unsigned leader_ready;
    mapa_shared_cluster(leader_ready, ready, 0u);
    mbarrier_arrive_cluster_release(leader_ready);
    return false;
  }
  mbarrier_wait_cluster(ready, parity);
  // One peer at a time: loads hoisted from several would spill.
#pragma unroll 1
  for (unsigned peer = 1; peer < (unsigned)plan::kSplitK; ++peer) {
    unsigned theirs;
    mapa_shared_cluster(theirs, partials, peer);
#pragma unroll
    for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
      for (int q = 0; q < kVectors; ++q) {
        float part[4];
        const unsigned vector = theirs +
            16u * (unsigned)((s * kVectors + q) * plan::kThreadsPerWarpgroup + thread);
        ld_shared_cluster_v4_f32(part, vector);
        acc[s][4 * q] += accumulator_of_word(part[0]);
        acc[s][4 * q + 1] += accumulator_of_word(part[1]);
        acc[s][4 * q + 2] += accumulator_of_word(part[2]);
        acc[s][4 * q + 3] += accumulator_of_word(part[3]);
      }
    }
  }
  for (unsigned peer = 1; peer < (unsigned)plan::kSplitK; ++peer) {
    unsigned peer_free;
    mapa_shared_cluster(peer_free, free_barrier, peer);
    mbarrier_arrive_cluster_release(peer_free);
  }
  return true;
}
