// Every form of the general GEMM on the GPU (gemm.h):
//   D = act(alpha * op(A) * op(B) + beta * C + bias), batched, strided,
// with leading dimensions, checked against a float64 host reference written
// here from gemm.h's definitions. The cases cover, rather than multiply
// out: every layout (A and B each K- or MN-major) with every output type
// from each input type; every epilogue op (alpha, beta with C, C aliasing
// D, bias along m and n in each type, each activation) from each input
// type in two layouts; batches and padded leading dimensions and strides in
// a few combinations; stream-K and 2-CTA-cluster configurations with the
// epilogue ops and MN-major operands; D (and C) stored transposed; and the
// swapped kernels (D^T = B.A^T) of skinny problems, picked by the
// heuristic or forced on others; fp8 (e4m3, e5m2, mixed; promoted, with
// fast accumulation, with per-tensor scales), tf32 and s8/u8 inputs
// (exact s32 D, an s8 D, float D), K-major as wgmma reads them, through the
// same epilogues, batches, paddings and schedules. Shapes are tile
// multiples and ragged ones, down to m = 1.
//
// Every buffer holds NaN wherever no matrix element is: the padding between
// a leading dimension and its row, the gaps between the matrices of a
// batch. So a result that depends on padding shows, and D must keep its
// NaNs: the kernel writes [m, n] of each batch and nothing else (integers
// have no NaN: their padding is 127, an s32 D's poison 0x7F7F7F7F, and
// neither may change outside). Skips
// without a Hopper GPU, apart from the CPU test of the case table. The
// rules ValidateProblem names are problem_rules_test's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/gemm/timing.h"
#include "lib/testing/cublaslt_reference.h"
#include "lib/testing/verification.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/runtime/memory.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;
using runtime::DeviceBuffer;

constexpr ScalarType kF16 = ScalarType::kF16;
constexpr ScalarType kBF16 = ScalarType::kBF16;
constexpr ScalarType kF32 = ScalarType::kF32;
constexpr ScalarType kE4M3 = ScalarType::kE4M3;
constexpr ScalarType kE5M2 = ScalarType::kE5M2;
constexpr ScalarType kTF32 = ScalarType::kTF32;
constexpr ScalarType kS8 = ScalarType::kS8;
constexpr ScalarType kU8 = ScalarType::kU8;
constexpr ScalarType kS32 = ScalarType::kS32;
constexpr BiasAlong kAlongM = BiasAlong::kM;
constexpr BiasAlong kAlongN = BiasAlong::kN;
constexpr Activation kRelu = Activation::kRelu;
constexpr Activation kGelu = Activation::kGelu;
constexpr Activation kGeluTanh = Activation::kGeluTanh;
constexpr Activation kSilu = Activation::kSilu;

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// ---------------------------------------------------------------------------
// The cases.

struct Shape {
  int64_t m, n, k;
};
constexpr Shape kTiles{256, 256, 128};  // multiples of every tile
constexpr Shape kTiles2{384, 512, 192};
constexpr Shape kRagged{257, 129, 72};
constexpr Shape kLarge{1000, 999, 136};
constexpr Shape kTiny{1, 8, 16};
constexpr Shape kShortK{200, 300, 24};  // k below block_k
constexpr Shape kOddK{129, 257, 77};    // K-major rows need padding
// Over two 128x128 tiles per CTA of a persistent grid: each ping-pong
// consumer takes several, passing over the other's stages.
constexpr Shape kManyTiles{1800, 2400, 136};

// A's major order, then B's.
enum class Layout { kKK, kKMN, kMNK, kMNMN };

// The leading dimensions and batch strides beyond the packed ones:
// kAligned keeps every row on 16 bytes (so a TMA store can take D);
// kOdd gives C, D and the bias odd ones (A and B must stay on 16 bytes).
enum class Padding { kNone, kAligned, kOdd };

// Which configuration runs: the heuristic's, the first of CandidateConfigs
// that is of the kind and computes the form, or (kSwapped) the heuristic's
// pick for the swapped problem, run swapped.
// kSplitInCluster2 and 8: split-K 2 and 8 whose slices meet in a cluster.
enum class Pick {
  kHeuristic,
  kStreamK,
  kCluster2,
  kCluster2StreamK,
  kSwapped,
  kSplitInCluster2,
  kSplitInCluster8,
  kTile192,  // a 192-column tile: every other one straddles 128-column blocks
  // Ping-pong (pp): the direct store, the TMA store, a 2-CTA cluster.
  kPingPong,
  kPingPongTma,
  kPingPongCluster2,
};

struct Case {
  GemmProblem problem;
  Padding padding = Padding::kNone;
  bool c_is_d = false;  // one buffer for C and D
  Pick pick = Pick::kHeuristic;

  Case To(ScalarType output) const {
    return With([&](Case& c) { c.problem.output = output; });
  }
  Case Alpha(float alpha) const {
    return With([&](Case& c) { c.problem.alpha = alpha; });
  }
  Case Beta(float beta) const {
    return With([&](Case& c) { c.problem.beta = beta; });
  }
  // D = ... + beta * D as it was (beta 1 unless set).
  Case CIsD() const {
    return With([&](Case& c) {
      c.c_is_d = true;
      if (c.problem.beta == 0) c.problem.beta = 1;
    });
  }
  Case Bias(BiasAlong along, ScalarType type) const {
    return With([&](Case& c) {
      c.problem.bias = along;
      c.problem.bias_type = type;
    });
  }
  Case Act(Activation activation) const {
    return With([&](Case& c) { c.problem.activation = activation; });
  }
  Case Batch(int64_t batch) const {
    return With([&](Case& c) { c.problem.batch = batch; });
  }
  Case Padded() const {
    return With([&](Case& c) { c.padding = Padding::kAligned; });
  }
  Case PaddedOdd() const {
    return With([&](Case& c) { c.padding = Padding::kOdd; });
  }
  Case Config(Pick pick) const {
    return With([&](Case& c) { c.pick = pick; });
  }
  // C and D stored [n, m].
  Case DTransposed() const {
    return With([&](Case& c) { c.problem.d_transposed = true; });
  }
  Case BType(ScalarType b_element) const {
    return With([&](Case& c) { c.problem.b_element = b_element; });
  }
  // Per-tensor scales of A and B (kScaleA, kScaleB on the device).
  Case Scaled() const {
    return With([&](Case& c) { c.problem.scaling = GemmScaling::kTensor; });
  }
  // Block scales (random per case: BlockScaleValues).
  Case BlockScaled() const {
    return With([&](Case& c) { c.problem.scaling = GemmScaling::kBlock; });
  }
  Case FastAccum() const {
    return With([&](Case& c) { c.problem.fast_accumulation = true; });
  }
  // The largest |D| before scale_d, recorded by the kernel.
  Case Amax() const {
    return With([&](Case& c) { c.problem.record_amax = true; });
  }

 private:
  Case With(const std::function<void(Case&)>& change) const {
    Case changed = *this;
    change(changed);
    return changed;
  }
};

// D in the input type (output left unset: the default).
Case Of(ScalarType element, Layout layout, Shape shape) {
  Case c;
  c.problem.m = shape.m;
  c.problem.n = shape.n;
  c.problem.k = shape.k;
  c.problem.element = element;
  const bool a_k = layout == Layout::kKK || layout == Layout::kKMN;
  const bool b_k = layout == Layout::kKK || layout == Layout::kMNK;
  c.problem.a_major = a_k ? MajorOrder::kK : MajorOrder::kMN;
  c.problem.b_major = b_k ? MajorOrder::kK : MajorOrder::kMN;
  return c;
}
Case F16(Layout layout, Shape shape) { return Of(kF16, layout, shape); }
Case BF16(Layout layout, Shape shape) { return Of(kBF16, layout, shape); }
// 8-bit and tf32 inputs are K-major only (wgmma's rule).
Case E4M3(Shape shape) { return Of(kE4M3, Layout::kKK, shape); }
Case E5M2(Shape shape) { return Of(kE5M2, Layout::kKK, shape); }
Case TF32(Shape shape) { return Of(kTF32, Layout::kKK, shape); }
Case S8(Shape shape) { return Of(kS8, Layout::kKK, shape); }
Case U8(Shape shape) { return Of(kU8, Layout::kKK, shape); }

// Scales the integer sums of an s8 D into its range (inputs of |x| <= 8,
// FillRandom's): a power of two, so alpha times an exact s32 sum is exact
// in f32 and the rounding alone remains.
constexpr float kS8Alpha = 1.0f / 32;

// A block-scaled case's scales (gen::BlockScales' layout): random powers
// of two times 1..2, 1/8 to 16, so that a block scale misapplied shows.
struct BlockScaleValues {
  std::vector<float> a, b;
};
BlockScaleValues RandomBlockScales(const GemmProblem& p, uint32_t seed) {
  BlockScaleValues values;
  if (p.scaling != GemmScaling::kBlock) return values;
  const gen::BlockScales counts = gen::BlockScalesOf(p.m, p.n, p.k, p.batch);
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-3, 3);
  auto draw = [&](int64_t count) {
    std::vector<float> drawn(static_cast<size_t>(count));
    for (float& value : drawn) {
      value = std::ldexp(mantissa(random), exponent(random));
    }
    return drawn;
  };
  values.a = draw(counts.a_count);
  values.b = draw(counts.b_count);
  return values;
}

// The scales the per-tensor-scaled cases' kernels read; scale_d for an fp8
// D, enough that the longest sums saturate e4m3 in places.
constexpr float kScaleA = 0.5f, kScaleB = 3.0f, kScaleD = 4.0f;

constexpr Layout kKK = Layout::kKK, kKMN = Layout::kKMN, kMNK = Layout::kMNK,
                 kMNMN = Layout::kMNMN;

std::vector<Case> Cases() {
  return {
      // Every layout with every output type, from each input type; the
      // plain epilogue (D = A.B).
      F16(kKK, kTiles),
      F16(kKMN, kRagged),
      F16(kMNK, kLarge),
      F16(kMNMN, kOddK),  // k = 77: no K-major operand, so no row of k
      F16(kKK, kTiny).To(kBF16),
      F16(kKMN, kShortK).To(kBF16),
      F16(kMNK, kTiles2).To(kBF16),
      F16(kMNMN, kRagged).To(kBF16),
      F16(kKK, kLarge).To(kF32),
      F16(kKMN, kOddK).To(kF32),
      F16(kMNK, kTiny).To(kF32),
      F16(kMNMN, kShortK).To(kF32),
      BF16(kKK, kRagged),
      BF16(kKMN, kTiles),
      BF16(kMNK, kShortK),
      BF16(kMNMN, kLarge),
      BF16(kKK, kOddK).To(kF16),
      BF16(kKMN, kTiny).To(kF16),
      BF16(kMNK, kRagged).To(kF16),
      BF16(kMNMN, kTiles2).To(kF16),
      BF16(kKK, kShortK).To(kF32),
      BF16(kKMN, kLarge).To(kF32),
      BF16(kMNK, kTiles).To(kF32),
      BF16(kMNMN, kTiny).To(kF32),

      // Each epilogue op alone, from each input type, in two layouts.
      F16(kKK, kRagged).Alpha(1.5f),
      BF16(kMNMN, kShortK).To(kF32).Alpha(-0.5f),
      F16(kKMN, kShortK).To(kF32).Beta(-0.75f),
      BF16(kMNK, kRagged).Beta(0.5f),
      F16(kMNK, kRagged).CIsD(),
      BF16(kKMN, kTiles).To(kF32).CIsD(),
      F16(kKK, kShortK).Bias(kAlongM, kF16),
      BF16(kMNMN, kRagged).To(kF16).Bias(kAlongM, kF16),
      F16(kMNMN, kRagged).To(kBF16).Bias(kAlongM, kBF16),
      BF16(kKK, kShortK).Bias(kAlongM, kBF16),
      F16(kKMN, kTiny).To(kF32).Bias(kAlongM, kF32),
      BF16(kMNK, kOddK).Bias(kAlongM, kF32),
      F16(kMNK, kOddK).Bias(kAlongN, kF16),
      BF16(kKMN, kShortK).To(kF32).Bias(kAlongN, kF16),
      F16(kKK, kRagged).To(kBF16).Bias(kAlongN, kBF16),
      BF16(kMNMN, kTiny).Bias(kAlongN, kBF16),
      F16(kMNMN, kShortK).To(kF32).Bias(kAlongN, kF32),
      BF16(kKK, kRagged).Bias(kAlongN, kF32),
      F16(kKK, kShortK).Act(kRelu),
      BF16(kMNK, kRagged).To(kF16).Act(kRelu),
      F16(kKMN, kRagged).To(kF32).Act(kGelu),
      BF16(kMNMN, kShortK).Act(kGelu),
      F16(kMNK, kShortK).Act(kGeluTanh),
      BF16(kKK, kRagged).To(kF32).Act(kGeluTanh),
      F16(kMNMN, kRagged).To(kBF16).Act(kSilu),
      BF16(kKMN, kShortK).Act(kSilu),

      // Every op at once.
      F16(kKK, kLarge).Alpha(0.75f).Beta(0.5f).Bias(kAlongN, kF32).Act(kGelu),
      BF16(kMNK, kRagged)
          .To(kF32)
          .Alpha(1.25f)
          .Beta(-1)
          .Bias(kAlongM, kBF16)
          .Act(kSilu),
      F16(kKMN, kTiles).To(kBF16).CIsD().Bias(kAlongN, kF16).Act(kRelu),
      BF16(kMNMN, kOddK)
          .To(kF16)
          .Alpha(2)
          .Beta(0.25f)
          .Bias(kAlongM, kF32)
          .Act(kGeluTanh),

      // Batches (packed: one bias for the whole batch) and padding (with a
      // batch: a bias per matrix).
      F16(kKK, kRagged).Batch(3),
      BF16(kMNMN, kShortK).To(kF32).Batch(3),
      F16(kKMN, kTiles).Padded(),
      F16(kKK, kOddK).Padded(),
      BF16(kMNK, kRagged).To(kF16).PaddedOdd(),
      F16(kMNMN, kLarge).To(kF32).PaddedOdd(),
      BF16(kKK, kRagged).Batch(3).Bias(kAlongM, kF32).Act(kRelu),
      F16(kMNK, kShortK).Batch(3).Padded().Beta(0.5f).Bias(kAlongN, kBF16),
      BF16(kMNMN, kTiles)
          .Batch(3)
          .Padded()
          .Alpha(0.5f)
          .Bias(kAlongM, kF16)
          .Act(kGelu),
      F16(kKK, kTiny).Batch(3).PaddedOdd().Beta(1).Bias(kAlongN, kF16),
      BF16(kKMN, kOddK).To(kF32).Batch(3).PaddedOdd().CIsD().Act(kSilu),

      // Explicit configurations: stream-K (every tile's k-tiles shared out
      // over all resident CTAs, partial sums meeting in the workspace) and
      // 2-CTA clusters (B multicast to a pair of tile rows).
      F16(kKMN, {640, 768, 1032})
          .Beta(0.5f)
          .Bias(kAlongN, kF32)
          .Act(kGelu)
          .Config(Pick::kStreamK),
      BF16(kMNK, {384, 520, 1000})
          .To(kF32)
          .CIsD()
          .Bias(kAlongM, kBF16)
          .Act(kSilu)
          .Config(Pick::kStreamK),
      F16(kMNMN, kRagged)
          .To(kBF16)
          .Batch(3)
          .PaddedOdd()
          .Alpha(1.5f)
          .Beta(-0.5f)
          .Act(kGeluTanh)
          .Config(Pick::kStreamK),
      F16(kMNK, {520, 600, 200})
          .Beta(1)
          .Bias(kAlongM, kF16)
          .Act(kRelu)
          .Config(Pick::kCluster2),
      BF16(kKMN, kLarge)
          .To(kF32)
          .Bias(kAlongN, kBF16)
          .Act(kGelu)
          .Config(Pick::kCluster2),
      F16(kMNMN, kShortK)
          .Batch(3)
          .Padded()
          .CIsD()
          .Alpha(0.5f)
          .Act(kSilu)
          .Config(Pick::kCluster2),
      BF16(kMNK, {640, 768, 1032})
          .To(kF16)
          .Beta(0.25f)
          .Bias(kAlongN, kF16)
          .Act(kGelu)
          .Config(Pick::kCluster2StreamK),

      // D (and C) stored [n, m].
      F16(kKK, kRagged).DTransposed(),
      BF16(kMNK, kLarge).To(kF32).DTransposed().Beta(0.5f).Bias(kAlongM, kF32),
      F16(kKMN, kTiles).To(kBF16).DTransposed().CIsD().Act(kGelu),
      BF16(kMNMN, kShortK)
          .DTransposed()
          .Batch(3)
          .PaddedOdd()
          .Bias(kAlongN, kBF16),

      // Skinny problems: the heuristic swaps a short m into the tile's
      // columns (m = 1, 13, 16, 40) and keeps a short n there (n = 5, 24).
      F16(kKK, {1, 777, 136}),
      F16(kKK, {13, 1000, 72}).Beta(0.5f).Bias(kAlongM, kF32),
      BF16(kMNMN, {16, 520, 200}).To(kF32).Bias(kAlongN, kBF16).Act(kGelu),
      F16(kMNK, {40, 1032, 1000}).To(kBF16).CIsD().Act(kSilu),
      BF16(kKMN, {1000, 5, 64}).Batch(3).PaddedOdd().Alpha(0.5f),
      F16(kKK, {700, 24, 520}).DTransposed().Bias(kAlongN, kF16).Act(kRelu),
      F16(kMNK, {24, 700, 96}).DTransposed().Beta(-1).Batch(3).Padded(),
      // Swapped kernels forced on problems the heuristic runs unswapped.
      F16(kKMN, kRagged).Beta(0.5f).Bias(kAlongN, kF16).Config(Pick::kSwapped),
      BF16(kMNMN, kLarge)
          .To(kF32)
          .Batch(3)
          .PaddedOdd()
          .Bias(kAlongM, kBF16)
          .Act(kGeluTanh)
          .Config(Pick::kSwapped),
      F16(kKK, kTiles2).DTransposed().CIsD().Config(Pick::kSwapped),

      // Split-K whose slices meet in a cluster, the whole epilogue in the
      // cluster's first CTA; slices of no k-tiles where k is short.
      F16(kKMN, {640, 768, 1032})
          .Beta(0.5f)
          .Bias(kAlongN, kF32)
          .Act(kGelu)
          .Config(Pick::kSplitInCluster2),
      BF16(kMNMN, kRagged)
          .To(kF32)
          .Batch(3)
          .PaddedOdd()
          .Alpha(1.5f)
          .Bias(kAlongM, kBF16)
          .Config(Pick::kSplitInCluster8),
      F16(kKK, kRagged).DTransposed().CIsD().Config(Pick::kSplitInCluster8),
      BF16(kMNMN, kOddK).Beta(-0.5f).Act(kSilu).Config(Pick::kSplitInCluster2),
      F16(kKK, kShortK).Config(Pick::kSplitInCluster8),

      // fp8: every output type from each input type and the mix; promoted
      // (the default), with fast accumulation, with per-tensor scales.
      E4M3(kTiles),
      E4M3(kRagged).To(kF16),
      E4M3(kLarge).To(kF32),
      E5M2(kRagged),
      E5M2(kOddK).To(kF32),
      E4M3(kShortK).BType(kE5M2),
      E5M2(kLarge).BType(kE4M3).To(kF32),
      E4M3(kTiles2).To(kF32).FastAccum(),
      E4M3(kRagged).FastAccum().Scaled(),
      E4M3(kLarge).Scaled(),
      E5M2(kTiny).To(kF32).Scaled(),
      E4M3({512, 384, 4096}).To(kF32),  // promotion over 32 stages
      // fp8 through the epilogues, batches, paddings and schedules.
      E4M3(kRagged).Alpha(0.75f).Beta(0.5f).Bias(kAlongN, kF32).Act(kGelu),
      E4M3(kLarge).To(kF16).CIsD().Bias(kAlongM, kBF16).Act(kSilu).Scaled(),
      E5M2(kRagged).Batch(3).PaddedOdd().Bias(kAlongM, kF16),
      E4M3(kTiles).To(kF32).Batch(3).Padded().Beta(-1).Act(kRelu),
      E4M3(kRagged).DTransposed().Bias(kAlongN, kBF16),
      E4M3({640, 768, 1040}).Beta(0.5f).Config(Pick::kStreamK),
      E4M3({520, 600, 208}).To(kF32).Scaled().Config(Pick::kCluster2),
      E4M3(kRagged).FastAccum().Config(Pick::kSwapped),
      E5M2({640, 768, 1040}).Act(kGelu).Config(Pick::kSplitInCluster2),
      E4M3(kRagged).To(kF32).Config(Pick::kSplitInCluster8),
      E4M3({1, 777, 144}).Scaled(),
      E4M3({16, 4096, 1024}).FastAccum(),
      E5M2({13, 1000, 72}).To(kF32).Beta(0.5f).Bias(kAlongM, kF32),
      E4M3({700, 24, 520}).DTransposed().Act(kRelu),
      // fp8 D: saturated, times scale_d when scaled; the amax of D, of fp8
      // and 16-bit D alike, through every store and schedule.
      E4M3(kRagged).To(kE4M3),
      E4M3(kLarge).To(kE4M3).Scaled().Amax(),
      E5M2(kRagged).To(kE5M2).Scaled().Bias(kAlongN, kBF16).Act(kGelu).Amax(),
      E4M3(kTiles).BType(kE5M2).To(kE5M2).Scaled(),
      E4M3(kRagged).Batch(3).PaddedOdd().To(kE4M3).Scaled().Amax(),
      E4M3({640, 768, 1040}).To(kE4M3).Scaled().Amax().Config(Pick::kStreamK),
      E4M3(kRagged).To(kE4M3).Amax().Config(Pick::kSwapped),
      E4M3(kRagged).To(kE4M3).Amax().Config(Pick::kSplitInCluster2),
      E4M3(kLarge).To(kE4M3).Scaled().FastAccum().Amax().Config(
          Pick::kCluster2),
      E4M3({16, 4096, 1024}).To(kE4M3).Scaled().Amax(),
      // Block scaling: one k-block, ragged ones, many; tiles straddling
      // B's column blocks; the epilogues, batches and schedules.
      E4M3(kTiles).BlockScaled(),
      E4M3(kRagged).BlockScaled(),
      E4M3({1000, 999, 1040}).To(kF32).BlockScaled(),
      E5M2(kLarge).BType(kE4M3).To(kF16).BlockScaled(),
      E4M3({512, 384, 4096}).To(kF32).BlockScaled(),
      E4M3({300, 600, 400}).BlockScaled().Config(Pick::kTile192),
      E4M3({300, 600, 400})
          .To(kF32)
          .BType(kE5M2)
          .BlockScaled()
          .Config(Pick::kTile192),
      E4M3(kRagged)
          .Batch(3)
          .PaddedOdd()
          .Bias(kAlongN, kBF16)
          .Act(kGelu)
          .BlockScaled()
          .Amax(),
      E4M3(kLarge).To(kF16).CIsD().Alpha(0.5f).BlockScaled(),
      E4M3({640, 768, 1040}).Batch(2).BlockScaled(),
      E4M3({520, 600, 208}).To(kF32).BlockScaled().Config(Pick::kCluster2),
      E4M3({640, 768, 1040})
          .Act(kRelu)
          .BlockScaled()
          .Config(Pick::kSplitInCluster2),
      E4M3(kRagged).To(kF32).BlockScaled().Config(Pick::kSplitInCluster8),
      E4M3({16, 4096, 1024}).BlockScaled(),
      E4M3({700, 24, 520}).DTransposed().BlockScaled(),
      BF16(kKK, kLarge).Amax(),
      F16(kMNK, kRagged).Beta(0.5f).Bias(kAlongM, kF32).Act(kSilu).Amax(),
      TF32(kRagged).To(kE4M3).Amax(),

      // tf32: f32 in memory, f32 out by default.
      TF32(kTiles),
      TF32(kRagged).To(kBF16),
      TF32(kOddK).To(kF16),
      TF32(kLarge).Alpha(2).Beta(0.5f).Bias(kAlongN, kF32).Act(kGeluTanh),
      TF32(kRagged).Batch(3).PaddedOdd().CIsD(),
      TF32({640, 768, 1032}).Config(Pick::kStreamK),
      TF32(kLarge).Config(Pick::kCluster2),
      TF32(kRagged).Bias(kAlongM, kBF16).Config(Pick::kSplitInCluster2),
      TF32({8, 1000, 520}),
      TF32(kTiny).DTransposed(),

      // s8/u8: exact s32 sums into an s32 D (the default), alpha times them
      // rounded into an s8 D with saturation, or a float D through the
      // epilogue's ops; through the batches, paddings and schedules.
      S8(kTiles),
      S8(kRagged),
      U8(kOddK),
      S8(kLarge).BType(kU8),
      U8(kShortK).BType(kS8).To(kF32),
      S8({512, 384, 4096}),  // 32 stages, sums beyond f32's 24 bits
      S8(kRagged).To(kS8).Alpha(kS8Alpha),
      U8(kLarge).BType(kS8).To(kS8).Alpha(kS8Alpha).Bias(kAlongN, kF32).Amax(),
      S8(kRagged)
          .To(kBF16)
          .Alpha(0.01f)
          .Beta(0.5f)
          .Bias(kAlongM, kBF16)
          .Act(kGelu),
      U8(kTiles).To(kF16).Alpha(1e-3f).CIsD().Act(kSilu).Amax(),
      S8(kRagged).Batch(3).PaddedOdd(),
      S8(kLarge).To(kS8).Alpha(kS8Alpha).Batch(3).Padded(),
      S8(kRagged).DTransposed(),
      S8({640, 768, 1040}).Config(Pick::kStreamK),
      S8({640, 768, 1040}).To(kS8).Alpha(kS8Alpha).Config(Pick::kStreamK),
      S8({520, 600, 208}).To(kF32).Config(Pick::kCluster2),
      S8(kRagged).Config(Pick::kSwapped),
      S8(kRagged).Config(Pick::kSplitInCluster2),
      U8(kRagged).To(kBF16).Alpha(0.01f).Config(Pick::kSplitInCluster8),
      S8({1, 777, 144}),
      S8({16, 4096, 1024}).To(kS8).Alpha(kS8Alpha),

      // Ping-pong: every input type, both stores, layouts, epilogues,
      // batches, one piece per CTA (kLarge) and several (kManyTiles).
      F16(kKK, kManyTiles).Config(Pick::kPingPongTma),
      BF16(kKMN, kManyTiles)
          .Bias(kAlongN, kBF16)
          .Act(kGeluTanh)
          .Config(Pick::kPingPongTma),
      BF16(kMNK, kRagged).To(kF32).Beta(0.5f).Config(Pick::kPingPong),
      F16(kKK, kLarge)
          .Batch(3)
          .PaddedOdd()
          .Beta(1)
          .Bias(kAlongM, kF16)
          .Config(Pick::kPingPong),
      F16(kMNMN, kManyTiles).CIsD().Act(kSilu).Config(Pick::kPingPongCluster2),
      E4M3(kManyTiles).Scaled().Config(Pick::kPingPongTma),
      E4M3(kManyTiles).FastAccum().Config(Pick::kPingPongCluster2),
      E4M3(kRagged).To(kE4M3).Scaled().Amax().Config(Pick::kPingPong),
      E4M3({1000, 999, 1040}).To(kF32).BlockScaled().Config(Pick::kPingPong),
      TF32(kManyTiles).Config(Pick::kPingPong),
      S8(kManyTiles).Config(Pick::kPingPong),
      U8(kRagged).BType(kS8).To(kS8).Alpha(kS8Alpha).Config(
          Pick::kPingPongCluster2),
      S8({13, 1000, 72}).To(kF32).Bias(kAlongM, kF32),
      S8({700, 24, 520}),
  };
}

ScalarType OutputOf(const GemmProblem& problem) {
  return problem.output.value_or(gen::DefaultOutput(problem.element));
}

ScalarType BElementOf(const GemmProblem& problem) {
  return problem.b_element.value_or(problem.element);
}

absl::string_view MajorName(MajorOrder major) {
  return major == MajorOrder::kK ? "K" : "MN";
}

// The case as a specification: "bf16_AMN_BK_to_f32_257x129x72_beta_C_
// bias_m_bf16_silu_batch3_padded_odd_stream_k".
std::string Name(const Case& c) {
  const GemmProblem& p = c.problem;
  std::string name = std::string(ptx::PtxName(p.element));
  if (p.b_element) absl::StrAppend(&name, "x", ptx::PtxName(*p.b_element));
  absl::StrAppend(&name, "_A", MajorName(p.a_major), "_B", MajorName(p.b_major),
                  "_to_", ptx::PtxName(OutputOf(p)), "_", p.m, "x", p.n, "x",
                  p.k);
  if (p.scaling == GemmScaling::kTensor) absl::StrAppend(&name, "_scaled");
  if (p.scaling == GemmScaling::kBlock) {
    absl::StrAppend(&name, "_block_scaled");
  }
  if (p.fast_accumulation) absl::StrAppend(&name, "_fast_accum");
  if (p.record_amax) absl::StrAppend(&name, "_amax");
  if (p.alpha != 1) absl::StrAppend(&name, "_alpha");
  if (c.c_is_d) {
    absl::StrAppend(&name, "_C_is_D");
  } else if (p.beta != 0) {
    absl::StrAppend(&name, "_beta_C");
  }
  if (p.bias != BiasAlong::kNone) {
    absl::StrAppend(&name, p.bias == kAlongM ? "_bias_m_" : "_bias_n_",
                    ptx::PtxName(p.bias_type));
  }
  if (p.activation != Activation::kNone) {
    absl::StrAppend(&name, "_", gen::ActivationName(p.activation));
  }
  if (p.d_transposed) absl::StrAppend(&name, "_D_transposed");
  if (p.batch != 1) absl::StrAppend(&name, "_batch", p.batch);
  if (c.padding == Padding::kAligned) absl::StrAppend(&name, "_padded");
  if (c.padding == Padding::kOdd) absl::StrAppend(&name, "_padded_odd");
  switch (c.pick) {
    case Pick::kHeuristic:
      break;
    case Pick::kStreamK:
      absl::StrAppend(&name, "_stream_k");
      break;
    case Pick::kCluster2:
      absl::StrAppend(&name, "_cluster2");
      break;
    case Pick::kCluster2StreamK:
      absl::StrAppend(&name, "_cluster2_stream_k");
      break;
    case Pick::kSwapped:
      absl::StrAppend(&name, "_swapped");
      break;
    case Pick::kSplitInCluster2:
      absl::StrAppend(&name, "_split2_in_cluster");
      break;
    case Pick::kSplitInCluster8:
      absl::StrAppend(&name, "_split8_in_cluster");
      break;
    case Pick::kTile192:
      absl::StrAppend(&name, "_tile192");
      break;
    case Pick::kPingPong:
      absl::StrAppend(&name, "_pingpong");
      break;
    case Pick::kPingPongTma:
      absl::StrAppend(&name, "_pingpong_tma");
      break;
    case Pick::kPingPongCluster2:
      absl::StrAppend(&name, "_pingpong_cluster2");
      break;
  }
  return name;
}

void PrintTo(const Case& c, std::ostream* os) { *os << Name(c); }

// ---------------------------------------------------------------------------
// Layouts, from gemm.h's definitions.

// The stored rows of A and B: A [m, k] K-major, [k, m] MN-major; B [n, k]
// K-major, [k, n] MN-major.
struct Rows {
  int64_t rows, row;
};
Rows RowsOfA(const GemmProblem& p) {
  return p.a_major == MajorOrder::kK ? Rows{p.m, p.k} : Rows{p.k, p.m};
}
Rows RowsOfB(const GemmProblem& p) {
  return p.b_major == MajorOrder::kK ? Rows{p.n, p.k} : Rows{p.k, p.n};
}
// C and D: [m, n], or [n, m] transposed.
Rows RowsOfD(const GemmProblem& p) {
  return p.d_transposed ? Rows{p.n, p.m} : Rows{p.m, p.n};
}
int64_t BiasLength(const GemmProblem& p) {
  return p.bias == kAlongM ? p.m : p.n;
}

// The problem Prepare gets for a case. A and B take packed rows where those
// start 16 bytes apart (TMA's rule), else the least leading dimension that
// does: 16-bit MN-major operands of a ragged m or n, K-major ones of a k
// that is no multiple of 8. Then the case's padding.
GemmProblem ProblemOf(const Case& c) {
  GemmProblem p = c.problem;
  const int64_t per_16_bytes = 16 / ptx::SizeInBytes(p.element);
  const Rows a = RowsOfA(p), b = RowsOfB(p), d = RowsOfD(p);
  const int64_t a_row = RoundUp(a.row, per_16_bytes),
                b_row = RoundUp(b.row, per_16_bytes);
  if (a_row != a.row) p.lda = a_row;
  if (b_row != b.row) p.ldb = b_row;
  const bool batched = p.batch > 1;
  const bool per_matrix_bias = batched && p.bias != BiasAlong::kNone;
  switch (c.padding) {
    case Padding::kNone:
      break;
    // A's and B's padding in 16-byte units (8 16-bit values), as TMA
    // needs them.
    case Padding::kAligned:
      p.lda = a_row + per_16_bytes;
      p.ldb = b_row + 3 * per_16_bytes;
      p.ldc = RoundUp(d.row, 8) + 16;
      p.ldd = RoundUp(d.row, 8) + 8;
      if (batched) {
        p.stride_a = a.rows * p.lda + 8 * per_16_bytes;
        p.stride_b = b.rows * p.ldb + 16 * per_16_bytes;
        p.stride_c = d.rows * p.ldc + 32;
        p.stride_d = d.rows * p.ldd + 256;
      }
      if (per_matrix_bias) p.stride_bias = RoundUp(BiasLength(p), 8) + 8;
      break;
    case Padding::kOdd:
      p.lda = a_row + 2 * per_16_bytes;
      p.ldb = b_row + per_16_bytes;
      p.ldc = d.row + 3;
      p.ldd = d.row + 5;
      if (batched) {
        p.stride_a = a.rows * p.lda + per_16_bytes;
        p.stride_b = b.rows * p.ldb + per_16_bytes;
        p.stride_c = d.rows * p.ldc + 7;
        p.stride_d = d.rows * p.ldd + 1;
      }
      if (per_matrix_bias) p.stride_bias = BiasLength(p) + 3;
      break;
  }
  if (c.c_is_d) {
    p.ldc = p.ldd;
    p.stride_c = p.stride_d;
  }
  return p;
}

// A batch of row-major matrices as stored: `rows` rows of `row` elements,
// `ld` apart, the matrices `stride` apart (0: one matrix shared by the
// batch, as a bias can be).
struct Stored {
  int64_t batch, rows, row, ld, stride;

  int64_t At(int64_t b, int64_t r, int64_t column) const {
    return b * stride + r * ld + column;
  }
  // Element (i, j) of C or D: at row i, or at row j when stored transposed.
  int64_t AtOutput(int64_t b, int64_t i, int64_t j, bool transposed) const {
    return transposed ? At(b, j, i) : At(b, i, j);
  }
  int64_t Span() const { return At(batch - 1, rows - 1, row); }
  // Whether each of `size` elements is one of a matrix.
  std::vector<bool> Mask(int64_t size) const {
    std::vector<bool> mask(static_cast<size_t>(size), false);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t column = 0; column < row; ++column) {
          mask[static_cast<size_t>(At(b, r, column))] = true;
        }
      }
    }
    return mask;
  }
};

struct Layouts {
  Stored a, b, c, d, bias;
};

// 0 leading dimensions are the row's length, 0 strides the matrix's rows
// times its leading dimension; a 0 bias stride shares one vector.
Layouts LayoutsOf(const GemmProblem& p) {
  auto stored = [&](Rows shape, int64_t ld, int64_t stride) {
    const int64_t resolved_ld = ld != 0 ? ld : shape.row;
    return Stored{p.batch, shape.rows, shape.row, resolved_ld,
                  stride != 0 ? stride : shape.rows * resolved_ld};
  };
  Layouts layouts;
  layouts.a = stored(RowsOfA(p), p.lda, p.stride_a);
  layouts.b = stored(RowsOfB(p), p.ldb, p.stride_b);
  layouts.c = stored(RowsOfD(p), p.ldc, p.stride_c);
  layouts.d = stored(RowsOfD(p), p.ldd, p.stride_d);
  const int64_t length = BiasLength(p);
  layouts.bias = Stored{p.batch, 1, length, length, p.stride_bias};
  return layouts;
}

// ---------------------------------------------------------------------------
// Device data.

// A buffer of `type` laid out as `layout` (its size rounded up to 4 bytes),
// and its values as the kernel reads them: uniform in [-1, 1) inside the
// matrices, NaN outside.
struct Operand {
  DeviceBuffer buffer;
  std::vector<double> host;
};

absl::StatusOr<DeviceBuffer> AllocateFor(const Stored& layout,
                                         ScalarType type) {
  return DeviceBuffer::Allocate(
      static_cast<size_t>(RoundUp(layout.Span() * ptx::SizeInBytes(type), 4)));
}

absl::StatusOr<Operand> RandomOperand(const Stored& layout, ScalarType type,
                                      uint32_t seed) {
  absl::StatusOr<DeviceBuffer> buffer = AllocateFor(layout, type);
  if (!buffer.ok()) return buffer.status();
  const int64_t count =
      static_cast<int64_t>(buffer->size()) / ptx::SizeInBytes(type);
  const std::vector<bool> inside = layout.Mask(count);
  std::vector<double> host(static_cast<size_t>(count));
  if (ptx::SizeInBytes(type) == 1) {
    // FillRandom's 8-bit values, 0x7F outside: NaN in e4m3 and e5m2, 127
    // in s8 and u8.
    if (absl::Status filled =
            FillRandom(buffer->address(), count, type, seed, nullptr);
        !filled.ok()) {
      return filled;
    }
    std::vector<uint8_t> bytes(host.size());
    if (absl::Status copied = buffer->CopyToHost(bytes.data(), bytes.size());
        !copied.ok()) {
      return copied;
    }
    for (size_t i = 0; i < host.size(); ++i) {
      if (!inside[i]) bytes[i] = 0x7F;
      host[i] = type == kS8   ? static_cast<int8_t>(bytes[i])
                : type == kU8 ? bytes[i]
                              : Fp8BitsToDouble(bytes[i], type);
    }
    if (absl::Status copied = buffer->CopyFromHost(bytes.data(), bytes.size());
        !copied.ok()) {
      return copied;
    }
  } else if (ptx::SizeInBytes(type) == 4) {
    // f32 values from the host (tf32 operands are f32 in memory).
    std::vector<float> words(host.size());
    uint32_t state = seed * 2654435761u + 1;
    for (size_t i = 0; i < words.size(); ++i) {
      state = state * 1664525u + 1013904223u;
      words[i] =
          inside[i] ? static_cast<float>(state >> 8) / (1 << 23) - 1.0f : NAN;
      host[i] = words[i];
    }
    if (absl::Status copied =
            buffer->CopyFromHost(words.data(), buffer->size());
        !copied.ok()) {
      return copied;
    }
  } else {
    if (absl::Status filled =
            FillRandom(buffer->address(), count, type, seed, nullptr);
        !filled.ok()) {
      return filled;
    }
    absl::StatusOr<std::vector<uint16_t>> bits = DownloadHalves(*buffer);
    if (!bits.ok()) return bits.status();
    for (size_t i = 0; i < host.size(); ++i) {
      if (!inside[i]) (*bits)[i] = 0xFFFF;  // NaN in f16 and in bf16
      host[i] = HalfBitsToFloat((*bits)[i], type);
    }
    if (absl::Status copied =
            buffer->CopyFromHost(bits->data(), buffer->size());
        !copied.ok()) {
      return copied;
    }
  }
  return Operand{*std::move(buffer), std::move(host)};
}

// NaN everywhere, in the output's type.
absl::Status PoisonOutput(DeviceBuffer& d, ScalarType type) {
  return PoisonValues(d.address(),
                      static_cast<int64_t>(d.size()) / ptx::SizeInBytes(type),
                      type, nullptr);
}

// ---------------------------------------------------------------------------
// The reference.

double Activate(Activation activation, double x) {
  constexpr double kSqrtHalf = 0.70710678118654752;
  constexpr double kSqrt2OverPi = 0.79788456080286536;
  switch (activation) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return std::max(x, 0.0);
    case Activation::kGelu:
      return 0.5 * x * (1 + std::erf(x * kSqrtHalf));
    case Activation::kGeluTanh:
      return 0.5 * x *
             (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    case Activation::kSilu:
      return x / (1 + std::exp(-x));
  }
  return NAN;
}

// D in float64, [batch][m][n] packed, from the values as stored:
//   D(i, j) = act(alpha * sum_kk A(i, kk) B(j, kk) + beta C(i, j) + bias)
// with A(i, kk) = a[i lda + kk] K-major, a[kk lda + i] MN-major, and
// B(j, kk) = b[j ldb + kk] K-major, b[kk ldb + j] MN-major, each matrix
// `stride` on from the one before; C(i, j) = c[i ldc + j], or c[j ldc + i]
// when C and D are stored transposed; the bias's element i (along m) or j
// (along n).
std::vector<double> Reference(const GemmProblem& p, const Layouts& l,
                              const std::vector<double>& a,
                              const std::vector<double>& b,
                              const std::vector<double>* c,
                              const std::vector<double>* bias,
                              const BlockScaleValues& block_scales) {
  const gen::BlockScales scales = gen::BlockScalesOf(p.m, p.n, p.k, p.batch);
  const bool a_k = p.a_major == MajorOrder::kK,
             b_k = p.b_major == MajorOrder::kK;
  std::vector<double> d(static_cast<size_t>(p.batch * p.m * p.n));
  // Each batch's A as [m][k] and B as [n][k], for a contiguous inner loop.
  std::vector<double> a_rows(static_cast<size_t>(p.m * p.k));
  std::vector<double> b_rows(static_cast<size_t>(p.n * p.k));
  for (int64_t batch = 0; batch < p.batch; ++batch) {
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t kk = 0; kk < p.k; ++kk) {
        a_rows[i * p.k + kk] = a[l.a.At(batch, a_k ? i : kk, a_k ? kk : i)];
      }
    }
    for (int64_t j = 0; j < p.n; ++j) {
      for (int64_t kk = 0; kk < p.k; ++kk) {
        b_rows[j * p.k + kk] = b[l.b.At(batch, b_k ? j : kk, b_k ? kk : j)];
      }
    }
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        const double* a_row = &a_rows[i * p.k];
        const double* b_row = &b_rows[j * p.k];
        double sum = 0;
        if (p.scaling == GemmScaling::kBlock) {
          // Each 128-k block's products times A's scale of (i, block) and
          // B's of (j / 128, block).
          for (int64_t block = 0; block < scales.k_blocks; ++block) {
            double block_sum = 0;
            const int64_t end = std::min(p.k, (block + 1) * gen::kScaleBlock);
            for (int64_t kk = block * gen::kScaleBlock; kk < end; ++kk) {
              block_sum += a_row[kk] * b_row[kk];
            }
            const int64_t a_at = (batch * scales.k_blocks + block) * p.m + i;
            const int64_t b_at =
                (batch * scales.n_blocks + j / gen::kScaleBlock) *
                    scales.k_blocks +
                block;
            sum += block_sum * block_scales.a[a_at] * block_scales.b[b_at];
          }
        } else {
          for (int64_t kk = 0; kk < p.k; ++kk) sum += a_row[kk] * b_row[kk];
        }
        const double scales =
            p.scaling == GemmScaling::kTensor ? double{kScaleA} * kScaleB : 1;
        double value = static_cast<double>(p.alpha) * scales * sum;
        if (p.beta != 0) {
          value += static_cast<double>(p.beta) *
                   (*c)[l.c.AtOutput(batch, i, j, p.d_transposed)];
        }
        if (p.bias != BiasAlong::kNone) {
          value += (*bias)[l.bias.At(batch, 0, p.bias == kAlongM ? i : j)];
        }
        d[(batch * p.m + i) * p.n + j] = Activate(p.activation, value);
      }
    }
  }
  return d;
}

// ||result - reference|| / ||reference||; +infinity for a NaN or infinity in
// `result` (as RelativeErrorByNorm of verification.h, for any output type).
double RelativeError(const std::vector<double>& result,
                     const std::vector<double>& reference) {
  double difference = 0, norm = 0;
  for (size_t i = 0; i < result.size(); ++i) {
    if (!std::isfinite(result[i])) return INFINITY;
    difference += (result[i] - reference[i]) * (result[i] - reference[i]);
    norm += reference[i] * reference[i];
  }
  return norm == 0 ? std::sqrt(difference) : std::sqrt(difference / norm);
}

// The reference takes the inputs as stored. f32 D: the products of 16-bit
// inputs are exact in f32, so only the f32 accumulation over k and the f32
// epilogue (erff, tanhf, __expf) remain: 1e-5 relative by norm. Beyond
// that: wgmma adds fp8 products in an accumulator of fewer bits than f32
// even within one promoted stage (measured 5e-5 to 9.4e-5 on the H200):
// 3e-4; tf32 keeps 10 of f32's 23 mantissa bits of each input (2^-11
// relative each, independent) and fp8's fast accumulation adds every
// k-step in the reduced-precision accumulator: 2e-3. The amax of D is held
// to the same bound.
double SumsBound(const GemmProblem& problem) {
  if (problem.element == kTF32 || problem.fast_accumulation) return 2e-3;
  if (ptx::IsFp8(problem.element)) return 3e-4;
  return 1e-5;
}

// 16-bit D: ErrorBound, or the sums' own bound where it is larger. An fp8
// D is compared with the reference rounded as the kernel rounds it: a sum
// a last bit off flips a value at a rounding boundary by one of its steps
// (1/16 to 1/8 of it in e4m3, twice that in e5m2), on few values.
// An s32 D is exact; an s8 D is the reference rounded as the kernel rounds
// it (alpha a power of two: only a bias or an activation computed in f32
// rather than float64 can move a value across a rounding boundary).
double Bound(const GemmProblem& problem) {
  const ScalarType output = OutputOf(problem);
  if (output == kS32) return 0;
  if (output == kS8) return 1e-3;
  if (output == kE4M3) return 2e-2;
  if (output == kE5M2) return 4e-2;
  if (output == kF32) return SumsBound(problem);
  return std::max(ErrorBound(output), SumsBound(problem));
}

// ---------------------------------------------------------------------------
// Running a case.

bool IsKind(const gen::GemmConfig& config, Pick pick) {
  switch (pick) {
    case Pick::kHeuristic:
      return true;
    case Pick::kStreamK:
      return config.stream_k && config.cluster_m == 1;
    case Pick::kCluster2:
      return config.cluster_m == 2 && !config.stream_k;
    case Pick::kCluster2StreamK:
      return config.cluster_m == 2 && config.stream_k;
    case Pick::kSwapped:
      return false;
    case Pick::kSplitInCluster2:
      return config.split_k_in_cluster && config.split_k == 2;
    case Pick::kSplitInCluster8:
      return config.split_k_in_cluster && config.split_k == 8;
    case Pick::kTile192:
      return config.block_n == 192 && !config.stream_k;
    case Pick::kPingPong:
    case Pick::kPingPongTma:
    case Pick::kPingPongCluster2:
      return config.schedule == gen::GemmSchedule::kPingPong &&
             config.cluster_m == (pick == Pick::kPingPongCluster2 ? 2 : 1) &&
             (config.epilogue == gen::GemmEpilogue::kTmaStore) ==
                 (pick == Pick::kPingPongTma);
  }
  return false;
}

absl::StatusOr<gen::GemmConfig> PickedConfig(const GemmProblem& problem,
                                             Pick pick,
                                             const GemmTarget& target) {
  if (pick == Pick::kSwapped) {
    // What the heuristic would run on the swapped problem, run swapped:
    // the kernel sees the same problem either way.
    gen::GemmConfig config = HeuristicConfig(SwappedProblem(problem), target);
    config.swap_ab = !config.swap_ab;
    return config;
  }
  const gen::GemmForm form = FormOf(problem);
  for (const gen::GemmConfig& config : CandidateConfigs(problem, target)) {
    if (IsKind(config, pick) &&
        gen::ValidateGemmConfigForForm(config, form).ok() &&
        CheckConfigFitsProblem(config, problem).ok()) {
      return config;
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "no candidate configuration of the kind computes ", gen::FormName(form)));
}

class GemmFormsGpuTest : public testing_support::HopperTest,
                         public testing::WithParamInterface<Case> {};

// Fresh inputs (seeded by the case's name), one Prepare, one run into a
// poisoned D (two runs for an explicit configuration, unless D is C: a
// stream-K run must leave its workspace ready for the next).
TEST_P(GemmFormsGpuTest, MatchesTheHostReference) {
  const Case& test_case = GetParam();
  const GemmProblem problem = ProblemOf(test_case);
  const ScalarType output = OutputOf(problem);
  const Layouts layouts = LayoutsOf(problem);
  SCOPED_TRACE(gen::FormName(FormOf(problem)));

  // Resolved fills in what this test derived from gemm.h.
  const GemmProblem resolved = Resolved(problem);
  EXPECT_TRUE(resolved.output == output);
  EXPECT_EQ(resolved.lda, layouts.a.ld);
  EXPECT_EQ(resolved.ldb, layouts.b.ld);
  EXPECT_EQ(resolved.ldc, layouts.c.ld);
  EXPECT_EQ(resolved.ldd, layouts.d.ld);
  EXPECT_EQ(resolved.stride_a, layouts.a.stride);
  EXPECT_EQ(resolved.stride_b, layouts.b.stride);
  EXPECT_EQ(resolved.stride_c, layouts.c.stride);
  EXPECT_EQ(resolved.stride_d, layouts.d.stride);

  const uint32_t seed =
      static_cast<uint32_t>(std::hash<std::string>()(Name(test_case)));
  absl::StatusOr<Operand> a = RandomOperand(layouts.a, problem.element, seed);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<Operand> b =
      RandomOperand(layouts.b, BElementOf(problem), seed + 1);
  ASSERT_TRUE(b.ok()) << b.status();
  const bool reads_c = problem.beta != 0;
  const bool has_bias = problem.bias != BiasAlong::kNone;
  // C in D's type; when C is D it is D's buffer, NaN outside the matrices.
  absl::StatusOr<Operand> c = absl::NotFoundError("no C");
  if (reads_c) {
    c = RandomOperand(layouts.c, output, seed + 2);
    ASSERT_TRUE(c.ok()) << c.status();
  }
  absl::StatusOr<Operand> bias = absl::NotFoundError("no bias");
  if (has_bias) {
    bias = RandomOperand(layouts.bias, problem.bias_type, seed + 3);
    ASSERT_TRUE(bias.ok()) << bias.status();
  }
  const BlockScaleValues block_scales = RandomBlockScales(problem, seed + 4);
  std::vector<double> expected = Reference(
      problem, layouts, a->host, b->host, reads_c ? &c->host : nullptr,
      has_bias ? &bias->host : nullptr, block_scales);
  double expected_amax = 0;
  for (double value : expected) {
    expected_amax = std::max(expected_amax, std::abs(value));
  }
  const bool scales_d =
      ptx::IsFp8(output) && problem.scaling == GemmScaling::kTensor;
  if (ptx::IsFp8(output)) {
    for (double& value : expected) {
      value = Fp8BitsToDouble(
          DoubleToFp8Bits(scales_d ? value * kScaleD : value, output), output);
    }
  }
  if (output == kS8) {
    // To nearest, ties to even (the default rounding mode), saturated.
    for (double& value : expected) {
      value = std::clamp(std::nearbyint(value), -128.0, 127.0);
    }
  }
  // What D holds where the kernel must not write: NaN, or an integer
  // type's poison.
  const double untouched = output == kS8    ? 127.0
                           : output == kS32 ? double{0x7F7F7F7F}
                                            : std::nan("");

  GemmOptions options;
  if (test_case.pick != Pick::kHeuristic) {
    const absl::StatusOr<GemmTarget> target =
        runtime::KernelTargetOf(properties(), "GEMM");
    ASSERT_TRUE(target.ok()) << target.status();
    absl::StatusOr<gen::GemmConfig> config =
        PickedConfig(problem, test_case.pick, *target);
    ASSERT_TRUE(config.ok()) << config.status();
    options.config = *config;
  }
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, options);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  SCOPED_TRACE(gen::ConfigName(gemm->config()));

  absl::StatusOr<DeviceBuffer> own_d = absl::NotFoundError("D is C");
  if (!test_case.c_is_d) {
    own_d = AllocateFor(layouts.d, output);
    ASSERT_TRUE(own_d.ok()) << own_d.status();
  }
  DeviceBuffer& d = test_case.c_is_d ? c->buffer : *own_d;
  const int64_t d_count =
      static_cast<int64_t>(d.size()) / ptx::SizeInBytes(output);
  const std::vector<bool> inside = layouts.d.Mask(d_count);
  // C and the bias are passed only when the problem has them (0 otherwise:
  // never read).
  GemmOperands operands{a->buffer.address(), b->buffer.address(),
                        reads_c ? c->buffer.address() : 0, d.address(),
                        has_bias ? bias->buffer.address() : 0};
  absl::StatusOr<DeviceBuffer> scales = DeviceBuffer::Allocate(16);
  ASSERT_TRUE(scales.ok()) << scales.status();
  if (problem.scaling == GemmScaling::kTensor) {
    const float values[4] = {kScaleA, kScaleB, kScaleD, 0};
    ASSERT_TRUE(scales->CopyFromHost(values, sizeof(values)).ok());
    operands.scale_a = scales->address();
    operands.scale_b = scales->address() + 4;
    if (scales_d) operands.scale_d = scales->address() + 8;
  }
  // Block scales, A's and B's in buffers of their own.
  absl::StatusOr<DeviceBuffer> a_scales =
      DeviceBuffer::Allocate(block_scales.a.size() * sizeof(float) + 4);
  ASSERT_TRUE(a_scales.ok()) << a_scales.status();
  absl::StatusOr<DeviceBuffer> b_scales =
      DeviceBuffer::Allocate(block_scales.b.size() * sizeof(float) + 4);
  ASSERT_TRUE(b_scales.ok()) << b_scales.status();
  if (problem.scaling == GemmScaling::kBlock) {
    ASSERT_TRUE(a_scales
                    ->CopyFromHost(block_scales.a.data(),
                                   block_scales.a.size() * sizeof(float))
                    .ok());
    ASSERT_TRUE(b_scales
                    ->CopyFromHost(block_scales.b.data(),
                                   block_scales.b.size() * sizeof(float))
                    .ok());
    operands.scale_a = a_scales->address();
    operands.scale_b = b_scales->address();
  }
  absl::StatusOr<DeviceBuffer> amax = DeviceBuffer::Allocate(4);
  ASSERT_TRUE(amax.ok()) << amax.status();
  if (problem.record_amax) operands.amax_d = amax->address();

  const int runs =
      test_case.pick != Pick::kHeuristic && !test_case.c_is_d ? 2 : 1;
  for (int run = 0; run < runs; ++run) {
    SCOPED_TRACE(absl::StrCat("run ", run));
    if (!test_case.c_is_d) {
      ASSERT_TRUE(PoisonOutput(d, output).ok());
    }
    // Run sets the amax before raising it: a NaN left there would show.
    ASSERT_TRUE(PoisonOutput(*amax, kF32).ok());
    const absl::Status ran = gemm->Run(operands, nullptr);
    ASSERT_TRUE(ran.ok()) << ran;
    absl::StatusOr<std::vector<double>> result = DownloadValues(d, output);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(result->size(), inside.size());
    std::vector<double> computed;
    computed.reserve(expected.size());
    for (int64_t batch = 0; batch < problem.batch; ++batch) {
      for (int64_t i = 0; i < problem.m; ++i) {
        for (int64_t j = 0; j < problem.n; ++j) {
          computed.push_back(
              (*result)[layouts.d.AtOutput(batch, i, j, problem.d_transposed)]);
        }
      }
    }
    int64_t written = 0, first_written = -1;
    for (size_t at = 0; at < inside.size(); ++at) {
      const bool kept = std::isnan(untouched) ? std::isnan((*result)[at])
                                              : (*result)[at] == untouched;
      if (!inside[at] && !kept) {
        if (written++ == 0) first_written = static_cast<int64_t>(at);
      }
    }
    EXPECT_LE(RelativeError(computed, expected), Bound(problem));
    if (problem.record_amax) {
      absl::StatusOr<std::vector<double>> recorded =
          DownloadValues(*amax, kF32);
      ASSERT_TRUE(recorded.ok()) << recorded.status();
      // The largest of the sums, each within the sums' own error bound.
      EXPECT_NEAR((*recorded)[0], expected_amax,
                  SumsBound(problem) * expected_amax)
          << "amax of D";
    }
    EXPECT_EQ(written, 0)
        << "elements of D outside [m, n] of every batch were written, "
           "the first at element "
        << first_written << " (ldd " << layouts.d.ld << ", stride_d "
        << layouts.d.stride << "), holding "
        << (first_written < 0 ? untouched : (*result)[first_written])
        << " where it held " << untouched;
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, GemmFormsGpuTest, testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           return Name(info.param);
                         });

// On the CPU: the table names each case once, ValidateProblem takes every
// problem in it, and each has a configuration whose launch plans (the
// heuristic's on an H200's 132 SMs, or one of the case's kind).
TEST(GemmFormsTable, EveryCaseIsAValidProblemOfItsOwnName) {
  const GemmTarget target = GemmTarget::H200();
  std::set<std::string> names;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(Name(c));
    EXPECT_TRUE(names.insert(Name(c)).second) << "named twice";
    const GemmProblem problem = ProblemOf(c);
    const absl::Status valid = ValidateProblem(problem);
    EXPECT_TRUE(valid.ok()) << valid;
    if (!valid.ok()) continue;
    absl::StatusOr<gen::GemmConfig> config =
        c.pick == Pick::kHeuristic ? HeuristicConfig(problem, target)
                                   : PickedConfig(problem, c.pick, target);
    ASSERT_TRUE(config.ok()) << config.status();
    const absl::StatusOr<int> resident =
        TargetResidentClusters(*config, target);
    ASSERT_TRUE(resident.ok()) << resident.status();
    const absl::StatusOr<gen::GemmGrid> grid =
        PlanGemmLaunch(problem, *config, *resident);
    EXPECT_TRUE(grid.ok()) << gen::ConfigName(*config) << ": " << grid.status();
  }
}

class GemmFormsPeerGpuTest : public testing_support::HopperTest {};

// An e4m3 D with scale_d and the amax of D, beside cuBLASLt's fp8 GEMM with
// the same scale pointers, bias and RELU_BIAS epilogue: both promote the
// same sums into f32 (bf16 D matches bit for bit), so D differs at most by
// a rounding step on few values, and the amax in its last bits.
TEST_F(GemmFormsPeerGpuTest, AnFp8DAndItsAmaxMatchCublasLt) {
  constexpr size_t kWorkspaceBytes = 32 << 20;
  absl::StatusOr<DeviceBuffer> workspace =
      DeviceBuffer::Allocate(kWorkspaceBytes);
  ASSERT_TRUE(workspace.ok()) << workspace.status();
  for (const Shape shape : {Shape{1000, 1008, 1040}, Shape{16, 4096, 1024},
                            Shape{4096, 4096, 4096}}) {
    GemmProblem problem{shape.m, shape.n, shape.k, kE4M3};
    problem.output = kE4M3;
    problem.scaling = GemmScaling::kTensor;
    problem.record_amax = true;
    problem.bias = kAlongN;
    problem.bias_type = kBF16;
    problem.activation = kRelu;
    SCOPED_TRACE(gen::FormName(FormOf(problem)) +
                 absl::StrCat(" ", shape.m, "x", shape.n, "x", shape.k));
    absl::StatusOr<RotatingGemmOperands> x =
        RandomRotatingGemmOperands(problem, /*l2_bytes=*/0, 77, nullptr);
    ASSERT_TRUE(x.ok()) << x.status();
    // scale_a, scale_b and scale_d 16 bytes apart, then the amax.
    const float scalars[16] = {0.5f, 0, 0, 0, 2.0f, 0, 0, 0, 8.0f};
    ASSERT_TRUE(x->scalars->CopyFromHost(scalars, sizeof(scalars)).ok());
    absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem);
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    SCOPED_TRACE(gen::ConfigName(gemm->config()));
    ASSERT_TRUE(gemm->Run(x->OperandsOfCopy(0), nullptr).ok());
    absl::StatusOr<std::vector<double>> ours = DownloadValues(x->c, kE4M3);
    ASSERT_TRUE(ours.ok()) << ours.status();
    absl::StatusOr<std::vector<double>> our_amax =
        DownloadValues(*x->scalars, kF32);
    ASSERT_TRUE(our_amax.ok()) << our_amax.status();

    LtGemm lt = PackedLtGemm(shape.m, shape.n, shape.k, kE4M3, kE4M3);
    lt.bias = LtGemm::Bias::kAlongN;
    lt.bias_type = kBF16;
    lt.activation = LtGemm::Activation::kRelu;
    lt.scale_a = lt.scale_b = lt.scale_d = lt.amax_d = true;
    absl::StatusOr<PreparedLtGemm> peer =
        PreparedLtGemm::Create(lt, kWorkspaceBytes);
    ASSERT_TRUE(peer.ok()) << peer.status();
    absl::StatusOr<DeviceBuffer> peer_d = DeviceBuffer::Allocate(x->c.size());
    ASSERT_TRUE(peer_d.ok()) << peer_d.status();
    absl::StatusOr<DeviceBuffer> peer_amax = DeviceBuffer::Allocate(4);
    ASSERT_TRUE(peer_amax.ok()) << peer_amax.status();
    const LtScales scales{x->ScaleA(), x->ScaleB(), x->ScaleD(),
                          peer_amax->address()};
    ASSERT_TRUE(peer->Run(x->a[0].address(), x->b[0].address(), 0,
                          peer_d->address(), x->bias->address(), scales,
                          nullptr,
                          reinterpret_cast<void*>(workspace->address()),
                          kWorkspaceBytes)
                    .ok());
    absl::StatusOr<std::vector<double>> theirs = DownloadValues(*peer_d, kE4M3);
    ASSERT_TRUE(theirs.ok()) << theirs.status();
    absl::StatusOr<std::vector<double>> their_amax =
        DownloadValues(*peer_amax, kF32);
    ASSERT_TRUE(their_amax.ok()) << their_amax.status();

    EXPECT_LT(RelativeError(*ours, *theirs), 2e-2);
    // The amax sits 48 bytes into the scalars (AmaxD).
    EXPECT_NEAR((*our_amax)[12], (*their_amax)[0], 1e-5 * (*their_amax)[0]);
    EXPECT_GT((*their_amax)[0], 0);
  }
}

// s8 inputs beside cuBLASLt's int8 GEMM (CUBLAS_COMPUTE_32I): both sum
// exactly, so an s32 D matches bit for bit; an s8 D is alpha times the same
// sums rounded once (a tie may round another way).
TEST_F(GemmFormsPeerGpuTest, S8MatchesCublasLtInt8) {
  constexpr size_t kWorkspaceBytes = 32 << 20;
  absl::StatusOr<DeviceBuffer> workspace =
      DeviceBuffer::Allocate(kWorkspaceBytes);
  ASSERT_TRUE(workspace.ok()) << workspace.status();
  for (const Shape shape : {Shape{1000, 1008, 1040}, Shape{16, 4096, 1024},
                            Shape{4096, 4096, 4096}}) {
    for (const ScalarType output : {kS32, kS8}) {
      GemmProblem problem{shape.m, shape.n, shape.k, kS8};
      problem.output = output;
      if (output == kS8) problem.alpha = 1.0f / 64;
      SCOPED_TRACE(gen::FormName(FormOf(problem)) +
                   absl::StrCat(" ", shape.m, "x", shape.n, "x", shape.k));
      absl::StatusOr<RotatingGemmOperands> x =
          RandomRotatingGemmOperands(problem, /*l2_bytes=*/0, 91, nullptr);
      ASSERT_TRUE(x.ok()) << x.status();
      absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem);
      ASSERT_TRUE(gemm.ok()) << gemm.status();
      SCOPED_TRACE(gen::ConfigName(gemm->config()));
      ASSERT_TRUE(PoisonOutput(x->c, output).ok());
      ASSERT_TRUE(gemm->Run(x->OperandsOfCopy(0), nullptr).ok());
      absl::StatusOr<std::vector<double>> ours = DownloadValues(x->c, output);
      ASSERT_TRUE(ours.ok()) << ours.status();

      LtGemm lt = PackedLtGemm(shape.m, shape.n, shape.k, kS8, output);
      lt.alpha = problem.alpha;
      absl::StatusOr<PreparedLtGemm> peer =
          PreparedLtGemm::Create(lt, kWorkspaceBytes);
      ASSERT_TRUE(peer.ok()) << peer.status();
      absl::StatusOr<DeviceBuffer> peer_d = DeviceBuffer::Allocate(x->c.size());
      ASSERT_TRUE(peer_d.ok()) << peer_d.status();
      ASSERT_TRUE(peer->Run(x->a[0].address(), x->b[0].address(), 0,
                            peer_d->address(), 0, nullptr,
                            reinterpret_cast<void*>(workspace->address()),
                            kWorkspaceBytes)
                      .ok());
      absl::StatusOr<std::vector<double>> theirs =
          DownloadValues(*peer_d, output);
      ASSERT_TRUE(theirs.ok()) << theirs.status();
      double largest = 0;
      for (double value : *theirs) largest = std::max(largest, std::abs(value));
      EXPECT_GT(largest, output == kS8 ? 32 : 1000) << "sums too small to tell";
      EXPECT_LE(RelativeError(*ours, *theirs), output == kS32 ? 0 : 1e-3);
    }
  }
}

}  // namespace
}  // namespace ptxgen::gemm
