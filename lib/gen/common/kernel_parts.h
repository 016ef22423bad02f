#ifndef PTXGEN_LIB_GEN_COMMON_KERNEL_PARTS_H_
#define PTXGEN_LIB_GEN_COMMON_KERNEL_PARTS_H_

// The parts every warp-specialized kernel family is made of, rendered
// through a KernelBuilder: wgmma descriptors of shared tiles, the pipeline
// (a ring of stages over mbarriers, of which a kernel may have several),
// named barriers and the consumers' turns at the tensor cores, register
// reallocation between producer and consumers.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lib/gen/common/kernel_builder.h"
#include "ptxgen/ptx/fragment_layout.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/warp_specialization.h"

namespace ptxgen::gen {

inline constexpr int kThreadsPerWarpgroup = 128;
inline constexpr int kRegistersPerSm = 65536;
// The kernel aligns the dynamic shared memory base itself: slack for it.
inline constexpr int kSharedBaseAlignment = 1024;

// `value` rounded up to a multiple of `multiple` (shared-memory offsets and
// sizes: both small and positive).
int RoundUp(int value, int multiple);

// The registers each thread of a block of `threads` is launched with at
// most: __launch_bounds__(threads, 1) gives the SM's over the threads, in
// the allocator's steps of 8 (168 at 384 threads, 96 at 640).
int LaunchRegistersPerThread(int threads);

// What each of `consumers` warpgroups may take by setmaxnreg once the
// producer warpgroup kept `producer_registers` a thread: the registers the
// launch gave the block shared out evenly, in setmaxnreg's steps of 8. Each
// family caps it.
int ConsumerRegisterShare(int consumers, int producer_registers);

// The widest swizzle whose span divides a tile's contiguous bytes (16-byte
// core matrices without one).
ptx::Swizzle SwizzleFor(int contiguous_bytes);

// The constant fields of the descriptor of `tile`'s first operand, as a
// C++ literal; the kernel adds a tile's shared address with
// matrix_descriptor().
std::string DescriptorFields(KernelBuilder& builder,
                             const ptx::SharedTile& tile);

// matrix_descriptor(fields, address): the layer-1 address field of a shared
// address added to a layout's constant fields.
std::string MatrixDescriptorFunction();

// bar.sync of a named barrier's threads, which templates call.
void DefineNamedBarrierSync(KernelBuilder& builder);

// wait_mma_turn and pass_mma_turn (mma_turns.cu): a consumer's turn barrier
// counts its own threads waiting and the other consumer's arriving.
std::string MmaTurnsPart(KernelBuilder& builder);

// The mbarrier operations of a ring (pipeline part, v1's single stage).
void DefineRingBarriers(KernelBuilder& builder);

// Pipeline<Stages, EmptyArrivals, TxBytes> (pipeline.cu) for CTAs in
// clusters of `cluster_ctas`: a consumer warp releases a stage in each.
std::string PipelinePart(KernelBuilder& builder, int cluster_ctas);

// The rows a warpgroup thread's accumulators hold in a 64-row slice, as
// layer 1's fragment layout puts them: which of the thread's two rows each
// register is in (0 or 1), and how far below the first the second lies.
// Block scaling reads a scale of A per row; the online softmax keeps a
// maximum and a sum per row.
struct FragmentRows {
  std::vector<int> row_of_register;
  int step = 0;
};
// A layout of other rows is kept as an error naming `user`.
FragmentRows RowsOfFragment(KernelBuilder& builder,
                            const ptx::AccumulatorFragment& fragment,
                            absl::string_view user);

// setmaxnreg to `count` registers a thread, indented for a kernel body.
std::string SetMaxRegisters(KernelBuilder& builder,
                            ptx::RegisterAdjustment adjustment, int count);

}  // namespace ptxgen::gen

#endif  // PTXGEN_LIB_GEN_COMMON_KERNEL_PARTS_H_
