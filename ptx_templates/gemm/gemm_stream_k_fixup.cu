// Stream-K's meeting of the pieces of a shared tile. The workspace holds a
// flag per consumer warpgroup of each CTA, then their slots of partial
// sums. A piece that does not end its tile leaves its partial sums in this
// CTA's workspace slot, raises the slot's flag and returns false: nothing
// to store. The piece that ends the tile adds the slots of the clusters
// before it that shared the tile, waiting for each flag and lowering it for
// the next launch, and returns true. Slots hold each thread's accumulators
// 4 at a time (their bits in f32 words), thread-minor, so both sides read
// and write whole lines.
__device__ __forceinline__ bool stream_k_fixup(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators], const Work& w,
    float* workspace, const volatile Schedule& schedule, int cluster,
    unsigned rank, int consumer, int thread, int k_tiles) {
  constexpr int kVectors = plan::kSliceAccumulators / 4;
  constexpr int kSlotVectors = plan::kThreadsPerWarpgroup * plan::kMSlices * kVectors;
  int* const flags = (int*)workspace;
  // Past each cluster's flags, padded as the host planned them.
  float4* const slots =
      (float4*)(flags + gridDim.x / plan::kClusterM * plan::kFlagWordsPerCluster);
  if (w.kt_end != k_tiles) {
    float4* const slot =
        slots + ((long long)blockIdx.x * plan::kConsumers + consumer) * kSlotVectors;
#pragma unroll
    for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
      for (int q = 0; q < kVectors; ++q) {
        __stcg(slot + (s * kVectors + q) * plan::kThreadsPerWarpgroup + thread,
               make_float4(accumulator_word(acc[s][4 * q]),
                           accumulator_word(acc[s][4 * q + 1]),
                           accumulator_word(acc[s][4 * q + 2]),
                           accumulator_word(acc[s][4 * q + 3])));
      }
    }
    named_barrier_sync(plan::kFirstConsumerBarrier + consumer, plan::kThreadsPerWarpgroup);
    if (thread == 0) {
      int* const flag = flags + blockIdx.x * plan::kConsumers + consumer;
      store_release_gpu((unsigned long long)flag, 1u);
    }
    return false;
  }
  for (int sharer = w.kt_begin == 0 ? cluster : first_sharer(schedule, w.unit);
       sharer < cluster; ++sharer) {
    const int peer = (sharer * plan::kClusterM + (int)rank) * plan::kConsumers + consumer;
    if (thread == 0) {
      int* const flag = flags + peer;
      unsigned raised = 0;
      do {
        load_acquire_gpu(raised, (unsigned long long)flag);
      } while (raised == 0);
      *flag = 0;
    }
    named_barrier_sync(plan::kFirstConsumerBarrier + consumer, plan::kThreadsPerWarpgroup);
    const float4* const slot = slots + (long long)peer * kSlotVectors;
#pragma unroll
    for (int s = 0; s < plan::kMSlices; ++s) {
#pragma unroll
      for (int q = 0; q < kVectors; ++q) {
        const float4 part = __ldcg(slot + (s * kVectors + q) * plan::kThreadsPerWarpgroup + thread);
        acc[s][4 * q] += accumulator_of_word(part.x);
        acc[s][4 * q + 1] += accumulator_of_word(part.y);
        acc[s][4 * q + 2] += accumulator_of_word(part.z);
        acc[s][4 * q + 3] += accumulator_of_word(part.w);
        // Bounds the loads ptxas keeps in flight (it moves loads across a
        // CTA fence, not across a barrier): all at once spill.
        if (q % 8 == 7) {
          named_barrier_sync(plan::kFirstConsumerBarrier + consumer, plan::kThreadsPerWarpgroup);
        }
      }
    }
  }
  return true;
}
