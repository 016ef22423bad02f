#ifndef PTXGEN_PTX_TMA_H_
#define PTXGEN_PTX_TMA_H_

// TMA: Hopper's bulk tensor copies between global and shared memory
// (cp.async.bulk.tensor and its bulk groups), tile mode only. The tensor map
// is a CUtensorMap encoded on the host and passed as a
// `const __grid_constant__` kernel parameter; every statement here takes its
// generic address ("tensor_map", b64). Shared-memory operands are 32-bit
// shared-window addresses (b32).

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// Tensor copies address a box of 1 to 5 dimensions.
inline constexpr int kMinTensorRank = 1;
inline constexpr int kMaxTensorRank = 5;
// A tensor copy's box spans at most this many elements in each dimension.
inline constexpr int kMaxTensorBoxExtent = 256;

// The global tensor a copy reads or writes (cuTensorMapEncodeTiled's
// rules): its address and every stride on 16-byte boundaries, strides
// below 2^40 bytes, 1 to 2^32 elements in each dimension. The GEMM's
// problem rules (leading dimensions, batch strides) and the runtime's
// tensor-map check both read these.
inline constexpr int64_t kTensorGlobalAlignmentBytes = 16;
inline constexpr int64_t kTensorStrideLimitBytes = int64_t{1} << 40;
inline constexpr int64_t kMaxTensorDimension = int64_t{1} << 32;

// The hardware counts pending bulk groups in a 6-bit field: ptxas accepts
// any N but silently clamps it (checked: 64 and -1 both become 63).
inline constexpr int kMaxBulkPendingGroups = 63;

// The message names the rank rule; ok for 1..5.
absl::Status ValidateTensorRank(int rank);

// cp.async.bulk.tensor global -> shared, completing on an mbarrier.
struct TensorLoad {
  int rank = 2;
  // Also writes the box, at the same shared offset, into every CTA of the
  // cluster named by "cta_mask", and signals each one's mbarrier.
  bool multicast = false;
  // Takes an L2 eviction policy ("cache_policy", from createpolicy).
  bool l2_cache_hint = false;
};

// Global -> shared memory; the copy's bytes complete a transaction on the
// mbarrier. Slots: "dst" (b32 shared address), "tensor_map" (b64), "coords"
// (b32 x rank, innermost first), "mbarrier" (b32 shared address), "cta_mask"
// (b16, multicast only), "cache_policy" (b64, hint only).
absl::StatusOr<Statement> CpAsyncBulkTensorLoad(const TensorLoad& load);

// cp.async.bulk.tensor shared -> global, in a bulk group.
struct TensorStore {
  int rank = 2;
  bool l2_cache_hint = false;
};

// Shared -> global memory, completed through bulk groups (commit, then wait).
// Writers of "src" must run FenceProxyAsyncSharedCta() first. Slots:
// "tensor_map" (b64), "coords" (b32 x rank), "src" (b32 shared address),
// "cache_policy" (b64, hint only).
absl::StatusOr<Statement> CpAsyncBulkTensorStore(const TensorStore& store);

// Closes a bulk group over the stores issued since the last commit.
Statement CpAsyncBulkCommitGroup();

// Waits until at most `pending_groups` (0..63) bulk groups are pending. With
// `read_only` it waits only for their reads of shared memory, which is
// enough to reuse the source buffer.
absl::StatusOr<Statement> CpAsyncBulkWaitGroup(int pending_groups,
                                               bool read_only);

// cp.async.bulk.prefetch.tensor into L2.
struct TensorPrefetch {
  int rank = 2;
  bool l2_cache_hint = false;
};

// Warms L2 with a box that a later load will read. Slots: "tensor_map"
// (b64), "coords" (b32 x rank), "cache_policy" (b64, hint only).
absl::StatusOr<Statement> CpAsyncBulkPrefetchTensor(
    const TensorPrefetch& prefetch);

// Fetches a tensor map into the TMA unit's cache ahead of its first copy,
// so that the copy does not wait for the descriptor. Slot: "tensor_map"
// (b64 generic address of the kernel parameter).
Statement PrefetchTensorMap();

// Makes this thread's generic-proxy writes to shared memory visible to the
// async proxy (TMA stores, wgmma reads).
Statement FenceProxyAsyncSharedCta();

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_TMA_H_
