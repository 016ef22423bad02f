#ifndef PTXGEN_PTX_FRAGMENT_LAYOUT_H_
#define PTXGEN_PTX_FRAGMENT_LAYOUT_H_

// Fragment layouts: which matrix element each register of each thread holds
// (the wgmma accumulator, wgmma's A in registers, stmatrix's values) and which
// row each lane addresses (stmatrix). Each mapping is written once, as
// IndexExpressions of the thread and register, and read two ways: evaluated on
// the host (Coordinate, Address, ...) and rendered as CUDA C++ __device__
// functions for generated kernels (DeviceFunctions). Host planning and device
// code therefore cannot disagree.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/ptx/warp_specialization.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen::ptx {

// Threads per warp: lanes of the fragment layouts.
inline constexpr int kWarpSize = 32;

// Values of the variables an IndexExpression reads.
using IndexBindings = std::map<std::string, int, std::less<>>;

// An int expression over named int variables: constants, variables, sums,
// and products, quotients and remainders by constants, with C++'s int
// arithmetic (CUDA's too). The same value gives the host's number
// (Evaluate) and the device's text (Render).
class IndexExpression {
 public:
  // Implicit, so that a layout reads as its formula: 8 * (reg / 2 % 2).
  IndexExpression(int constant);  // NOLINT(google-explicit-constructor)
  static IndexExpression Variable(absl::string_view name);

  friend IndexExpression operator+(const IndexExpression& a,
                                   const IndexExpression& b);
  friend IndexExpression operator*(int factor, const IndexExpression& a);
  friend IndexExpression operator/(const IndexExpression& a, int divisor);
  friend IndexExpression operator%(const IndexExpression& a, int divisor);

  // The value with the variables bound; a variable without a value or a
  // division by zero is an error that names it.
  absl::StatusOr<int> Evaluate(const IndexBindings& bindings) const;
  // C++ text with parentheses only where C++ precedence needs them, e.g.
  // "16 * (thread / 32) + thread % 32 / 4".
  std::string Render() const;

 private:
  struct Node;
  explicit IndexExpression(std::shared_ptr<const Node> node);

  std::shared_ptr<const Node> node_;
};

// A position in a matrix: row and column from its top left element.
struct FragmentCoordinate {
  int row = 0;
  int column = 0;
};
inline bool operator==(const FragmentCoordinate& a,
                       const FragmentCoordinate& b) {
  return a.row == b.row && a.column == b.column;
}

// The accumulator (D) fragment of a wgmma.m64nN with 32-bit accumulators
// (f32, s32; packed f16 ones hold two values a register): register `reg`
// (0..registers()-1) of warpgroup thread `thread` (0..127) holds one element
// of the 64xN tile (PTX ISA, "Matrix fragments for wgmma.mma_async", the
// D-matrix figure). Warp w holds rows 16w..16w+15; within a warp, lanes form
// an 8x4 grid over 8-column chunks, and registers walk a pair of columns,
// then the row 8 below, then the next chunk. The layout is separable:
// Coordinate(t, r) = Coordinate(t, 0) + Coordinate(0, r).
class AccumulatorFragment {
 public:
  static constexpr int kThreads = 128;
  static constexpr int kRowsPerWarp = 16;

  // The fragment of `mma`'s accumulators: `mma` must pass ValidateWgmma and
  // accumulate in 32 bits.
  static absl::StatusOr<AccumulatorFragment> Of(const WgmmaMma& mma);

  int n() const { return n_; }
  // Registers per thread: N/2.
  int registers() const;

  // The element of register `reg` of thread `thread`, as expressions of
  // theirs.
  static IndexExpression RowExpression(const IndexExpression& thread,
                                       const IndexExpression& reg);
  static IndexExpression ColumnExpression(const IndexExpression& thread,
                                          const IndexExpression& reg);

  // The same, on the host; a thread or register outside the fragment is an
  // error naming its range.
  absl::StatusOr<FragmentCoordinate> Coordinate(int thread, int reg) const;

  // `int accumulator_row(int thread, int reg)` and `accumulator_column`, the
  // expressions above as __device__ functions.
  std::string DeviceFunctions() const;

 private:
  AccumulatorFragment(int n, ScalarType d_type) : n_(n), d_type_(d_type) {}

  int n_;
  ScalarType d_type_;
};

// The A fragment of a wgmma.mma_async.m64nNk{K} that reads A from registers
// (the RS form; PTX ISA, "Matrix fragments for wgmma.mma_async", the
// A-matrix figures of m64nNk8, m64nNk16 and m64nNk32; CUTLASS's
// GMMA::ALayout_64x8, 64x16 and 64x32): each warpgroup thread holds
// kRegisters b32 registers, each packing E = 32 / (the input's bits)
// elements of the 64xK tile (element 0 in the low bits), K = 8E. Rows are
// the accumulator fragment's (warp w holds rows 16w..16w+15, lanes form an
// 8x4 grid, register bit 0 picks the row 8 below); lane % 4 picks E adjacent
// columns and register bit 1 the right half of K. For 16-bit inputs this is
// the accumulator fragment of m64n16, register r packing accumulators 2r and
// 2r + 1. The layout is separable:
// Coordinate(t, r, e) = Coordinate(t, 0, 0) + Coordinate(0, r, e).
class RegisterAFragment {
 public:
  static constexpr int kThreads = 128;
  static constexpr int kRegisters = 4;

  // The fragment of `mma`'s A: `mma` must pass ValidateWgmma and read A from
  // registers.
  static absl::StatusOr<RegisterAFragment> Of(const WgmmaMma& mma);

  ScalarType a_type() const { return a_type_; }
  // Elements a register packs: 1 (tf32), 2 (f16, bf16), 4 (8-bit inputs).
  int elements() const { return elements_; }
  // The tile's columns, the instruction's K: 8 elements().
  int k() const;

  // The element `element` of register `reg` of thread `thread`, as
  // expressions of theirs (the row is the same for a register's elements).
  static IndexExpression RowExpression(const IndexExpression& thread,
                                       const IndexExpression& reg);
  IndexExpression ColumnExpression(const IndexExpression& thread,
                                   const IndexExpression& reg,
                                   const IndexExpression& element) const;

  // The same, on the host; a thread, register or element outside the
  // fragment is an error naming its range.
  absl::StatusOr<FragmentCoordinate> Coordinate(int thread, int reg,
                                                int element) const;

  // `int register_a_row(int thread, int reg)` and `register_a_column(int
  // thread, int reg, int element)`, the expressions above as __device__
  // functions.
  std::string DeviceFunctions() const;

 private:
  RegisterAFragment(ScalarType a_type, int elements)
      : a_type_(a_type), elements_(elements) {}

  ScalarType a_type_;
  int elements_;
};

// The accumulators of one wgmma (an AccumulatorFragment, e.g. S = Q * K^T)
// taken as the register A operand of a second one (a RegisterAFragment of K
// columns, e.g. P * V), K columns a slice, without any exchange between
// threads: in slice j (accumulator columns jK..jK+K-1), element e of A
// register r takes an accumulator register of the same thread. A thread
// holds the same rows in both fragments and, in each row, as many columns of
// a slice; A takes them in the order the accumulators hold them: pairs of
// adjacent columns, 8 columns apart.
//   16-bit inputs: that is A's own column order (AColumn is the identity).
// Register r of slice j packs accumulators 8j + 2r and 8j + 2r + 1 (one
// cvt.rn.f16x2.f32 or .bf16x2), and B is read as it is.
//   8-bit inputs: in column order A would need elements of other lanes of a
// quad (lane t holds columns 4t..4t+3 of each 16 in A but 2t, 2t + 1 of each
// 8 in the accumulators), so the conversion would shuffle. In held order,
// register r of slice j packs accumulators 16j + 8(r / 2) + 2(r % 2) +
// {0, 1, 4, 5} (FlashAttention-3's permute_Cregs_fp8), and accumulator
// column c of a slice lands in A's column AColumn(c), a permutation within
// the slice that B's rows (V's keys) must follow: B's row AColumn(c) must
// hold the row that goes with the slice's column c.
class AccumulatorToRegisterA {
 public:
  // `accumulator`'s N must be a multiple of `a`'s K, and `a` must pack 16-bit
  // or 8-bit elements. AColumn is derived from both layouts' expressions.
  static absl::StatusOr<AccumulatorToRegisterA> Of(
      const AccumulatorFragment& accumulator, const RegisterAFragment& a);

  // Slices of the accumulators: N / K.
  int slices() const { return n_ / k_; }
  // The columns of a slice, A's K.
  int k() const { return k_; }
  // Whether A's columns are the accumulators' in order, so B's rows need no
  // permutation (16-bit inputs).
  bool KeepsColumnOrder() const;

  // The accumulator register that element `element` of A register `reg`
  // takes in slice `slice` (in the same thread).
  IndexExpression RegisterExpression(const IndexExpression& slice,
                                     const IndexExpression& reg,
                                     const IndexExpression& element) const;

  // The same, on the host; errors name the argument out of range.
  absl::StatusOr<int> Register(int slice, int reg, int element) const;
  // The column of A (0..K-1) where column `column` of every slice lands.
  absl::StatusOr<int> AColumn(int column) const;

  // `int register_a_accumulator(int slice, int reg, int element)`, the
  // register expression as a __device__ function.
  std::string DeviceFunctions() const;

 private:
  AccumulatorToRegisterA(int n, int k, int elements)
      : n_(n), k_(k), elements_(elements) {}

  int n_;
  int k_;
  int elements_;
  std::vector<int> a_columns_;  // AColumn, indexed by the slice's column
};

// The fragments of stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16
// (PTX ISA, "stmatrix"): lanes 8i..8i+7 supply the shared addresses of rows
// 0..7 of matrix i (lanes past the last matrix supply none); value i of a
// lane holds two b16 elements (half 0 in the low 16 bits) of matrix i, in
// the same place in each matrix.
class StMatrixFragment {
 public:
  static constexpr int kMatrixRows = 8;
  static constexpr int kMatrixColumns = 8;

  // The fragment of `stmatrix`, which must be a legal stmatrix
  // (StMatrixSharedB16's rules).
  static absl::StatusOr<StMatrixFragment> Of(const StMatrix& stmatrix);

  int matrices() const { return stmatrix_.matrices; }

  // The matrix, and its row, whose address lane `lane` supplies.
  static IndexExpression AddressMatrixExpression(const IndexExpression& lane);
  static IndexExpression AddressRowExpression(const IndexExpression& lane);
  // Where half `half` of a lane's value lies in its matrix: row lane / 4,
  // columns 2 (lane % 4) + half, or transposed with .trans.
  IndexExpression ElementRowExpression(const IndexExpression& lane,
                                       const IndexExpression& half) const;
  IndexExpression ElementColumnExpression(const IndexExpression& lane,
                                          const IndexExpression& half) const;

  // The same, on the host: the address as {matrix, row}; errors name the
  // lane or half out of range (a lane that supplies no address included).
  absl::StatusOr<FragmentCoordinate> Address(int lane) const;
  absl::StatusOr<FragmentCoordinate> Element(int lane, int half) const;

 private:
  explicit StMatrixFragment(const StMatrix& stmatrix) : stmatrix_(stmatrix) {}

  StMatrix stmatrix_;
};

// The accumulators of an AccumulatorFragment stored with stmatrix.x4
// (16-bit values, no .trans), kStepColumns columns a step: a warp's register
// pair p is stmatrix's fragment of the 8x8 block (p % 2, p / 2) of its 16
// rows, so the x4 of step s stores pairs 4s..4s+3 (value i: pair 4s + i,
// matrix i at block (i % 2, 2s + i / 2)), and lanes address their rows
// accordingly.
class AccumulatorStMatrix {
 public:
  static constexpr int kStepColumns = 16;

  // `stmatrix` must be .x4 without .trans, and the tile's N a multiple of
  // kStepColumns.
  static absl::StatusOr<AccumulatorStMatrix> Of(
      const AccumulatorFragment& accumulator, const StMatrix& stmatrix);

  int steps() const { return n_ / kStepColumns; }

  // The row of the 64-row tile, and the column in step `step`, whose
  // shared address warpgroup thread `thread` supplies.
  static IndexExpression AddressRowExpression(const IndexExpression& thread);
  static IndexExpression AddressColumnExpression(const IndexExpression& thread,
                                                 const IndexExpression& step);
  // The accumulator register that half `half` of value `value` of step
  // `step` packs.
  static IndexExpression RegisterExpression(const IndexExpression& step,
                                            const IndexExpression& value,
                                            const IndexExpression& half);

  // The same, on the host; errors name the argument out of range.
  absl::StatusOr<FragmentCoordinate> Address(int thread, int step) const;
  absl::StatusOr<int> Register(int step, int value, int half) const;

  // `int stmatrix_row(int thread)`, `stmatrix_column(int thread, int step)`
  // and `stmatrix_register(int step, int value, int half)`, the expressions
  // above as __device__ functions.
  std::string DeviceFunctions() const;

 private:
  explicit AccumulatorStMatrix(int n) : n_(n) {}

  int n_;
};

}  // namespace ptxgen::ptx

#endif  // PTXGEN_PTX_FRAGMENT_LAYOUT_H_
