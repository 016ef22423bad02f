// Attention forward (Attention::Prepare and Run) on the GPU against the
// float64 host reference (attention_reference.h). The table of cases is the
// specification: bf16 and f16; head dims 64, 128, 256 and ones that are not
// a multiple of 64; no mask and the causal mask; seq_q equal to, below and
// above seq_k (causal rows that see no key: O 0, LSE +inf); one row, and
// lengths no tile divides; GQA and MQA; both layouts, packed and with
// padded strides; variable lengths, ragged, with empty sequences, one-row
// ones and ones without keys. O and the LSE lie between guard regions,
// all of it poisoned (NaN) before each run: every position no row owns
// (padding, rows outside every sequence, the guards) must keep its poison;
// the inputs' padding holds NaN, which a kernel that reads it carries into
// O. With variable lengths the offsets live on the device: a run captured
// in a CUDA graph replays with new ones, and offsets that break the rules
// (negative, decreasing, past the rows, longer than planned) skip their
// sequences and touch nothing else (the GPU run repeats that case under
// compute-sanitizer memcheck). Skips without a Hopper GPU, apart from its
// host test of the table.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "lib/testing/verification.h"
#include "ptxgen/attention/attention.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/gen/attention.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "tests/attention/attention_reference.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::attention {
namespace {

using ptx::ScalarType;
using runtime::DeviceBuffer;

constexpr ScalarType kBF16 = ScalarType::kBF16;
constexpr ScalarType kF16 = ScalarType::kF16;
constexpr Layout kBshd = Layout::kBatchSeqHeadDim;
constexpr Layout kBhsd = Layout::kBatchHeadSeqDim;

// Rows of Q and of K allocated past the variable-length sequences' last:
// no sequence owns them, so O's and the LSE's must keep their poison.
constexpr int64_t kUnownedRowsQ = 64;
constexpr int64_t kUnownedRowsK = 17;

// O's error by norm. P = exp(S - max) is rounded to the input type before
// P·V (wgmma's register A operand is 16-bit): each probability is off by
// up to half a unit of 2^-8 (bf16) or 2^-11 (f16) relative, and O is
// rounded to the input type once more when stored. These errors are
// independent, so their norm stays near the unit roundoff: 1e-2 leaves
// bf16 (unit 3.9e-3) room, 4e-3 f16 (unit 4.9e-4) for sums in another
// order as well.
double OBound(ScalarType element) { return element == kBF16 ? 1e-2 : 4e-3; }
// The LSE is f32 throughout (scores, maximum, the sum of exponentials):
// what is left is ex2.approx and summation order, far below this.
constexpr double kLseBound = 1e-3;

struct AttentionCase {
  std::string name;
  ScalarType element;
  int64_t head_dim;
  int64_t heads_q;
  int64_t heads_kv;  // 0: heads_q
  bool causal;
  // Fixed lengths: the batch and every sequence's rows; variable lengths
  // leave them 0 and give each sequence's rows below.
  int64_t batch;
  int64_t seq_q, seq_k;
  Layout layout = kBshd;
  int64_t pad = 0;  // WithPaddedStrides' pad; 0: packed
  // Non-empty: variable lengths, each sequence's rows of Q and of K.
  std::vector<int32_t> lengths_q = {}, lengths_k = {};
  std::optional<float> scale = std::nullopt;  // unset: 1/sqrt(head_dim)
  Distribution distribution = Distribution::kUniform;
};

void PrintTo(const AttentionCase& c, std::ostream* os) { *os << c.name; }

bool VariableLengths(const AttentionCase& c) { return !c.lengths_q.empty(); }

int32_t Longest(const std::vector<int32_t>& lengths) {
  return std::max(1, *std::max_element(lengths.begin(), lengths.end()));
}

int64_t Sum(const std::vector<int32_t>& lengths) {
  return std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
}

AttentionProblem ProblemOf(const AttentionCase& c) {
  AttentionProblem p;
  p.heads_q = c.heads_q;
  p.heads_kv = c.heads_kv;
  p.head_dim = c.head_dim;
  p.element = c.element;
  p.causal = c.causal;
  p.scale = c.scale;
  p.layout = c.layout;
  if (VariableLengths(c)) {
    p.variable_lengths = true;
    p.batch = static_cast<int64_t>(c.lengths_q.size());
    p.seq_q = Longest(c.lengths_q);
    p.seq_k = Longest(c.lengths_k);
    p.total_q = Sum(c.lengths_q) + kUnownedRowsQ;
    p.total_k = Sum(c.lengths_k) + kUnownedRowsK;
  } else {
    p.batch = c.batch;
    p.seq_q = c.seq_q;
    p.seq_k = c.seq_k;
  }
  return c.pad == 0 ? p : WithPaddedStrides(p, c.pad);
}

std::vector<AttentionCase> Cases() {
  // clang-format off
  std::vector<AttentionCase> cases = {
  //  name                                    element dim  hq hkv causal batch seq_q seq_k
  // Fixed lengths, [batch, seq, heads, dim] packed: the elements and head
  // dims, with and without the mask.
    {"Bf16D128",                              kBF16, 128,  4, 0, false, 2,  256,  256},
    {"Bf16D128Causal",                        kBF16, 128,  4, 0, true,  2,  256,  256},
    {"F16D128",                               kF16,  128,  4, 0, false, 2,  256,  256},
    {"F16D128Causal",                         kF16,  128,  4, 0, true,  2,  256,  256},
    {"Bf16D64",                               kBF16,  64,  4, 0, false, 2,  200,  200},
    {"F16D64Causal",                          kF16,   64,  4, 0, true,  2,  200,  200},
    {"Bf16D256FewerQueries",                  kBF16, 256,  2, 0, false, 1,  200,  333},
    {"F16D256Causal",                         kF16,  256,  2, 0, true,  1,  333,  333},
    {"Bf16D96CausalFewerQueries",             kBF16,  96,  3, 0, true,  2,   77,  200},
    {"F16D80MoreQueries",                     kF16,   80,  2, 0, false, 1,  333,   77},
  // seq_q against seq_k under the mask, aligned bottom-right: fewer queries
  // see every key by the last row; more queries leave the first rows
  // without a key.
    {"Bf16D128CausalFewerQueries",            kBF16, 128,  2, 0, true,  1,   77,  333},
    {"Bf16D128CausalMoreQueries",             kBF16, 128,  2, 0, true,  1,  333,   77},
    {"F16D64CausalOneKey",                    kF16,   64,  2, 0, true,  2,  200,    1},
    {"Bf16D128CausalDecodeOneRow",            kBF16, 128,  4, 0, true,  2,    1,  333},
    {"Bf16D128OneRowOneKey",                  kBF16, 128,  2, 0, false, 3,    1,    1},
    {"F16D128CausalOneRowOneKey",             kF16,  128,  2, 0, true,  1,    1,    1},
    {"Bf16D64Seq77",                          kBF16,  64,  2, 0, false, 3,   77,   77},
  // Many blocks of keys: the K and V rings wrap around several times.
    {"Bf16D128CausalLong",                    kBF16, 128,  1, 0, true,  1, 1024, 1024},
    {"F16D64Long",                            kF16,   64,  1, 0, false, 1, 1024, 1000},
  // More turns than SMs: persistent CTAs take several, causal ones folded
  // pairs of an odd number of blocks (a pair may span two heads).
    {"Bf16D32CausalGqaManyTurns",             kBF16,  32,  8, 2, true, 12,  264,  264},
    {"F16D32ManyTurns",                       kF16,   32,  8, 0, false,10,  200,  150},
  // Query heads sharing K/V heads: GQA 4:1 and MQA.
    {"Bf16D128Gqa4To1",                       kBF16, 128,  8, 2, false, 2,  200,  200},
    {"F16D128Gqa4To1CausalFewerQueries",      kF16,  128,  8, 2, true,  1,  256,  333},
    {"Bf16D64MqaCausal",                      kBF16,  64,  8, 1, true,  1,  200,  200},
    {"F16D256MqaFewerQueries",                kF16,  256,  4, 1, false, 1,   77,  200},
  // Peaked softmax (normal inputs at scale 1: scores of deviation ~11):
  // the running maximum's rescaling matters; an explicit scale.
    {"Bf16D128CausalPeaked",                  kBF16, 128,  2, 0, true,  1,  256,  256,
     kBshd, 0, {}, {}, 1.0f, Distribution::kNormal},
    {"F16D64CausalScale0_3",                  kF16,   64,  2, 0, true,  1,  200,  333,
     kBshd, 0, {}, {}, 0.3f},
  // [batch, heads, seq, dim], and padded strides in both layouts.
    {"Bf16D128Bhsd",                          kBF16, 128,  4, 0, false, 2,  200,  200,
     kBhsd},
    {"F16D64BhsdGqa4To1CausalMoreQueries",    kF16,   64,  8, 2, true,  1,  333,   77,
     kBhsd},
    {"Bf16D128BshdPaddedGqa2To1Causal",       kBF16, 128,  4, 2, true,  2,  200,  333,
     kBshd, 8},
    {"Bf16D96BhsdPaddedCausal",               kBF16,  96,  2, 0, true,  1,   77,  200,
     kBhsd, 16},
    {"Bf16D256BhsdPadded",                    kBF16, 256,  2, 0, false, 1,  128,  128,
     kBhsd, 8},
  //  name                                    element dim  hq hkv causal
  // Variable lengths, [total, heads, dim] with kUnownedRows past the last
  // sequence: ragged, empty and one-row sequences, sequences without keys.
    {"Bf16D128Varlen",                        kBF16, 128,  4, 0, false, 0, 0, 0, kBshd, 0,
     {77, 0, 1, 200, 128, 333}, {77, 0, 1, 200, 128, 333}},
    {"Bf16D128VarlenCausal",                  kBF16, 128,  4, 0, true,  0, 0, 0, kBshd, 0,
     {77, 0, 1, 200, 128, 333}, {77, 0, 1, 200, 128, 333}},
    {"F16D64VarlenCausalGqa4To1RaggedKeys",   kF16,   64,  8, 2, true,  0, 0, 0, kBshd, 0,
     {1, 77, 0, 200, 5}, {333, 77, 0, 64, 1}},
    {"Bf16D256VarlenMqa",                     kBF16, 256,  4, 1, false, 0, 0, 0, kBshd, 0,
     {130, 1, 0, 70}, {64, 200, 0, 333}},
    {"F16D128VarlenCausalPadded",             kF16,  128,  2, 0, true,  0, 0, 0, kBshd, 8,
     {100, 0, 1, 257}, {100, 0, 1, 257}},
    {"Bf16D64VarlenCausalSequenceWithoutKeys", kBF16, 64,  2, 0, true,  0, 0, 0, kBshd, 0,
     {50, 3, 64}, {40, 0, 64}},
    {"Bf16D96VarlenFewerQueries",             kBF16,  96,  2, 0, false, 0, 0, 0, kBshd, 0,
     {33, 1, 150}, {200, 77, 150}},
  };
  // clang-format on
  return cases;
}

// Multiply-adds of the host reference (Q·Kᵀ and P·V, the mask ignored).
double ReferenceWork(const AttentionCase& c) {
  double rows_by_keys = 0;
  if (VariableLengths(c)) {
    for (size_t b = 0; b < c.lengths_q.size(); ++b) {
      rows_by_keys += static_cast<double>(c.lengths_q[b]) * c.lengths_k[b];
    }
  } else {
    rows_by_keys = static_cast<double>(c.batch) * c.seq_q * c.seq_k;
  }
  return 2.0 * rows_by_keys * c.heads_q * c.head_dim;
}

// Without a GPU too: every case is a problem the rules accept, the table
// holds what the comment at the top promises, and the host reference's
// work stays small enough for the suite to run in seconds.
TEST(AttentionGpuCasesTest, TheTableCoversTheSpecification) {
  const std::vector<AttentionCase> cases = Cases();
  double work = 0;
  for (const AttentionCase& c : cases) {
    EXPECT_TRUE(ValidateAttentionProblem(ProblemOf(c)).ok())
        << c.name << ": " << ValidateAttentionProblem(ProblemOf(c));
    EXPECT_EQ(c.lengths_q.size(), c.lengths_k.size()) << c.name;
    work += ReferenceWork(c);
  }
  EXPECT_LT(work, 4e9) << "multiply-adds of the host reference (2e9: ~2 s)";
  const auto any = [&](absl::string_view what,
                       const std::function<bool(const AttentionCase&)>& is) {
    EXPECT_TRUE(std::any_of(cases.begin(), cases.end(), is))
        << "no case " << what;
  };
  const auto has = [](const std::vector<int32_t>& lengths, int32_t length) {
    return std::find(lengths.begin(), lengths.end(), length) != lengths.end();
  };
  for (const ScalarType element : {kBF16, kF16}) {
    for (const bool causal : {false, true}) {
      any(absl::StrCat(ptx::PtxName(element), causal ? " causal" : ""),
          [&](const AttentionCase& c) {
            return c.element == element && c.causal == causal;
          });
    }
  }
  for (const int64_t dim : {64, 128, 256}) {
    any(absl::StrCat("of head dim ", dim),
        [&](const AttentionCase& c) { return c.head_dim == dim; });
  }
  any("of a head dim no 64 divides",
      [](const AttentionCase& c) { return c.head_dim % 64 != 0; });
  for (const bool causal : {false, true}) {
    const std::string mask = causal ? "causal " : "";
    any(mask + "with seq_q == seq_k > 1", [&](const AttentionCase& c) {
      return c.causal == causal && c.seq_q == c.seq_k && c.seq_q > 1;
    });
    any(mask + "with seq_q < seq_k", [&](const AttentionCase& c) {
      return c.causal == causal && c.seq_q < c.seq_k;
    });
    any(mask + "with seq_q > seq_k", [&](const AttentionCase& c) {
      return c.causal == causal && c.seq_q > c.seq_k;
    });
  }
  any("of one row and one key",
      [](const AttentionCase& c) { return c.seq_q == 1 && c.seq_k == 1; });
  any("of one row and many keys",
      [](const AttentionCase& c) { return c.seq_q == 1 && c.seq_k > 1; });
  any("of lengths 64 does not divide", [](const AttentionCase& c) {
    return c.seq_q % 64 != 0 && c.seq_k % 64 != 0;
  });
  any("of GQA 4:1", [](const AttentionCase& c) {
    return c.heads_kv > 1 && c.heads_q == 4 * c.heads_kv;
  });
  any("of MQA",
      [](const AttentionCase& c) { return c.heads_kv == 1 && c.heads_q > 1; });
  for (const Layout layout : {kBshd, kBhsd}) {
    any("of padded strides in each layout", [&](const AttentionCase& c) {
      return c.layout == layout && c.pad > 0 && !VariableLengths(c);
    });
  }
  any("of variable lengths with an empty and a one-row sequence",
      [&](const AttentionCase& c) {
        return has(c.lengths_q, 0) && has(c.lengths_q, 1);
      });
  any("of variable lengths with a sequence of rows but no keys",
      [](const AttentionCase& c) {
        for (size_t b = 0; b < c.lengths_q.size(); ++b) {
          if (c.lengths_q[b] > 0 && c.lengths_k[b] == 0) return true;
        }
        return false;
      });
  any("of variable lengths, causal and padded", [](const AttentionCase& c) {
    return VariableLengths(c) && c.causal && c.pad > 0;
  });
}

// Bytes before and after each output's span: a kernel that writes outside
// O or the LSE spoils them.
constexpr int64_t kGuardBytes = 4096;

// A device buffer of at least `bytes`, its size rounded up to 16 bytes.
absl::StatusOr<DeviceBuffer> Allocate(int64_t bytes) {
  return DeviceBuffer::Allocate(
      static_cast<size_t>(std::max<int64_t>(16, (bytes + 15) / 16 * 16)));
}

// `values` in a new device buffer.
template <typename T>
absl::StatusOr<DeviceBuffer> Upload(const std::vector<T>& values) {
  const size_t bytes = values.size() * sizeof(T);
  absl::StatusOr<DeviceBuffer> buffer = Allocate(static_cast<int64_t>(bytes));
  if (!buffer.ok()) return buffer.status();
  if (absl::Status copied = buffer->CopyFromHost(values.data(), bytes);
      !copied.ok()) {
    return copied;
  }
  return buffer;
}

// An output of `count` values of `element` between two guards of
// kGuardBytes.
struct GuardedOutput {
  DeviceBuffer buffer;
  int64_t count;
  ScalarType element;

  static absl::StatusOr<GuardedOutput> Allocate(int64_t count,
                                                ScalarType element) {
    absl::StatusOr<DeviceBuffer> buffer = attention::Allocate(
        2 * kGuardBytes + count * ptx::SizeInBytes(element));
    if (!buffer.ok()) return buffer.status();
    return GuardedOutput{*std::move(buffer), count, element};
  }
  CUdeviceptr address() const { return buffer.address() + kGuardBytes; }
  // NaN in the guards and the span alike.
  absl::Status Poison() const {
    const int64_t values =
        static_cast<int64_t>(buffer.size()) / ptx::SizeInBytes(element);
    return gemm::PoisonValues(buffer.address(), values, element, nullptr);
  }
  // The span's values; `guards_written` counts the positions of the guards
  // that are no longer NaN.
  absl::StatusOr<std::vector<double>> Download(int64_t* guards_written) const {
    absl::StatusOr<std::vector<double>> all =
        gemm::DownloadValues(buffer, element);
    if (!all.ok()) return all.status();
    const int64_t guard = kGuardBytes / ptx::SizeInBytes(element);
    *guards_written = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(all->size()); ++i) {
      const bool inside = i >= guard && i < guard + count;
      if (!inside && !std::isnan((*all)[i])) ++*guards_written;
    }
    return std::vector<double>(all->begin() + guard,
                               all->begin() + guard + count);
  }
};

// A problem's tensors on the device.
struct DeviceTensors {
  DeviceBuffer q, k, v;
  GuardedOutput o, lse;
  std::optional<DeviceBuffer> cu_seqlens_q, cu_seqlens_k;

  AttentionOperands Operands() const {
    AttentionOperands operands;
    operands.q = q.address();
    operands.k = k.address();
    operands.v = v.address();
    operands.o = o.address();
    operands.lse = lse.address();
    if (cu_seqlens_q) operands.cu_seqlens_q = cu_seqlens_q->address();
    if (cu_seqlens_k) operands.cu_seqlens_k = cu_seqlens_k->address();
    return operands;
  }
};

absl::StatusOr<DeviceTensors> ToDevice(const AttentionProblem& problem,
                                       const AttentionInputs& inputs) {
  const absl::StatusOr<AttentionSpans> spans = StoredSpans(problem);
  if (!spans.ok()) return spans.status();
  absl::StatusOr<DeviceBuffer> q = Upload(inputs.q);
  if (!q.ok()) return q.status();
  absl::StatusOr<DeviceBuffer> k = Upload(inputs.k);
  if (!k.ok()) return k.status();
  absl::StatusOr<DeviceBuffer> v = Upload(inputs.v);
  if (!v.ok()) return v.status();
  absl::StatusOr<GuardedOutput> o =
      GuardedOutput::Allocate(spans->o, problem.element);
  if (!o.ok()) return o.status();
  absl::StatusOr<GuardedOutput> lse =
      GuardedOutput::Allocate(spans->lse, ScalarType::kF32);
  if (!lse.ok()) return lse.status();
  DeviceTensors tensors{*std::move(q), *std::move(k), *std::move(v),
                        *std::move(o), *std::move(lse)};
  if (problem.variable_lengths) {
    absl::StatusOr<DeviceBuffer> cu_q = Upload(inputs.cu_seqlens_q);
    if (!cu_q.ok()) return cu_q.status();
    absl::StatusOr<DeviceBuffer> cu_k = Upload(inputs.cu_seqlens_k);
    if (!cu_k.ok()) return cu_k.status();
    tensors.cu_seqlens_q = *std::move(cu_q);
    tensors.cu_seqlens_k = *std::move(cu_k);
  }
  return tensors;
}

// Poisons O and the LSE, calls `run` (which leaves the device idle),
// and compares what it wrote with the reference of `inputs` and their
// offsets.
void ExpectMatchesReference(const AttentionProblem& problem,
                            const AttentionInputs& inputs,
                            const DeviceTensors& tensors,
                            const std::function<absl::Status()>& run) {
  ASSERT_TRUE(tensors.o.Poison().ok());
  ASSERT_TRUE(tensors.lse.Poison().ok());
  const absl::Status ran = run();
  ASSERT_TRUE(ran.ok()) << ran;
  int64_t o_guards_written = 0, lse_guards_written = 0;
  const absl::StatusOr<std::vector<double>> got_o =
      tensors.o.Download(&o_guards_written);
  ASSERT_TRUE(got_o.ok()) << got_o.status();
  const absl::StatusOr<std::vector<double>> got_lse =
      tensors.lse.Download(&lse_guards_written);
  ASSERT_TRUE(got_lse.ok()) << got_lse.status();
  EXPECT_EQ(o_guards_written, 0) << "values written before or after O";
  EXPECT_EQ(lse_guards_written, 0) << "values written before or after the LSE";

  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> want_o(got_o->size(), kNan);
  std::vector<float> want_lse(got_lse->size(), kNan);
  const absl::Status reference =
      ReferenceAttention(problem, inputs, &want_o, &want_lse);
  ASSERT_TRUE(reference.ok()) << reference;
  const absl::StatusOr<AttentionErrors> errors =
      CompareAttention(problem, inputs, *got_o, want_o, &*got_lse, &want_lse);
  ASSERT_TRUE(errors.ok()) << errors.status();
  EXPECT_LE(errors->o_relative, OBound(problem.element));
  EXPECT_LE(errors->lse_max_abs, kLseBound);
  EXPECT_EQ(errors->lse_infinity_mismatches, 0)
      << "rows that see no key whose LSE is not +inf";
  EXPECT_EQ(errors->o_written_outside, 0)
      << "elements of O no row owns were written, the first at "
      << errors->first_o_written_outside;
  EXPECT_EQ(errors->lse_written_outside, 0)
      << "LSE entries no row owns were written, the first at "
      << errors->first_lse_written_outside;
}

class AttentionGpuTest : public testing_support::HopperTest,
                         public testing::WithParamInterface<AttentionCase> {};

// Prepares `c` (with `options`), runs it on fresh random inputs and
// compares O and the LSE with the host reference.
void ExpectCaseMatchesReference(const AttentionCase& c,
                                const AttentionOptions& options = {}) {
  const AttentionProblem problem = ProblemOf(c);
  absl::StatusOr<Attention> attention = Attention::Prepare(problem, options);
  ASSERT_TRUE(attention.ok()) << attention.status();
  SCOPED_TRACE(gen::AttentionConfigName(attention->config()));

  const uint32_t seed = static_cast<uint32_t>(std::hash<std::string>()(c.name));
  absl::StatusOr<AttentionInputs> inputs =
      RandomAttentionInputs(problem, seed, c.distribution);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  if (VariableLengths(c)) {
    inputs->cu_seqlens_q = CumulativeOffsets(c.lengths_q);
    inputs->cu_seqlens_k = CumulativeOffsets(c.lengths_k);
  }
  absl::StatusOr<DeviceTensors> tensors = ToDevice(problem, *inputs);
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  ExpectMatchesReference(problem, *inputs, *tensors, [&] {
    return attention->Run(tensors->Operands(), nullptr);
  });
}

TEST_P(AttentionGpuTest, MatchesTheHostReference) {
  ExpectCaseMatchesReference(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionGpuTest,
                         testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<AttentionCase>& info) {
                           return info.param.name;
                         });

// Configurations the heuristic picks for other shapes than the table's
// (or never): the table's ragged cases with each, against the reference.
struct ConfigCase {
  const char* table_case;
  int consumers;
  int block_n;
  int stages;
  int query_stages;
  bool ping_pong;
};

class AttentionConfigGpuTest : public testing_support::HopperTest,
                               public testing::WithParamInterface<ConfigCase> {
};

TEST_P(AttentionConfigGpuTest, MatchesTheHostReference) {
  const ConfigCase& change = GetParam();
  const std::vector<AttentionCase> cases = Cases();
  const auto c = std::find_if(cases.begin(), cases.end(), [&](const auto& c) {
    return c.name == change.table_case;
  });
  ASSERT_NE(c, cases.end()) << change.table_case;
  AttentionOptions options;
  options.config = HeuristicAttentionConfig(Resolved(ProblemOf(*c)),
                                            AttentionTarget::H200());
  options.config->consumers = change.consumers;
  options.config->block_n = change.block_n;
  options.config->stages = change.stages;
  options.config->query_stages = change.query_stages;
  options.config->ping_pong = change.ping_pong;
  ExpectCaseMatchesReference(*c, options);
}

INSTANTIATE_TEST_SUITE_P(
    Configs, AttentionConfigGpuTest,
    testing::Values(
        // Three consumers, no turns.
        ConfigCase{"F16D64Long", 3, 128, 2, 2, false},
        ConfigCase{"Bf16D64VarlenCausalSequenceWithoutKeys", 3, 128, 2, 1,
                   false},
        // Two without turns; one; the widest blocks; deeper rings; one Q
        // stage.
        ConfigCase{"Bf16D128CausalLong", 2, 128, 2, 1, false},
        ConfigCase{"Bf16D128CausalMoreQueries", 1, 64, 4, 2, false},
        ConfigCase{"Bf16D128Varlen", 2, 192, 2, 1, true},
        ConfigCase{"F16D128Gqa4To1CausalFewerQueries", 2, 176, 2, 1, true},
        ConfigCase{"Bf16D128Bhsd", 2, 128, 3, 1, true},
        ConfigCase{"Bf16D256BhsdPadded", 2, 64, 2, 1, false}),
    [](const testing::TestParamInfo<ConfigCase>& info) {
      return absl::StrCat(info.param.table_case, "_", info.param.consumers,
                          "x64_n", info.param.block_n, "_s", info.param.stages,
                          "_q", info.param.query_stages,
                          info.param.ping_pong ? "_pp" : "");
    });

class AttentionRunGpuTest : public testing_support::HopperTest {};

// Four sequences of at most 256 rows, causal, in 600 rows of Q and 700 of
// K.
AttentionProblem GraphProblem() {
  AttentionProblem p;
  p.batch = 4;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.seq_q = p.seq_k = 256;
  p.head_dim = 128;
  p.causal = true;
  p.variable_lengths = true;
  p.total_q = 600;
  p.total_k = 700;
  return p;
}

// A variable-length run captured once in a CUDA graph, replayed with the
// offsets rewritten between replays: each replay computes its own
// sequences and leaves every other row alone.
TEST_F(AttentionRunGpuTest, AGraphReplaysWithNewLengths) {
  const absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  ASSERT_TRUE(driver.ok()) << driver.status();
  const AttentionProblem problem = GraphProblem();
  absl::StatusOr<Attention> attention = Attention::Prepare(problem);
  ASSERT_TRUE(attention.ok()) << attention.status();
  absl::StatusOr<AttentionInputs> inputs = RandomAttentionInputs(problem, 21);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>
      steps = {
          {{77, 0, 200, 1}, {100, 0, 256, 1}},
          {{256, 256, 0, 64}, {256, 1, 256, 128}},
          {{0, 0, 0, 0}, {0, 0, 0, 0}},
          {{1, 1, 1, 1}, {1, 1, 1, 1}},
      };
  inputs->cu_seqlens_q = CumulativeOffsets(steps[0].first);
  inputs->cu_seqlens_k = CumulativeOffsets(steps[0].second);
  absl::StatusOr<DeviceTensors> tensors = ToDevice(problem, *inputs);
  ASSERT_TRUE(tensors.ok()) << tensors.status();

  absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  ASSERT_EQ((*driver)->cuStreamBeginCapture(
                stream->get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            CUDA_SUCCESS);
  const absl::Status captured =
      attention->Run(tensors->Operands(), stream->get());
  CUgraph graph = nullptr;
  ASSERT_EQ((*driver)->cuStreamEndCapture(stream->get(), &graph), CUDA_SUCCESS);
  ASSERT_TRUE(captured.ok()) << captured;
  CUgraphExec replay = nullptr;
  ASSERT_EQ((*driver)->cuGraphInstantiateWithFlags(&replay, graph, 0),
            CUDA_SUCCESS);
  for (const auto& [lengths_q, lengths_k] : steps) {
    SCOPED_TRACE(
        absl::StrCat("lengths ", lengths_q[0], ", ", lengths_q[1], ", ..."));
    inputs->cu_seqlens_q = CumulativeOffsets(lengths_q);
    inputs->cu_seqlens_k = CumulativeOffsets(lengths_k);
    ASSERT_TRUE(tensors->cu_seqlens_q
                    ->CopyFromHost(inputs->cu_seqlens_q.data(),
                                   inputs->cu_seqlens_q.size() * 4)
                    .ok());
    ASSERT_TRUE(tensors->cu_seqlens_k
                    ->CopyFromHost(inputs->cu_seqlens_k.data(),
                                   inputs->cu_seqlens_k.size() * 4)
                    .ok());
    ExpectMatchesReference(problem, *inputs, *tensors, [&]() -> absl::Status {
      if ((*driver)->cuGraphLaunch(replay, stream->get()) != CUDA_SUCCESS) {
        return absl::InternalError("cuGraphLaunch failed");
      }
      return stream->Synchronize();
    });
  }
  EXPECT_EQ((*driver)->cuGraphExecDestroy(replay), CUDA_SUCCESS);
  EXPECT_EQ((*driver)->cuGraphDestroy(graph), CUDA_SUCCESS);
}

// Offsets a careless or hostile caller passes (issue #48): a sequence
// whose rows are negative, out of order, past Q's or K's rows, or longer
// than planned is skipped, its rows of O and the LSE left poisoned, and
// nothing outside O and the LSE is written; the other sequences are
// computed as with good offsets.
TEST_F(AttentionRunGpuTest, BadOffsetsSkipTheirSequencesAndNothingElse) {
  const AttentionProblem problem = GraphProblem();  // 600 rows of Q, 700 of K
  absl::StatusOr<Attention> attention = Attention::Prepare(problem);
  ASSERT_TRUE(attention.ok()) << attention.status();
  absl::StatusOr<AttentionInputs> inputs = RandomAttentionInputs(problem, 48);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  inputs->cu_seqlens_q = inputs->cu_seqlens_k = {0, 0, 0, 0, 0};
  absl::StatusOr<DeviceTensors> tensors = ToDevice(problem, *inputs);
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  const struct {
    const char* what;
    std::vector<int32_t> cu_q, cu_k;
  } steps[] = {
      {"the last sequence past total_q (the issue's)",
       {0, 256, 400, 500, 700},
       {0, 100, 200, 300, 400}},
      {"a negative first offset",
       {-64, 192, 300, 400, 500},
       {0, 100, 200, 300, 400}},
      {"an offset that decreases",
       {0, 200, 100, 400, 450},
       {0, 100, 200, 300, 400}},
      {"a sequence longer than seq_q",
       {0, 300, 310, 320, 330},
       {0, 100, 200, 300, 400}},
      {"keys past total_k and negative",
       {0, 100, 200, 300, 400},
       {0, 100, 800, -5, 650}},
      {"int32's extremes", {kMin, kMax, 0, 1, kMax}, {kMax, kMin, 0, 1, 2}},
  };
  for (const auto& step : steps) {
    SCOPED_TRACE(step.what);
    inputs->cu_seqlens_q = step.cu_q;
    inputs->cu_seqlens_k = step.cu_k;
    const size_t bytes = step.cu_q.size() * sizeof(int32_t);
    ASSERT_TRUE(
        tensors->cu_seqlens_q->CopyFromHost(step.cu_q.data(), bytes).ok());
    ASSERT_TRUE(
        tensors->cu_seqlens_k->CopyFromHost(step.cu_k.data(), bytes).ok());
    ExpectMatchesReference(problem, *inputs, *tensors, [&]() -> absl::Status {
      if (absl::Status ran = attention->Run(tensors->Operands(), nullptr);
          !ran.ok()) {
        return ran;
      }
      return runtime::SynchronizeCurrentContext();
    });
  }
}

// Without the LSE (null) O is the same, and nothing is written for it.
TEST_F(AttentionRunGpuTest, TheLseIsOptional) {
  AttentionProblem problem;
  problem.batch = 2;
  problem.heads_q = 2;
  problem.seq_q = problem.seq_k = 200;
  problem.head_dim = 64;
  problem.causal = true;
  absl::StatusOr<Attention> attention = Attention::Prepare(problem);
  ASSERT_TRUE(attention.ok()) << attention.status();
  absl::StatusOr<AttentionInputs> inputs = RandomAttentionInputs(problem, 4);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::StatusOr<DeviceTensors> tensors = ToDevice(problem, *inputs);
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  AttentionOperands operands = tensors->Operands();
  operands.lse = 0;
  ASSERT_TRUE(tensors->o.Poison().ok());
  ASSERT_TRUE(tensors->lse.Poison().ok());
  const absl::Status ran = attention->Run(operands, nullptr);
  ASSERT_TRUE(ran.ok()) << ran;
  int64_t guards_written = 0;
  const absl::StatusOr<std::vector<double>> got_o =
      tensors->o.Download(&guards_written);
  ASSERT_TRUE(got_o.ok()) << got_o.status();
  EXPECT_EQ(guards_written, 0) << "values written before or after O";
  const absl::StatusOr<std::vector<double>> got_lse =
      tensors->lse.Download(&guards_written);
  ASSERT_TRUE(got_lse.ok()) << got_lse.status();
  std::vector<float> want_o(got_o->size(),
                            std::numeric_limits<float>::quiet_NaN());
  ASSERT_TRUE(ReferenceAttention(problem, *inputs, &want_o, nullptr).ok());
  const absl::StatusOr<AttentionErrors> errors =
      CompareAttention(problem, *inputs, *got_o, want_o, nullptr, nullptr);
  ASSERT_TRUE(errors.ok()) << errors.status();
  EXPECT_LE(errors->o_relative, OBound(kBF16));
  EXPECT_EQ(errors->o_written_outside, 0);
  EXPECT_TRUE(std::all_of(got_lse->begin(), got_lse->end(), [](double value) {
    return std::isnan(value);
  })) << "the LSE was written without an LSE operand";
}

// What Run refuses before launching: a null Q, and variable lengths
// without either offset array.
TEST_F(AttentionRunGpuTest, RunRefusesANullQAndVariableLengthsWithoutOffsets) {
  AttentionProblem fixed;
  fixed.seq_q = fixed.seq_k = 64;
  fixed.head_dim = 64;
  absl::StatusOr<Attention> attention = Attention::Prepare(fixed);
  ASSERT_TRUE(attention.ok()) << attention.status();
  absl::StatusOr<AttentionInputs> inputs = RandomAttentionInputs(fixed, 1);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::StatusOr<DeviceTensors> tensors = ToDevice(fixed, *inputs);
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  AttentionOperands no_q = tensors->Operands();
  no_q.q = 0;
  EXPECT_EQ(attention->Run(no_q, nullptr).code(),
            absl::StatusCode::kInvalidArgument);

  const AttentionProblem varlen = GraphProblem();
  absl::StatusOr<Attention> varlen_attention = Attention::Prepare(varlen);
  ASSERT_TRUE(varlen_attention.ok()) << varlen_attention.status();
  absl::StatusOr<AttentionInputs> varlen_inputs =
      RandomAttentionInputs(varlen, 2);
  ASSERT_TRUE(varlen_inputs.ok()) << varlen_inputs.status();
  varlen_inputs->cu_seqlens_q = varlen_inputs->cu_seqlens_k =
      CumulativeOffsets({64, 64, 64, 64});
  absl::StatusOr<DeviceTensors> varlen_tensors =
      ToDevice(varlen, *varlen_inputs);
  ASSERT_TRUE(varlen_tensors.ok()) << varlen_tensors.status();
  for (const bool keep_q_offsets : {false, true}) {
    SCOPED_TRACE(keep_q_offsets ? "no cu_seqlens_k" : "no cu_seqlens_q");
    AttentionOperands operands = varlen_tensors->Operands();
    (keep_q_offsets ? operands.cu_seqlens_k : operands.cu_seqlens_q) = 0;
    EXPECT_EQ(varlen_attention->Run(operands, nullptr).code(),
              absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace ptxgen::attention
