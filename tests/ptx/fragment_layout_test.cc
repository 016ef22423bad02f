// Fragment layouts: the wgmma accumulator and stmatrix as the PTX ISA
// draws them, the accumulator store built of both, and their device
// functions: fragment_functions.inc holds them as generated kernels get
// them, compiled here for the host to compute what the host coordinates
// say, and by NVRTC for sm_90a.
#include "ptxgen/ptx/fragment_layout.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/compiler.h"
#include "tests/support/text.h"

// Only CUDA's qualifiers need a meaning on the host.
#define __device__
#define __forceinline__ inline
namespace rendered {
#include "tests/ptx/fragment_functions.inc"
}  // namespace rendered
#undef __forceinline__
#undef __device__

namespace ptxgen::ptx {
namespace {

IndexExpression X() { return IndexExpression::Variable("x"); }
IndexExpression Y() { return IndexExpression::Variable("y"); }

TEST(IndexExpressionTest, RendersWithTheParenthesesCppPrecedenceNeeds) {
  EXPECT_EQ((16 * (X() / 32) + X() % 32 / 4).Render(),
            "16 * (x / 32) + x % 32 / 4");
  EXPECT_EQ((8 * (Y() / 2 % 2)).Render(), "8 * (y / 2 % 2)");
  EXPECT_EQ(((X() + 1) / 2).Render(), "(x + 1) / 2");
  EXPECT_EQ((2 * (X() + Y())).Render(), "2 * (x + y)");
  EXPECT_EQ((X() + Y() + 1).Render(), "x + y + 1");
  EXPECT_EQ((X() + (Y() + 1)).Render(), "x + (y + 1)");
  EXPECT_EQ((X() / 4 / 2).Render(), "x / 4 / 2");
}

TEST(IndexExpressionTest, EvaluatesWithCppIntArithmetic) {
  const IndexExpression e = 16 * (X() / 32) + X() % 32 / 4 + 8 * (Y() / 2 % 2);
  EXPECT_EQ(*e.Evaluate({{"x", 37}, {"y", 2}}), 16 + 1 + 8);
  // Truncation toward zero, as in C++ and CUDA.
  EXPECT_EQ(*(X() / 2).Evaluate({{"x", -3}}), -1);
  EXPECT_EQ(*(X() % 4).Evaluate({{"x", -5}}), -1);
  EXPECT_EQ(*IndexExpression(7).Evaluate({}), 7);
}

TEST(IndexExpressionTest, EvaluationErrorsNameTheirCause) {
  EXPECT_EQ((X() + Y()).Evaluate({{"x", 1}}).status().message(),
            "index expression: no value for variable 'y'");
  EXPECT_EQ((X() / 0).Evaluate({{"x", 1}}).status().message(),
            "index expression: division by zero in 'x / 0'");
  EXPECT_EQ((65536 * X()).Evaluate({{"x", 65536}}).status().message(),
            "index expression: '65536 * x' = 4294967296 overflows int");
}

WgmmaMma Mma(int n, ScalarType input = ScalarType::kF16,
             ScalarType d = ScalarType::kF32) {
  WgmmaMma mma;
  mma.n = n;
  mma.a_type = mma.b_type = input;
  mma.d_type = d;
  return mma;
}

AccumulatorFragment Accumulator(int n) {
  return *AccumulatorFragment::Of(Mma(n));
}

std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

TEST(AccumulatorFragmentTest, IsThatOfALegalWgmmaWith32BitAccumulators) {
  const WgmmaMma illegal = Mma(120, ScalarType::kS8, ScalarType::kS32);
  EXPECT_EQ(AccumulatorFragment::Of(illegal).status(), ValidateWgmma(illegal));
  EXPECT_FALSE(AccumulatorFragment::Of(illegal).ok());
  EXPECT_EQ(Message(AccumulatorFragment::Of(
                        Mma(64, ScalarType::kF16, ScalarType::kF16))
                        .status()),
            "accumulator fragment: f16 accumulators pack two values a "
            "register; the layout "
            "is that of 32-bit ones (f32, s32)");
  EXPECT_TRUE(
      AccumulatorFragment::Of(Mma(48, ScalarType::kS8, ScalarType::kS32)).ok());
  EXPECT_EQ(Accumulator(256).registers(), 128);
  EXPECT_EQ(Accumulator(8).registers(), 4);
}

TEST(AccumulatorFragmentTest, CoversEveryElementOfTheTileExactlyOnce) {
  for (int n : LegalWgmmaN(ScalarType::kF16)) {
    SCOPED_TRACE(absl::StrCat("m64n", n));
    const AccumulatorFragment fragment = Accumulator(n);
    std::vector<int> held(kWgmmaM * n, 0);
    for (int thread = 0; thread < AccumulatorFragment::kThreads; ++thread) {
      for (int reg = 0; reg < fragment.registers(); ++reg) {
        const FragmentCoordinate at = *fragment.Coordinate(thread, reg);
        ASSERT_TRUE(at.row >= 0 && at.row < kWgmmaM && at.column >= 0 &&
                    at.column < n);
        ++held[at.row * n + at.column];
      }
    }
    EXPECT_EQ(std::set<int>(held.begin(), held.end()), std::set<int>{1});
  }
}

// Points read off the ISA's figure of the m64nNk16 D fragment.
TEST(AccumulatorFragmentTest, MatchesTheIsaFigure) {
  const AccumulatorFragment fragment = Accumulator(256);
  const std::vector<std::pair<std::pair<int, int>, FragmentCoordinate>> points =
      {
          {{0, 0}, {0, 0}},   {{0, 1}, {0, 1}},        {{0, 2}, {8, 0}},
          {{0, 3}, {8, 1}},   {{0, 4}, {0, 8}},        {{1, 0}, {0, 2}},
          {{3, 1}, {0, 7}},   {{4, 0}, {1, 0}},        {{31, 3}, {15, 7}},
          {{32, 0}, {16, 0}}, {{127, 127}, {63, 255}},
      };
  for (const auto& [thread_reg, expected] : points) {
    const FragmentCoordinate at =
        *fragment.Coordinate(thread_reg.first, thread_reg.second);
    EXPECT_EQ(at, expected)
        << "thread " << thread_reg.first << " register " << thread_reg.second
        << ": (" << at.row << ", " << at.column << ")";
  }
}

// The direct epilogue computes a thread's position once and adds each
// register's offset.
TEST(AccumulatorFragmentTest, IsSeparableIntoThreadAndRegisterParts) {
  const AccumulatorFragment fragment = Accumulator(64);
  for (int thread = 0; thread < AccumulatorFragment::kThreads; ++thread) {
    for (int reg = 0; reg < fragment.registers(); ++reg) {
      const FragmentCoordinate t = *fragment.Coordinate(thread, 0);
      const FragmentCoordinate r = *fragment.Coordinate(0, reg);
      EXPECT_EQ(*fragment.Coordinate(thread, reg),
                (FragmentCoordinate{t.row + r.row, t.column + r.column}));
    }
  }
}

// The direct epilogue stores a register and the next as one pair.
TEST(AccumulatorFragmentTest, PairsARegisterWithTheNextOneColumnToItsRight) {
  const AccumulatorFragment fragment = Accumulator(64);
  for (int thread = 0; thread < AccumulatorFragment::kThreads; ++thread) {
    for (int reg = 0; reg < fragment.registers(); reg += 2) {
      const FragmentCoordinate low = *fragment.Coordinate(thread, reg);
      EXPECT_EQ(*fragment.Coordinate(thread, reg + 1),
                (FragmentCoordinate{low.row, low.column + 1}));
    }
  }
}

TEST(AccumulatorFragmentTest, HostArgumentsOutsideTheFragmentAreErrors) {
  const AccumulatorFragment fragment = Accumulator(128);
  EXPECT_EQ(
      Message(fragment.Coordinate(128, 0).status()),
      "accumulator fragment: thread 128 is outside the warpgroup (0..127)");
  EXPECT_EQ(Message(fragment.Coordinate(0, 64).status()),
            "accumulator fragment: register 64 is outside the registers of "
            "m64n128 (0..63)");
  EXPECT_FALSE(fragment.Coordinate(-1, 0).ok());
}

TEST(AccumulatorFragmentTest, DeviceFunctionsAreTheSameForEveryN) {
  for (int n : LegalWgmmaN(ScalarType::kF16)) {
    EXPECT_EQ(Accumulator(n).DeviceFunctions(),
              Accumulator(kMaxWgmmaN).DeviceFunctions());
  }
}

TEST(AccumulatorFragmentTest, DeviceFunctionsComputeTheHostCoordinates) {
  const AccumulatorFragment fragment = Accumulator(kMaxWgmmaN);
  for (int thread = 0; thread < AccumulatorFragment::kThreads; ++thread) {
    for (int reg = 0; reg < fragment.registers(); ++reg) {
      EXPECT_EQ((FragmentCoordinate{rendered::accumulator_row(thread, reg),
                                    rendered::accumulator_column(thread, reg)}),
                *fragment.Coordinate(thread, reg));
    }
  }
}

StMatrixFragment StMatrixOf(int matrices, bool transpose) {
  StMatrix stmatrix;
  stmatrix.matrices = matrices;
  stmatrix.transpose = transpose;
  return *StMatrixFragment::Of(stmatrix);
}

TEST(StMatrixFragmentTest, IsThatOfALegalStMatrix) {
  StMatrix three;
  three.matrices = 3;
  EXPECT_EQ(StMatrixFragment::Of(three).status(),
            StMatrixSharedB16(three).status());
  EXPECT_FALSE(StMatrixFragment::Of(three).ok());
}

TEST(StMatrixFragmentTest, LanesAddressTheRowsOfEachMatrixInTurn) {
  const StMatrixFragment x4 = StMatrixOf(4, false);
  EXPECT_EQ(*x4.Address(0), (FragmentCoordinate{0, 0}));
  EXPECT_EQ(*x4.Address(7), (FragmentCoordinate{0, 7}));
  EXPECT_EQ(*x4.Address(9), (FragmentCoordinate{1, 1}));
  EXPECT_EQ(*x4.Address(31), (FragmentCoordinate{3, 7}));
  EXPECT_EQ(Message(StMatrixOf(2, false).Address(16).status()),
            "stmatrix .x2: lane 16 is outside the lanes that supply addresses "
            "(0..15)");
  EXPECT_EQ(Message(x4.Address(32).status()),
            "stmatrix .x4: lane 32 is outside the warp (0..31)");
}

TEST(StMatrixFragmentTest, ValuesFollowTheIsaFigureAndTransposeWithTrans) {
  const StMatrixFragment plain = StMatrixOf(4, false);
  const StMatrixFragment trans = StMatrixOf(4, true);
  EXPECT_EQ(*plain.Element(0, 0), (FragmentCoordinate{0, 0}));
  EXPECT_EQ(*plain.Element(5, 1), (FragmentCoordinate{1, 3}));
  EXPECT_EQ(*plain.Element(31, 1), (FragmentCoordinate{7, 7}));
  EXPECT_EQ(*trans.Element(5, 1), (FragmentCoordinate{3, 1}));
  EXPECT_EQ(Message(plain.Element(0, 2).status()),
            "stmatrix .x4: half 2 is outside a b32 value's halves (0..1)");
  for (const StMatrixFragment& fragment : {plain, trans}) {
    std::set<std::pair<int, int>> covered;
    for (int lane = 0; lane < kWarpSize; ++lane) {
      for (int half = 0; half < 2; ++half) {
        const FragmentCoordinate at = *fragment.Element(lane, half);
        covered.insert({at.row, at.column});
        EXPECT_TRUE(at.row < StMatrixFragment::kMatrixRows &&
                    at.column < StMatrixFragment::kMatrixColumns);
      }
    }
    EXPECT_EQ(covered.size(), 64u) << "each matrix element once";
  }
}

AccumulatorStMatrix StoreOf(int n) {
  return *AccumulatorStMatrix::Of(Accumulator(n), StMatrix{});
}

TEST(AccumulatorStMatrixTest, TakesStMatrixX4WithoutTransOverWholeSteps) {
  StMatrix x2;
  x2.matrices = 2;
  StMatrix trans;
  trans.transpose = true;
  EXPECT_EQ(Message(AccumulatorStMatrix::Of(Accumulator(64), x2).status()),
            "accumulator stmatrix store: stmatrix .x2 is not the .x4 without "
            ".trans that "
            "stores 16 accumulator columns a step");
  EXPECT_EQ(Message(AccumulatorStMatrix::Of(Accumulator(64), trans).status()),
            "accumulator stmatrix store: stmatrix .x4.trans is not the .x4 "
            "without .trans "
            "that stores 16 accumulator columns a step");
  EXPECT_EQ(
      Message(AccumulatorStMatrix::Of(Accumulator(24), StMatrix{}).status()),
      "accumulator stmatrix store: N=24 is not a multiple of 16, the columns "
      "of a step");
  EXPECT_EQ(StoreOf(256).steps(), 16);
  EXPECT_EQ(Message(StoreOf(64).Address(0, 4).status()),
            "accumulator stmatrix store: step 4 is outside the steps of m64n64 "
            "(0..3)");
}

// Where stmatrix puts half `half` of value `value` of thread `thread` in
// step `step`: at the element the stmatrix fragment gives, in the matrix
// row whose address the warp's lane for that row supplies.
FragmentCoordinate Stored(const AccumulatorStMatrix& store, int thread,
                          int step, int value, int half) {
  const StMatrixFragment stmatrix = StMatrixOf(4, false);
  const int lane = thread % kWarpSize;
  const FragmentCoordinate element = *stmatrix.Element(lane, half);
  const int addressing_lane =
      value * StMatrixFragment::kMatrixRows + element.row;
  const FragmentCoordinate address =
      *store.Address(thread - lane + addressing_lane, step);
  return {address.row, address.column + element.column};
}

TEST(AccumulatorStMatrixTest, StoresEachAccumulatorWhereTheFragmentHoldsIt) {
  for (int n = AccumulatorStMatrix::kStepColumns; n <= kMaxWgmmaN;
       n += AccumulatorStMatrix::kStepColumns) {
    SCOPED_TRACE(absl::StrCat("m64n", n));
    const AccumulatorFragment accumulator = Accumulator(n);
    const AccumulatorStMatrix store = StoreOf(n);
    for (int thread = 0; thread < AccumulatorFragment::kThreads; ++thread) {
      std::set<int> stored;
      for (int step = 0; step < store.steps(); ++step) {
        for (int value = 0; value < 4; ++value) {
          for (int half = 0; half < 2; ++half) {
            const int reg = *store.Register(step, value, half);
            stored.insert(reg);
            ASSERT_EQ(Stored(store, thread, step, value, half),
                      *accumulator.Coordinate(thread, reg))
                << "thread " << thread << " step " << step << " value " << value
                << " half " << half;
          }
        }
      }
      EXPECT_EQ(static_cast<int>(stored.size()), accumulator.registers());
    }
  }
}

TEST(AccumulatorStMatrixTest, DeviceFunctionsAreTheSameForEveryN) {
  for (int n = AccumulatorStMatrix::kStepColumns; n <= kMaxWgmmaN;
       n += AccumulatorStMatrix::kStepColumns) {
    EXPECT_EQ(StoreOf(n).DeviceFunctions(),
              StoreOf(kMaxWgmmaN).DeviceFunctions());
  }
}

TEST(AccumulatorStMatrixTest,
     DeviceFunctionsComputeTheHostAddressesAndRegisters) {
  const AccumulatorStMatrix store = StoreOf(kMaxWgmmaN);
  for (int step = 0; step < store.steps(); ++step) {
    for (int thread = 0; thread < AccumulatorFragment::kThreads; ++thread) {
      EXPECT_EQ((FragmentCoordinate{rendered::stmatrix_row(thread),
                                    rendered::stmatrix_column(thread, step)}),
                *store.Address(thread, step));
    }
    for (int value = 0; value < 4; ++value) {
      for (int half = 0; half < 2; ++half) {
        EXPECT_EQ(rendered::stmatrix_register(step, value, half),
                  *store.Register(step, value, half));
      }
    }
  }
}

std::string DeviceFunctions() {
  return absl::StrCat(Accumulator(kMaxWgmmaN).DeviceFunctions(),
                      StoreOf(kMaxWgmmaN).DeviceFunctions());
}

// What the tests above compiled is what the layouts render (under `bazel
// test` the working directory is the runfiles root).
TEST(FragmentDeviceFunctionsTest, AreTheTextTheLayoutsRender) {
  EXPECT_EQ(testing_support::ReadFile("tests/ptx/fragment_functions.inc"),
            DeviceFunctions())
      << "If the change is intended, write the text above into "
         "tests/ptx/fragment_functions.inc.";
}

// NVRTC and ptxas take them as generated kernels do.
TEST(FragmentDeviceFunctionsTest, CompileForSm90a) {
  const std::string source = absl::StrCat(
      DeviceFunctions(),
      "extern \"C\" __global__ void fragment_functions(int* out) {\n"
      "  const int thread = threadIdx.x % 128;\n"
      "  out[threadIdx.x] = accumulator_row(thread, 3) + "
      "accumulator_column(thread, 5) +\n"
      "                     stmatrix_row(thread) + stmatrix_column(thread, 2) "
      "+\n"
      "                     stmatrix_register(1, 2, 1);\n"
      "}\n");
  absl::StatusOr<compile::CompiledModule> compiled =
      compile::CompileCuda("fragment_functions", source, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_TRUE(compiled->diagnostics.empty()) << compiled->log;
}

}  // namespace
}  // namespace ptxgen::ptx
