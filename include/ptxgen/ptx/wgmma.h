#ifndef PTXGEN_PTX_WGMMA_H_
#define PTXGEN_PTX_WGMMA_H_

// wgmma: Hopper's warpgroup matrix multiply-accumulate (PTX ISA 9.7.15).
// This header is the single source of the legal shapes and type rules; the
// kernel generators and the descriptor validation ask it.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/statement.h"

namespace ptxgen::ptx {

// Every wgmma has M = 64.
inline constexpr int kWgmmaM = 64;
// N runs from 8 to 256 in steps of 8 (s8/u8 inputs skip some: LegalWgmmaN).
inline constexpr int kMinWgmmaN = 8;
inline constexpr int kMaxWgmmaN = 256;
inline constexpr int kWgmmaNStep = 8;
// wgmma.wait_group takes 0..7.
inline constexpr int kMaxWgmmaPendingGroups = 7;

// The instruction's K for an input type: 16 (f16, bf16), 8 (tf32),
// 32 (e4m3, e5m2, s8, u8).
absl::StatusOr<int> WgmmaK(ScalarType input_type);

// The legal N for an input type, ascending.
std::vector<int> LegalWgmmaN(ScalarType input_type);
bool IsLegalWgmmaN(ScalarType input_type, int n);
// The same, for messages: "8..256 step 8".
std::string LegalWgmmaNText(ScalarType input_type);

// Scale immediates (scale-a, scale-b) exist for floating-point inputs only.
bool WgmmaHasScaleImmediates(ScalarType input_type);

// Transpose immediates (MN-major operands) exist for f16 and bf16 only.
bool WgmmaSupportsTranspose(ScalarType input_type);

// Where operand A comes from: SS (shared-memory descriptor) or RS (four b32
// registers per thread).
enum class WgmmaASource { kSharedMemory, kRegisters };

// One wgmma.mma_async form: N, the input and accumulator types, the
// operands' sources and the transpose and scale immediates.
struct WgmmaMma {
  int n = 0;
  ScalarType a_type = ScalarType::kF16;
  ScalarType b_type = ScalarType::kF16;
  ScalarType d_type = ScalarType::kF32;
  WgmmaASource a_source = WgmmaASource::kSharedMemory;
  int scale_a = 1;  // +1 or -1, float inputs only
  int scale_b = 1;
  bool transpose_a = false;  // f16/bf16 SS only
  bool transpose_b = false;  // f16/bf16 only
  bool satfinite = false;    // integer inputs only
};

// Checks `mma` against the sm_90a rules; the message names the broken rule.
absl::Status ValidateWgmma(const WgmmaMma& mma);

// Accumulator registers per thread: N/2 for f32 and s32, N/4 for packed f16.
int WgmmaAccumulatorRegisters(ScalarType d_type, int n);

// Where each accumulator register lies in the tile: AccumulatorFragment
// (fragment_layout.h).

// wgmma.mma_async. Slots: "d" (accumulators, read-write), "a" (b64
// descriptor, or 4 b32 registers in the RS form), "b" (b64 descriptor),
// "scale_d" (predicate: false means D = A*B, true means D = A*B + D).
absl::StatusOr<Statement> WgmmaMmaAsync(const WgmmaMma& mma);

// wgmma.fence: orders register and shared-memory writes before wgmma reads.
Statement WgmmaFence();
// wgmma.commit_group: closes a group over the wgmmas issued since the last.
Statement WgmmaCommitGroup();
// wgmma.wait_group N: waits until at most N groups are pending
// (N in 0..kMaxWgmmaPendingGroups).
absl::StatusOr<Statement> WgmmaWaitGroup(int pending_groups);

// An empty statement that names the accumulators as read-written, so the
// compiler keeps their uses on the right side of a wait (else ptxas injects
// waits: C7517/C7519). Slot "d".
absl::StatusOr<Statement> WgmmaAccumulatorPin(ScalarType d_type, int n);

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_WGMMA_H_
