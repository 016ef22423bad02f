// Fragment layouts: the wgmma accumulator, wgmma's A in registers and
// stmatrix as the PTX ISA draws them, the accumulator store built of the
// first and the last, the accumulators taken as A (attention's P), and their
// device functions: fragment_functions.inc holds them as generated kernels get
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

// A wgmma m64nN that reads A from registers; integer inputs accumulate in
// s32, the others in f32.
WgmmaMma RegisterAMma(ScalarType input, int n = 64) {
  WgmmaMma mma =
      Mma(n, input, IsInt8(input) ? ScalarType::kS32 : ScalarType::kF32);
  mma.a_source = WgmmaASource::kRegisters;
  return mma;
}

RegisterAFragment RegisterA(ScalarType input) {
  return *RegisterAFragment::Of(RegisterAMma(input));
}

const ScalarType kRegisterAInputs[] = {
    ScalarType::kTF32, ScalarType::kF16, ScalarType::kBF16, ScalarType::kE4M3,
    ScalarType::kE5M2, ScalarType::kS8,  ScalarType::kU8};

TEST(RegisterAFragmentTest, IsThatOfALegalWgmmaReadingAFromRegisters) {
  WgmmaMma transposed = RegisterAMma(ScalarType::kF16);
  transposed.transpose_a = true;
  EXPECT_EQ(RegisterAFragment::Of(transposed).status(),
            ValidateWgmma(transposed));
  EXPECT_FALSE(RegisterAFragment::Of(transposed).ok());
  EXPECT_EQ(Message(RegisterAFragment::Of(Mma(64)).status()),
            "register A fragment: the wgmma reads A from shared memory; the "
            "fragment is that of the register-A (RS) form");
  // K = 8 elements a register: four b32 registers of 64 x K / 128 elements.
  const std::vector<std::pair<ScalarType, std::pair<int, int>>> shapes = {
      {ScalarType::kTF32, {1, 8}},  {ScalarType::kF16, {2, 16}},
      {ScalarType::kBF16, {2, 16}}, {ScalarType::kE4M3, {4, 32}},
      {ScalarType::kE5M2, {4, 32}}, {ScalarType::kS8, {4, 32}},
      {ScalarType::kU8, {4, 32}}};
  for (const auto& [input, elements_k] : shapes) {
    EXPECT_EQ(RegisterA(input).elements(), elements_k.first) << PtxName(input);
    EXPECT_EQ(RegisterA(input).k(), elements_k.second) << PtxName(input);
    EXPECT_EQ(RegisterA(input).k(), *WgmmaK(input)) << PtxName(input);
  }
}

TEST(RegisterAFragmentTest, CoversEveryElementOfTheTileExactlyOnce) {
  for (ScalarType input : kRegisterAInputs) {
    SCOPED_TRACE(PtxName(input));
    const RegisterAFragment fragment = RegisterA(input);
    std::vector<int> held(kWgmmaM * fragment.k(), 0);
    for (int thread = 0; thread < RegisterAFragment::kThreads; ++thread) {
      for (int reg = 0; reg < RegisterAFragment::kRegisters; ++reg) {
        for (int element = 0; element < fragment.elements(); ++element) {
          const FragmentCoordinate at =
              *fragment.Coordinate(thread, reg, element);
          ASSERT_TRUE(at.row >= 0 && at.row < kWgmmaM && at.column >= 0 &&
                      at.column < fragment.k());
          ++held[at.row * fragment.k() + at.column];
        }
      }
    }
    EXPECT_EQ(std::set<int>(held.begin(), held.end()), std::set<int>{1});
  }
}

// Points of the ISA's A figures (m64nNk8, k16, k32) as CUTLASS's
// GMMA::ALayout_64x8, 64x16 and 64x32 give them: {thread, register,
// element} -> (row, column).
TEST(RegisterAFragmentTest, MatchesTheIsaFigures) {
  struct Point {
    int thread, reg, element;
    FragmentCoordinate at;
  };
  const std::vector<std::pair<ScalarType, std::vector<Point>>> figures = {
      {ScalarType::kTF32,
       {{0, 0, 0, {0, 0}},
        {0, 1, 0, {8, 0}},
        {0, 2, 0, {0, 4}},
        {0, 3, 0, {8, 4}},
        {1, 0, 0, {0, 1}},
        {4, 0, 0, {1, 0}},
        {127, 3, 0, {63, 7}}}},
      {ScalarType::kF16,
       {{0, 0, 0, {0, 0}},
        {0, 0, 1, {0, 1}},
        {0, 1, 0, {8, 0}},
        {0, 2, 1, {0, 9}},
        {0, 3, 0, {8, 8}},
        {1, 0, 0, {0, 2}},
        {3, 3, 1, {8, 15}},
        {4, 0, 0, {1, 0}},
        {32, 0, 0, {16, 0}},
        {127, 3, 1, {63, 15}}}},
      {ScalarType::kE4M3,
       {{0, 0, 0, {0, 0}},
        {0, 0, 3, {0, 3}},
        {0, 1, 2, {8, 2}},
        {0, 2, 0, {0, 16}},
        {1, 0, 0, {0, 4}},
        {3, 3, 3, {8, 31}},
        {4, 0, 1, {1, 1}},
        {127, 3, 3, {63, 31}}}},
  };
  for (const auto& [input, points] : figures) {
    const RegisterAFragment fragment = RegisterA(input);
    for (const Point& point : points) {
      const FragmentCoordinate at =
          *fragment.Coordinate(point.thread, point.reg, point.element);
      EXPECT_EQ(at, point.at)
          << PtxName(input) << " thread " << point.thread << " register "
          << point.reg << " element " << point.element << ": (" << at.row
          << ", " << at.column << ")";
    }
  }
}

// What lets the accumulators of a first wgmma feed a second one's A.
TEST(RegisterAFragmentTest, IsTheAccumulatorFragmentOfM64N16For16BitInputs) {
  const AccumulatorFragment m64n16 = Accumulator(16);
  for (ScalarType input : {ScalarType::kF16, ScalarType::kBF16}) {
    const RegisterAFragment fragment = RegisterA(input);
    for (int thread = 0; thread < RegisterAFragment::kThreads; ++thread) {
      for (int reg = 0; reg < RegisterAFragment::kRegisters; ++reg) {
        for (int element = 0; element < 2; ++element) {
          EXPECT_EQ(*fragment.Coordinate(thread, reg, element),
                    *m64n16.Coordinate(thread, 2 * reg + element));
        }
      }
    }
  }
}

TEST(RegisterAFragmentTest, IsSeparableIntoThreadAndRegisterParts) {
  for (ScalarType input : kRegisterAInputs) {
    const RegisterAFragment fragment = RegisterA(input);
    for (int thread = 0; thread < RegisterAFragment::kThreads; ++thread) {
      const FragmentCoordinate t = *fragment.Coordinate(thread, 0, 0);
      for (int reg = 0; reg < RegisterAFragment::kRegisters; ++reg) {
        for (int element = 0; element < fragment.elements(); ++element) {
          const FragmentCoordinate r = *fragment.Coordinate(0, reg, element);
          EXPECT_EQ(*fragment.Coordinate(thread, reg, element),
                    (FragmentCoordinate{t.row + r.row, t.column + r.column}));
        }
      }
    }
  }
}

TEST(RegisterAFragmentTest, HostArgumentsOutsideTheFragmentAreErrors) {
  const RegisterAFragment f16 = RegisterA(ScalarType::kF16);
  EXPECT_EQ(
      Message(f16.Coordinate(128, 0, 0).status()),
      "register A fragment: thread 128 is outside the warpgroup (0..127)");
  EXPECT_EQ(Message(f16.Coordinate(0, 4, 0).status()),
            "register A fragment: register 4 is outside A's registers (0..3)");
  EXPECT_EQ(Message(f16.Coordinate(0, 0, 2).status()),
            "register A fragment: element 2 is outside the f16 elements of a "
            "register (0..1)");
  EXPECT_EQ(Message(RegisterA(ScalarType::kE4M3).Coordinate(0, 0, 4).status()),
            "register A fragment: element 4 is outside the e4m3 elements of a "
            "register (0..3)");
  EXPECT_FALSE(f16.Coordinate(0, -1, 0).ok());
}

TEST(RegisterAFragmentTest, DeviceFunctionsComputeTheHostCoordinates) {
  const RegisterAFragment fragment = RegisterA(ScalarType::kF16);
  for (int thread = 0; thread < RegisterAFragment::kThreads; ++thread) {
    for (int reg = 0; reg < RegisterAFragment::kRegisters; ++reg) {
      for (int element = 0; element < fragment.elements(); ++element) {
        EXPECT_EQ((FragmentCoordinate{
                      rendered::register_a_row(thread, reg),
                      rendered::register_a_column(thread, reg, element)}),
                  *fragment.Coordinate(thread, reg, element));
      }
    }
  }
}

// fragment_functions.inc holds the 16-bit functions; the 8-bit ones differ
// in the columns a register packs.
TEST(RegisterAFragmentTest, DeviceFunctionsOf8BitInputsPackFourColumns) {
  EXPECT_EQ(RegisterA(ScalarType::kE4M3).DeviceFunctions(),
            "// wgmma's A in registers, m64nNk32 with e4m3 inputs "
            "(ptx::RegisterAFragment):\n"
            "// the element of the 64-row tile that element `element` of "
            "register `reg`\n"
            "// of warpgroup thread `thread` holds.\n"
            "__device__ __forceinline__ int register_a_row(int thread, int "
            "reg) {\n"
            "  return 16 * (thread / 32) + thread % 32 / 4 + 8 * (reg % 2);\n"
            "}\n"
            "__device__ __forceinline__ int register_a_column(int thread, int "
            "reg, int element) {\n"
            "  return 16 * (reg / 2) + 4 * (thread % 32 % 4) + element;\n"
            "}\n");
}

AccumulatorToRegisterA ToRegisterA(int n, ScalarType input) {
  const WgmmaMma first = RegisterAMma(input, n);
  return *AccumulatorToRegisterA::Of(*AccumulatorFragment::Of(first),
                                     RegisterA(input));
}

TEST(AccumulatorToRegisterATest, TakesSlicesOfKColumnsAs16Or8BitA) {
  EXPECT_EQ(Message(AccumulatorToRegisterA::Of(Accumulator(24),
                                               RegisterA(ScalarType::kF16))
                        .status()),
            "accumulators to register A: N=24 is not a multiple of 16, the K "
            "of f16 A");
  EXPECT_EQ(Message(AccumulatorToRegisterA::Of(Accumulator(64),
                                               RegisterA(ScalarType::kTF32))
                        .status()),
            "accumulators to register A: tf32 A is not taken from "
            "accumulators; pairs of them pack into 16-bit or 8-bit elements");
  EXPECT_EQ(ToRegisterA(256, ScalarType::kBF16).slices(), 16);
  EXPECT_EQ(ToRegisterA(256, ScalarType::kE4M3).slices(), 8);
  EXPECT_EQ(ToRegisterA(64, ScalarType::kS8).slices(), 2);
}

const int kAttentionN[] = {64, 128, 256};

// Attention's P: the f32 accumulators of S = Q * K^T, 16 columns a slice,
// are P * V's register A in the same threads, in the same column order; a
// register is the next two accumulators, converted by one cvt.rn.f16x2.f32
// (bf16x2), and V is read as it is.
TEST(AccumulatorToRegisterATest, For16BitInputsNeedsNoShuffleNorPermutation) {
  for (ScalarType input : {ScalarType::kF16, ScalarType::kBF16}) {
    for (int n : kAttentionN) {
      SCOPED_TRACE(absl::StrCat(PtxName(input), " m64n", n));
      const AccumulatorFragment accumulator = Accumulator(n);
      const RegisterAFragment a = RegisterA(input);
      const AccumulatorToRegisterA conversion = ToRegisterA(n, input);
      EXPECT_TRUE(conversion.KeepsColumnOrder());
      std::set<int> taken;
      for (int slice = 0; slice < conversion.slices(); ++slice) {
        for (int reg = 0; reg < RegisterAFragment::kRegisters; ++reg) {
          EXPECT_EQ(*conversion.Register(slice, reg, 0), 8 * slice + 2 * reg);
          EXPECT_EQ(*conversion.Register(slice, reg, 1),
                    *conversion.Register(slice, reg, 0) + 1);
          for (int element = 0; element < 2; ++element) {
            const int source = *conversion.Register(slice, reg, element);
            taken.insert(source);
            for (int thread = 0; thread < RegisterAFragment::kThreads;
                 ++thread) {
              const FragmentCoordinate at = *a.Coordinate(thread, reg, element);
              ASSERT_EQ(*accumulator.Coordinate(thread, source),
                        (FragmentCoordinate{at.row, 16 * slice + at.column}))
                  << "thread " << thread << " slice " << slice << " register "
                  << reg << " element " << element;
            }
          }
        }
      }
      EXPECT_EQ(static_cast<int>(taken.size()), accumulator.registers());
    }
  }
}

// The thread of `accumulator` that holds each element of its tile, row by
// row.
std::vector<int> Holders(const AccumulatorFragment& accumulator) {
  std::vector<int> holders(kWgmmaM * accumulator.n(), -1);
  for (int thread = 0; thread < AccumulatorFragment::kThreads; ++thread) {
    for (int reg = 0; reg < accumulator.registers(); ++reg) {
      const FragmentCoordinate at = *accumulator.Coordinate(thread, reg);
      holders[at.row * accumulator.n() + at.column] = thread;
    }
  }
  return holders;
}

// 8-bit A holds 4 adjacent columns a lane (4t..4t+3 of each 16), the
// accumulators 2 (2t, 2t + 1 of each 8): in column order, A's elements lie
// in other lanes of the same quad, and a conversion would shuffle.
TEST(AccumulatorToRegisterATest, For8BitInputsColumnOrderWouldNeedShuffles) {
  const std::vector<int> holders = Holders(Accumulator(32));
  const RegisterAFragment a = RegisterA(ScalarType::kE4M3);
  int elsewhere = 0;
  for (int thread = 0; thread < RegisterAFragment::kThreads; ++thread) {
    for (int reg = 0; reg < RegisterAFragment::kRegisters; ++reg) {
      for (int element = 0; element < a.elements(); ++element) {
        const FragmentCoordinate at = *a.Coordinate(thread, reg, element);
        const int holder = holders[at.row * 32 + at.column];
        ASSERT_EQ(holder / 4, thread / 4) << "a lane of the same quad";
        if (holder != thread) ++elsewhere;
      }
    }
  }
  // Three quarters of them: of each 16 columns only lane 0's 0 and 1 and
  // lane 3's 14 and 15 stay (hence FlashAttention-3's lane_03 selectors).
  EXPECT_EQ(elsewhere, RegisterAFragment::kThreads * 16 * 3 / 4);
  EXPECT_EQ(holders[a.Coordinate(1, 0, 0)->column], 2);
}

// Taken in the order the accumulators hold them (FlashAttention-3's
// permute_Cregs_fp8), A's elements stay in their threads, a register packs
// two pairs (two cvt.rn.satfinite.e4m3x2.f32), and the slice's columns land
// in A's columns AColumn, the order V's keys must take as B's rows.
TEST(AccumulatorToRegisterATest, For8BitInputsPermutesTheColumnsOfASlice) {
  const std::vector<int> a_columns = {
      0,  1,  4,  5,  8,  9,  12, 13, 2,  3,  6,  7,  10, 11, 14, 15,
      16, 17, 20, 21, 24, 25, 28, 29, 18, 19, 22, 23, 26, 27, 30, 31};
  const std::vector<std::vector<int>> slice_registers = {
      {0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}};
  for (ScalarType input :
       {ScalarType::kE4M3, ScalarType::kE5M2, ScalarType::kS8}) {
    for (int n : kAttentionN) {
      SCOPED_TRACE(absl::StrCat(PtxName(input), " m64n", n));
      const AccumulatorFragment accumulator =
          *AccumulatorFragment::Of(RegisterAMma(input, n));
      const RegisterAFragment a = RegisterA(input);
      const AccumulatorToRegisterA conversion = ToRegisterA(n, input);
      EXPECT_FALSE(conversion.KeepsColumnOrder());
      std::vector<int> column_of(32, -1);
      for (int column = 0; column < 32; ++column) {
        EXPECT_EQ(*conversion.AColumn(column), a_columns[column]) << column;
        column_of[*conversion.AColumn(column)] = column;
      }
      std::set<int> taken;
      for (int slice = 0; slice < conversion.slices(); ++slice) {
        for (int reg = 0; reg < RegisterAFragment::kRegisters; ++reg) {
          for (int element = 0; element < 4; ++element) {
            const int source = *conversion.Register(slice, reg, element);
            EXPECT_EQ(source, 16 * slice + slice_registers[reg][element]);
            taken.insert(source);
            for (int thread = 0; thread < RegisterAFragment::kThreads;
                 ++thread) {
              const FragmentCoordinate at = *a.Coordinate(thread, reg, element);
              ASSERT_EQ(*accumulator.Coordinate(thread, source),
                        (FragmentCoordinate{at.row,
                                            32 * slice + column_of[at.column]}))
                  << "thread " << thread << " slice " << slice << " register "
                  << reg << " element " << element;
            }
          }
        }
      }
      EXPECT_EQ(static_cast<int>(taken.size()), accumulator.registers());
    }
  }
}

// The whole contract, simulated on the host: S held in the accumulators,
// taken slice by slice as A, times V with its rows in the order AColumn
// gives, is S * V.
TEST(AccumulatorToRegisterATest, TheSecondWgmmaComputesTheProductOfTheFirst) {
  constexpr int kD = 8;  // the second wgmma's N
  for (ScalarType input : {ScalarType::kF16, ScalarType::kE4M3}) {
    for (int n : kAttentionN) {
      SCOPED_TRACE(absl::StrCat(PtxName(input), " m64n", n));
      const AccumulatorFragment accumulator = Accumulator(n);
      const RegisterAFragment a = RegisterA(input);
      const AccumulatorToRegisterA conversion = ToRegisterA(n, input);
      const int k = a.k();
      auto s = [&](int row, int column) { return (row * 7 + column * 3) % 11; };
      auto v = [&](int key, int d) { return (key * 5 + d) % 13 - 6; };
      // Each thread's accumulators.
      std::vector<std::vector<int>> held(AccumulatorFragment::kThreads);
      for (int thread = 0; thread < AccumulatorFragment::kThreads; ++thread) {
        for (int reg = 0; reg < accumulator.registers(); ++reg) {
          const FragmentCoordinate at = *accumulator.Coordinate(thread, reg);
          held[thread].push_back(s(at.row, at.column));
        }
      }
      std::vector<int> product(kWgmmaM * kD, 0);
      for (int slice = 0; slice < conversion.slices(); ++slice) {
        // The tile the second wgmma reads from the threads' A registers.
        std::vector<int> tile(kWgmmaM * k, 0);
        for (int thread = 0; thread < RegisterAFragment::kThreads; ++thread) {
          for (int reg = 0; reg < RegisterAFragment::kRegisters; ++reg) {
            for (int element = 0; element < a.elements(); ++element) {
              const FragmentCoordinate at = *a.Coordinate(thread, reg, element);
              tile[at.row * k + at.column] =
                  held[thread][*conversion.Register(slice, reg, element)];
            }
          }
        }
        // B's row AColumn(c) is V's key slice * K + c.
        std::vector<int> b(k * kD, 0);
        for (int column = 0; column < k; ++column) {
          for (int d = 0; d < kD; ++d) {
            b[*conversion.AColumn(column) * kD + d] = v(slice * k + column, d);
          }
        }
        for (int row = 0; row < kWgmmaM; ++row) {
          for (int d = 0; d < kD; ++d) {
            for (int i = 0; i < k; ++i) {
              product[row * kD + d] += tile[row * k + i] * b[i * kD + d];
            }
          }
        }
      }
      for (int row = 0; row < kWgmmaM; ++row) {
        for (int d = 0; d < kD; ++d) {
          int expected = 0;
          for (int key = 0; key < n; ++key) expected += s(row, key) * v(key, d);
          ASSERT_EQ(product[row * kD + d], expected) << row << ", " << d;
        }
      }
    }
  }
}

TEST(AccumulatorToRegisterATest, HostArgumentsOutsideTheConversionAreErrors) {
  const AccumulatorToRegisterA conversion = ToRegisterA(64, ScalarType::kF16);
  EXPECT_EQ(Message(conversion.Register(4, 0, 0).status()),
            "accumulators to register A: slice 4 is outside the k16 slices of "
            "m64n64 (0..3)");
  EXPECT_EQ(Message(conversion.Register(0, 4, 0).status()),
            "accumulators to register A: register 4 is outside A's registers "
            "(0..3)");
  EXPECT_EQ(Message(conversion.Register(0, 0, 2).status()),
            "accumulators to register A: element 2 is outside the elements of "
            "a register (0..1)");
  EXPECT_EQ(Message(conversion.AColumn(16).status()),
            "accumulators to register A: column 16 is outside a slice's "
            "columns (0..15)");
}

TEST(AccumulatorToRegisterATest, DeviceFunctionsAreTheSameForEveryN) {
  for (ScalarType input : {ScalarType::kF16, ScalarType::kE4M3}) {
    for (int n : kAttentionN) {
      EXPECT_EQ(ToRegisterA(n, input).DeviceFunctions(),
                ToRegisterA(kMaxWgmmaN, input).DeviceFunctions());
    }
  }
}

TEST(AccumulatorToRegisterATest, DeviceFunctionsComputeTheHostRegisters) {
  const AccumulatorToRegisterA conversion =
      ToRegisterA(kMaxWgmmaN, ScalarType::kF16);
  for (int slice = 0; slice < conversion.slices(); ++slice) {
    for (int reg = 0; reg < RegisterAFragment::kRegisters; ++reg) {
      for (int element = 0; element < 2; ++element) {
        EXPECT_EQ(rendered::register_a_accumulator(slice, reg, element),
                  *conversion.Register(slice, reg, element));
      }
    }
  }
}

TEST(AccumulatorToRegisterATest, DeviceFunctionsOf8BitInputsTakeTwoPairs) {
  EXPECT_TRUE(testing_support::Contains(
      ToRegisterA(kMaxWgmmaN, ScalarType::kE4M3).DeviceFunctions(),
      "__device__ __forceinline__ int register_a_accumulator(int slice, int "
      "reg, int element) {\n"
      "  return 16 * slice + 4 * (2 * (reg / 2) + element / 2) + 2 * (reg % "
      "2) + element % 2;\n"
      "}\n"));
}

std::string DeviceFunctions() {
  return absl::StrCat(
      Accumulator(kMaxWgmmaN).DeviceFunctions(),
      StoreOf(kMaxWgmmaN).DeviceFunctions(),
      RegisterA(ScalarType::kF16).DeviceFunctions(),
      ToRegisterA(kMaxWgmmaN, ScalarType::kF16).DeviceFunctions());
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
      "                     stmatrix_register(1, 2, 1) + "
      "register_a_row(thread, 1) +\n"
      "                     register_a_column(thread, 2, 1) + "
      "register_a_accumulator(3, 2, 1);\n"
      "}\n");
  absl::StatusOr<compile::CompiledModule> compiled =
      compile::CompileCuda("fragment_functions", source, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_TRUE(compiled->diagnostics.empty()) << compiled->log;
}

// The 8-bit register A functions, which share the 16-bit ones' names.
TEST(FragmentDeviceFunctionsTest, With8BitACompileForSm90a) {
  const std::string source = absl::StrCat(
      RegisterA(ScalarType::kE4M3).DeviceFunctions(),
      ToRegisterA(kMaxWgmmaN, ScalarType::kE4M3).DeviceFunctions(),
      "extern \"C\" __global__ void fragment_functions(int* out) {\n"
      "  const int thread = threadIdx.x % 128;\n"
      "  out[threadIdx.x] = register_a_row(thread, 1) + "
      "register_a_column(thread, 2, 3) +\n"
      "                     register_a_accumulator(3, 2, 3);\n"
      "}\n");
  absl::StatusOr<compile::CompiledModule> compiled =
      compile::CompileCuda("fragment_functions", source, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_TRUE(compiled->diagnostics.empty()) << compiled->log;
}

}  // namespace
}  // namespace ptxgen::ptx
