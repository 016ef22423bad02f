// Where a tile's pieces meet, declared in every kernel so that the consumer
// can name both under `if constexpr`; a kernel defines the one its plan
// takes: stream-K's in the workspace (gemm_stream_k_fixup.cu), a split-K
// meeting's in the cluster (gemm_split_k_meeting.cu).
__device__ bool stream_k_fixup(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators], const Work& w,
    float* workspace, const volatile Schedule& schedule, int cluster,
    unsigned rank, int consumer, int thread, int k_tiles);
__device__ void meeting_init(unsigned barriers);
__device__ bool meet_in_cluster(
    Accumulator (&acc)[plan::kMSlices][plan::kSliceAccumulators], const Work& w,
    unsigned base, unsigned barriers, int consumer, int thread, int& meetings);
