#include "ptxgen/ptx/fragment_layout.h"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ptxgen::ptx {

struct IndexExpression::Node {
  enum class Kind {
    kConstant,
    kVariable,
    kSum,
    kProduct,
    kQuotient,
    kRemainder
  };

  Kind kind = Kind::kConstant;
  int number = 0;                     // the constant, factor or divisor
  std::string variable;               // kVariable
  std::shared_ptr<const Node> left;   // the operand; a sum's first
  std::shared_ptr<const Node> right;  // a sum's second

  static std::shared_ptr<const Node> Make(
      Kind kind, int number, std::string variable = "",
      std::shared_ptr<const Node> left = nullptr,
      std::shared_ptr<const Node> right = nullptr) {
    auto node = std::make_shared<Node>();
    node->kind = kind;
    node->number = number;
    node->variable = std::move(variable);
    node->left = std::move(left);
    node->right = std::move(right);
    return node;
  }

  // C++ precedence: sums bind loosest, then *, / and %, then leaves.
  int Precedence() const {
    switch (kind) {
      case Kind::kSum:
        return 1;
      case Kind::kProduct:
      case Kind::kQuotient:
      case Kind::kRemainder:
        return 2;
      case Kind::kConstant:
      case Kind::kVariable:
        return 3;
    }
    return 3;
  }

  static std::string Operand(const Node& operand, int least_precedence) {
    const std::string text = operand.Render();
    return operand.Precedence() < least_precedence
               ? absl::StrCat("(", text, ")")
               : text;
  }

  // Operators group left to right, so a right operand of the same
  // precedence keeps its parentheses: the text computes what the tree does.
  std::string Render() const {
    switch (kind) {
      case Kind::kConstant:
        return absl::StrCat(number);
      case Kind::kVariable:
        return variable;
      case Kind::kSum:
        return absl::StrCat(Operand(*left, 1), " + ", Operand(*right, 2));
      case Kind::kProduct:
        return absl::StrCat(number, " * ", Operand(*left, 3));
      case Kind::kQuotient:
        return absl::StrCat(Operand(*left, 2), " / ", number);
      case Kind::kRemainder:
        return absl::StrCat(Operand(*left, 2), " % ", number);
    }
    return "";
  }

  // In 64 bits, so that a result outside int is an error, not undefined
  // behavior.
  absl::StatusOr<int64_t> Evaluate(const IndexBindings& bindings) const {
    if (kind == Kind::kConstant) return number;
    if (kind == Kind::kVariable) {
      auto it = bindings.find(variable);
      if (it == bindings.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "index expression: no value for variable '", variable, "'"));
      }
      return it->second;
    }
    absl::StatusOr<int64_t> a = left->Evaluate(bindings);
    if (!a.ok()) return a.status();
    int64_t value = 0;
    if (kind == Kind::kSum) {
      absl::StatusOr<int64_t> b = right->Evaluate(bindings);
      if (!b.ok()) return b.status();
      value = *a + *b;
    } else if (kind == Kind::kProduct) {
      value = number * *a;
    } else if (number == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "index expression: division by zero in '", Render(), "'"));
    } else {
      value = kind == Kind::kQuotient ? *a / number : *a % number;
    }
    if (value < std::numeric_limits<int>::min() ||
        value > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "index expression: '", Render(), "' = ", value, " overflows int"));
    }
    return value;
  }
};

IndexExpression::IndexExpression(std::shared_ptr<const Node> node)
    : node_(std::move(node)) {}

IndexExpression::IndexExpression(int constant)
    : IndexExpression(Node::Make(Node::Kind::kConstant, constant)) {}

IndexExpression IndexExpression::Variable(absl::string_view name) {
  return IndexExpression(
      Node::Make(Node::Kind::kVariable, 0, std::string(name)));
}

IndexExpression operator+(const IndexExpression& a, const IndexExpression& b) {
  using Node = IndexExpression::Node;
  return IndexExpression(Node::Make(Node::Kind::kSum, 0, "", a.node_, b.node_));
}

IndexExpression operator*(int factor, const IndexExpression& a) {
  using Node = IndexExpression::Node;
  return IndexExpression(Node::Make(Node::Kind::kProduct, factor, "", a.node_));
}

IndexExpression operator/(const IndexExpression& a, int divisor) {
  using Node = IndexExpression::Node;
  return IndexExpression(
      Node::Make(Node::Kind::kQuotient, divisor, "", a.node_));
}

IndexExpression operator%(const IndexExpression& a, int divisor) {
  using Node = IndexExpression::Node;
  return IndexExpression(
      Node::Make(Node::Kind::kRemainder, divisor, "", a.node_));
}

absl::StatusOr<int> IndexExpression::Evaluate(
    const IndexBindings& bindings) const {
  absl::StatusOr<int64_t> value = node_->Evaluate(bindings);
  if (!value.ok()) return value.status();
  return static_cast<int>(*value);
}

std::string IndexExpression::Render() const { return node_->Render(); }

namespace {

// The variables of the rendered device functions, and their parameters.
constexpr char kThread[] = "thread";
constexpr char kRegister[] = "reg";
constexpr char kLane[] = "lane";
constexpr char kHalf[] = "half";
constexpr char kStep[] = "step";
constexpr char kValue[] = "value";

IndexExpression Variable(absl::string_view name) {
  return IndexExpression::Variable(name);
}

// `value` (of the argument `name`) must lie in [0, end), the range
// `range_name`; else an error that says so.
absl::Status InRange(absl::string_view layout, absl::string_view name,
                     int value, int end, absl::string_view range_name) {
  if (value >= 0 && value < end) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(layout, ": ", name, " ", value,
                                                 " is outside ", range_name,
                                                 " (0..", end - 1, ")"));
}

// Both coordinates of one element, evaluated with the same bindings.
absl::StatusOr<FragmentCoordinate> EvaluateCoordinate(
    const IndexExpression& row, const IndexExpression& column,
    const IndexBindings& bindings) {
  absl::StatusOr<int> r = row.Evaluate(bindings);
  if (!r.ok()) return r.status();
  absl::StatusOr<int> c = column.Evaluate(bindings);
  if (!c.ok()) return c.status();
  return FragmentCoordinate{*r, *c};
}

// "__device__ __forceinline__ int name(int a, int b) {\n  return body;\n}\n".
std::string DeviceFunction(absl::string_view name,
                           const std::vector<std::string>& parameters,
                           const IndexExpression& body) {
  std::vector<std::string> declarations;
  for (const std::string& parameter : parameters)
    declarations.push_back("int " + parameter);
  return absl::StrCat("__device__ __forceinline__ int ", name, "(",
                      absl::StrJoin(declarations, ", "), ") {\n  return ",
                      body.Render(), ";\n}\n");
}

}  // namespace

absl::StatusOr<AccumulatorFragment> AccumulatorFragment::Of(
    const WgmmaMma& mma) {
  if (absl::Status valid = ValidateWgmma(mma); !valid.ok()) return valid;
  if (mma.d_type != ScalarType::kF32 && mma.d_type != ScalarType::kS32) {
    return absl::InvalidArgumentError(
        absl::StrCat("accumulator fragment: ", PtxName(mma.d_type),
                     " accumulators pack two values a register; the layout is "
                     "that of 32-bit ones "
                     "(f32, s32)"));
  }
  return AccumulatorFragment(mma.n, mma.d_type);
}

int AccumulatorFragment::registers() const {
  return WgmmaAccumulatorRegisters(d_type_, n_);
}

// Lanes form 8 rows of 4; register bit 0 picks the column of a pair, bit 1
// the row 8 below, the rest the 8-column chunk.
IndexExpression AccumulatorFragment::RowExpression(
    const IndexExpression& thread, const IndexExpression& reg) {
  return kRowsPerWarp * (thread / kWarpSize) + thread % kWarpSize / 4 +
         8 * (reg / 2 % 2);
}

IndexExpression AccumulatorFragment::ColumnExpression(
    const IndexExpression& thread, const IndexExpression& reg) {
  return 8 * (reg / 4) + 2 * (thread % kWarpSize % 4) + reg % 2;
}

absl::StatusOr<FragmentCoordinate> AccumulatorFragment::Coordinate(
    int thread, int reg) const {
  constexpr char kLayout[] = "accumulator fragment";
  if (absl::Status in =
          InRange(kLayout, "thread", thread, kThreads, "the warpgroup");
      !in.ok()) {
    return in;
  }
  if (absl::Status in = InRange(kLayout, "register", reg, registers(),
                                absl::StrCat("the registers of m64n", n_));
      !in.ok()) {
    return in;
  }
  return EvaluateCoordinate(
      RowExpression(Variable(kThread), Variable(kRegister)),
      ColumnExpression(Variable(kThread), Variable(kRegister)),
      {{kThread, thread}, {kRegister, reg}});
}

std::string AccumulatorFragment::DeviceFunctions() const {
  return absl::StrCat(
      "// The wgmma accumulator fragment (ptx::AccumulatorFragment): the "
      "element\n"
      "// of the 64-row tile that register `reg` of warpgroup thread `thread` "
      "holds.\n",
      DeviceFunction("accumulator_row", {kThread, kRegister},
                     RowExpression(Variable(kThread), Variable(kRegister))),
      DeviceFunction("accumulator_column", {kThread, kRegister},
                     ColumnExpression(Variable(kThread), Variable(kRegister))));
}

namespace {

constexpr char kElement[] = "element";
constexpr char kSlice[] = "slice";

// Lanes of a quad: the columns a row of a fragment spreads over.
constexpr int kQuadLanes = 4;

}  // namespace

absl::StatusOr<RegisterAFragment> RegisterAFragment::Of(const WgmmaMma& mma) {
  if (absl::Status valid = ValidateWgmma(mma); !valid.ok()) return valid;
  if (mma.a_source != WgmmaASource::kRegisters) {
    return absl::InvalidArgumentError(
        "register A fragment: the wgmma reads A from shared memory; the "
        "fragment is that of the register-A (RS) form");
  }
  return RegisterAFragment(mma.a_type, 32 / SizeInBits(mma.a_type));
}

// Register bit 1 picks the right half of K; each lane of a quad holds E
// adjacent columns of a half.
int RegisterAFragment::k() const { return 2 * kQuadLanes * elements_; }

IndexExpression RegisterAFragment::RowExpression(const IndexExpression& thread,
                                                 const IndexExpression& reg) {
  return AccumulatorFragment::kRowsPerWarp * (thread / kWarpSize) +
         thread % kWarpSize / kQuadLanes + 8 * (reg % 2);
}

IndexExpression RegisterAFragment::ColumnExpression(
    const IndexExpression& thread, const IndexExpression& reg,
    const IndexExpression& element) const {
  return kQuadLanes * elements_ * (reg / 2) +
         elements_ * (thread % kWarpSize % kQuadLanes) + element;
}

absl::StatusOr<FragmentCoordinate> RegisterAFragment::Coordinate(
    int thread, int reg, int element) const {
  constexpr char kLayout[] = "register A fragment";
  if (absl::Status in =
          InRange(kLayout, "thread", thread, kThreads, "the warpgroup");
      !in.ok()) {
    return in;
  }
  if (absl::Status in =
          InRange(kLayout, "register", reg, kRegisters, "A's registers");
      !in.ok()) {
    return in;
  }
  if (absl::Status in = InRange(
          kLayout, "element", element, elements_,
          absl::StrCat("the ", PtxName(a_type_), " elements of a register"));
      !in.ok()) {
    return in;
  }
  return EvaluateCoordinate(
      RowExpression(Variable(kThread), Variable(kRegister)),
      ColumnExpression(Variable(kThread), Variable(kRegister),
                       Variable(kElement)),
      {{kThread, thread}, {kRegister, reg}, {kElement, element}});
}

std::string RegisterAFragment::DeviceFunctions() const {
  return absl::StrCat(
      "// wgmma's A in registers, m64nNk", k(), " with ", PtxName(a_type_),
      " inputs (ptx::RegisterAFragment):\n"
      "// the element of the 64-row tile that element `element` of register "
      "`reg`\n"
      "// of warpgroup thread `thread` holds.\n",
      DeviceFunction("register_a_row", {kThread, kRegister},
                     RowExpression(Variable(kThread), Variable(kRegister))),
      DeviceFunction("register_a_column", {kThread, kRegister, kElement},
                     ColumnExpression(Variable(kThread), Variable(kRegister),
                                      Variable(kElement))));
}

absl::StatusOr<AccumulatorToRegisterA> AccumulatorToRegisterA::Of(
    const AccumulatorFragment& accumulator, const RegisterAFragment& a) {
  constexpr char kLayout[] = "accumulators to register A";
  if (a.elements() != 2 && a.elements() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        kLayout, ": ", PtxName(a.a_type()),
        " A is not taken from accumulators; pairs of them pack into 16-bit or "
        "8-bit elements"));
  }
  if (accumulator.n() % a.k() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLayout, ": N=", accumulator.n(), " is not a multiple of ",
                     a.k(), ", the K of ", PtxName(a.a_type()), " A"));
  }
  AccumulatorToRegisterA conversion(accumulator.n(), a.k(), a.elements());
  // Each element A takes must lie in the same row as the accumulator it
  // takes, in the slice; its columns there and in A give AColumn. Other warps
  // and lane rows add the same row to both layouts, other slices the same
  // columns, so the lanes of one quad in slice 0 give the whole order (the
  // tests check every thread and slice).
  std::vector<int> a_columns(a.k(), -1);
  for (int lane = 0; lane < kQuadLanes; ++lane) {
    for (int reg = 0; reg < RegisterAFragment::kRegisters; ++reg) {
      for (int element = 0; element < a.elements(); ++element) {
        absl::StatusOr<int> source = conversion.Register(0, reg, element);
        if (!source.ok()) return source.status();
        absl::StatusOr<FragmentCoordinate> held =
            accumulator.Coordinate(lane, *source);
        if (!held.ok()) return held.status();
        absl::StatusOr<FragmentCoordinate> taken =
            a.Coordinate(lane, reg, element);
        if (!taken.ok()) return taken.status();
        if (held->row != taken->row || held->column >= a.k() ||
            (a_columns[held->column] != -1 &&
             a_columns[held->column] != taken->column)) {
          return absl::InternalError(absl::StrCat(
              kLayout, ": lane ", lane, "'s A (", taken->row, ", ",
              taken->column, ") does not match its accumulator register ",
              *source, " at (", held->row, ", ", held->column, ")"));
        }
        a_columns[held->column] = taken->column;
      }
    }
  }
  conversion.a_columns_ = std::move(a_columns);
  return conversion;
}

bool AccumulatorToRegisterA::KeepsColumnOrder() const {
  for (int column = 0; column < k_; ++column) {
    if (a_columns_[column] != column) return false;
  }
  return true;
}

// In a slice a thread holds E pairs of adjacent columns of each of its two
// rows, 8 columns (4 accumulator registers) apart, register bit 1 picking
// the row. A register r takes, of row r % 2, the E / 2 pairs from pair
// (E / 2)(r / 2) on: element e is member e % 2 of its pair e / 2. With E = 2
// a register is one pair.
IndexExpression AccumulatorToRegisterA::RegisterExpression(
    const IndexExpression& slice, const IndexExpression& reg,
    const IndexExpression& element) const {
  const IndexExpression pair =
      elements_ == 2 ? reg / 2 : elements_ / 2 * (reg / 2) + element / 2;
  const IndexExpression member = elements_ == 2 ? element : element % 2;
  return k_ / 2 * slice + 4 * pair + 2 * (reg % 2) + member;
}

absl::StatusOr<int> AccumulatorToRegisterA::Register(int slice, int reg,
                                                     int element) const {
  constexpr char kLayout[] = "accumulators to register A";
  if (absl::Status in =
          InRange(kLayout, "slice", slice, slices(),
                  absl::StrCat("the k", k_, " slices of m64n", n_));
      !in.ok()) {
    return in;
  }
  if (absl::Status in = InRange(kLayout, "register", reg,
                                RegisterAFragment::kRegisters, "A's registers");
      !in.ok()) {
    return in;
  }
  if (absl::Status in = InRange(kLayout, "element", element, elements_,
                                "the elements of a register");
      !in.ok()) {
    return in;
  }
  return RegisterExpression(Variable(kSlice), Variable(kRegister),
                            Variable(kElement))
      .Evaluate({{kSlice, slice}, {kRegister, reg}, {kElement, element}});
}

absl::StatusOr<int> AccumulatorToRegisterA::AColumn(int column) const {
  if (absl::Status in = InRange("accumulators to register A", "column", column,
                                k_, "a slice's columns");
      !in.ok()) {
    return in;
  }
  return a_columns_[column];
}

std::string AccumulatorToRegisterA::DeviceFunctions() const {
  return absl::StrCat(
      "// The accumulators taken as wgmma's A in registers, ", k_,
      " columns a slice\n"
      "// (ptx::AccumulatorToRegisterA): the accumulator register that "
      "element\n"
      "// `element` of A register `reg` takes in slice `slice`, in the same "
      "thread.\n",
      DeviceFunction("register_a_accumulator", {kSlice, kRegister, kElement},
                     RegisterExpression(Variable(kSlice), Variable(kRegister),
                                        Variable(kElement))));
}

absl::StatusOr<StMatrixFragment> StMatrixFragment::Of(
    const StMatrix& stmatrix) {
  if (absl::Status legal = StMatrixSharedB16(stmatrix).status(); !legal.ok())
    return legal;
  return StMatrixFragment(stmatrix);
}

IndexExpression StMatrixFragment::AddressMatrixExpression(
    const IndexExpression& lane) {
  return lane / kMatrixRows;
}

IndexExpression StMatrixFragment::AddressRowExpression(
    const IndexExpression& lane) {
  return lane % kMatrixRows;
}

// Lanes form 8 rows of 4 over the matrix, each holding two adjacent
// columns; .trans stores the matrix transposed.
IndexExpression StMatrixFragment::ElementRowExpression(
    const IndexExpression& lane, const IndexExpression& half) const {
  return stmatrix_.transpose ? 2 * (lane % 4) + half : lane / 4;
}

IndexExpression StMatrixFragment::ElementColumnExpression(
    const IndexExpression& lane, const IndexExpression& half) const {
  return stmatrix_.transpose ? lane / 4 : 2 * (lane % 4) + half;
}

absl::StatusOr<FragmentCoordinate> StMatrixFragment::Address(int lane) const {
  const std::string layout = absl::StrCat("stmatrix .x", matrices());
  if (absl::Status in = InRange(layout, "lane", lane, kWarpSize, "the warp");
      !in.ok()) {
    return in;
  }
  if (absl::Status in = InRange(layout, "lane", lane, kMatrixRows * matrices(),
                                "the lanes that supply addresses");
      !in.ok()) {
    return in;
  }
  return EvaluateCoordinate(AddressMatrixExpression(Variable(kLane)),
                            AddressRowExpression(Variable(kLane)),
                            {{kLane, lane}});
}

absl::StatusOr<FragmentCoordinate> StMatrixFragment::Element(int lane,
                                                             int half) const {
  const std::string layout = absl::StrCat("stmatrix .x", matrices());
  if (absl::Status in = InRange(layout, "lane", lane, kWarpSize, "the warp");
      !in.ok()) {
    return in;
  }
  if (absl::Status in =
          InRange(layout, "half", half, 2, "a b32 value's halves");
      !in.ok()) {
    return in;
  }
  return EvaluateCoordinate(
      ElementRowExpression(Variable(kLane), Variable(kHalf)),
      ElementColumnExpression(Variable(kLane), Variable(kHalf)),
      {{kLane, lane}, {kHalf, half}});
}

namespace {

// An x4 stores 4 matrices; a thread's value packs 2 accumulators.
constexpr int kStepMatrices = 4;
constexpr int kHalves = 2;

}  // namespace

absl::StatusOr<AccumulatorStMatrix> AccumulatorStMatrix::Of(
    const AccumulatorFragment& accumulator, const StMatrix& stmatrix) {
  if (absl::Status legal = StMatrixFragment::Of(stmatrix).status(); !legal.ok())
    return legal;
  if (stmatrix.matrices != kStepMatrices || stmatrix.transpose) {
    return absl::InvalidArgumentError(
        absl::StrCat("accumulator stmatrix store: stmatrix .x",
                     stmatrix.matrices, stmatrix.transpose ? ".trans" : "",
                     " is not the .x4 without .trans that stores ",
                     kStepColumns, " accumulator columns a step"));
  }
  if (accumulator.n() % kStepColumns != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "accumulator stmatrix store: N=", accumulator.n(),
        " is not a multiple of ", kStepColumns, ", the columns of a step"));
  }
  return AccumulatorStMatrix(accumulator.n());
}

// Matrix i lies at block (i % 2, i / 2) of the warp's 16 rows and the
// step's 16 columns.
IndexExpression AccumulatorStMatrix::AddressRowExpression(
    const IndexExpression& thread) {
  const IndexExpression lane = thread % kWarpSize;
  return AccumulatorFragment::kRowsPerWarp * (thread / kWarpSize) +
         StMatrixFragment::kMatrixRows *
             (StMatrixFragment::AddressMatrixExpression(lane) % 2) +
         StMatrixFragment::AddressRowExpression(lane);
}

IndexExpression AccumulatorStMatrix::AddressColumnExpression(
    const IndexExpression& thread, const IndexExpression& step) {
  const IndexExpression lane = thread % kWarpSize;
  return kStepColumns * step +
         StMatrixFragment::kMatrixColumns *
             (StMatrixFragment::AddressMatrixExpression(lane) / 2);
}

IndexExpression AccumulatorStMatrix::RegisterExpression(
    const IndexExpression& step, const IndexExpression& value,
    const IndexExpression& half) {
  return kStepMatrices * kHalves * step + kHalves * value + half;
}

absl::StatusOr<FragmentCoordinate> AccumulatorStMatrix::Address(
    int thread, int step) const {
  constexpr char kLayout[] = "accumulator stmatrix store";
  if (absl::Status in = InRange(kLayout, "thread", thread,
                                AccumulatorFragment::kThreads, "the warpgroup");
      !in.ok()) {
    return in;
  }
  if (absl::Status in = InRange(kLayout, "step", step, steps(),
                                absl::StrCat("the steps of m64n", n_));
      !in.ok()) {
    return in;
  }
  return EvaluateCoordinate(
      AddressRowExpression(Variable(kThread)),
      AddressColumnExpression(Variable(kThread), Variable(kStep)),
      {{kThread, thread}, {kStep, step}});
}

absl::StatusOr<int> AccumulatorStMatrix::Register(int step, int value,
                                                  int half) const {
  constexpr char kLayout[] = "accumulator stmatrix store";
  if (absl::Status in = InRange(kLayout, "step", step, steps(),
                                absl::StrCat("the steps of m64n", n_));
      !in.ok()) {
    return in;
  }
  if (absl::Status in =
          InRange(kLayout, "value", value, kStepMatrices, "an x4's values");
      !in.ok()) {
    return in;
  }
  if (absl::Status in =
          InRange(kLayout, "half", half, kHalves, "a b32 value's halves");
      !in.ok()) {
    return in;
  }
  return RegisterExpression(Variable(kStep), Variable(kValue), Variable(kHalf))
      .Evaluate({{kStep, step}, {kValue, value}, {kHalf, half}});
}

std::string AccumulatorStMatrix::DeviceFunctions() const {
  return absl::StrCat(
      "// The accumulators stored with stmatrix.x4, ", kStepColumns,
      " columns a step\n"
      "// (ptx::AccumulatorStMatrix): the row of the 64-row tile and the "
      "column\n"
      "// of step `step` whose shared address warpgroup thread `thread` "
      "supplies,\n"
      "// and the accumulator register that half `half` of value `value` "
      "packs.\n",
      DeviceFunction("stmatrix_row", {kThread},
                     AddressRowExpression(Variable(kThread))),
      DeviceFunction(
          "stmatrix_column", {kThread, kStep},
          AddressColumnExpression(Variable(kThread), Variable(kStep))),
      DeviceFunction("stmatrix_register", {kStep, kValue, kHalf},
                     RegisterExpression(Variable(kStep), Variable(kValue),
                                        Variable(kHalf))));
}

}  // namespace ptxgen::ptx
