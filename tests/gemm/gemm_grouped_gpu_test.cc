// Grouped GEMMs (GemmProblem::grouping) on the GPU against a float64 host
// reference: contiguous and masked layouts, uniform, skewed and empty
// groups, groups of fewer rows than a tile and boundaries inside tiles,
// ragged n and k, 16-bit and fp8 (per-tensor and block-scaled) inputs, the
// epilogue's ops with a bias per group, and the schedules a grouped kernel
// takes. Every element of D outside the groups' rows must keep its poison.
// The counts live on the device: one Gemm replays with new ones, also from
// a CUDA graph, and counts that leave 0..m are clipped, not followed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/gemm/timing.h"
#include "lib/testing/verification.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;
using runtime::DeviceBuffer;

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

struct GroupedCase {
  std::string name;
  ScalarType element = ScalarType::kBF16;
  Grouping grouping = Grouping::kContiguous;
  std::vector<int> rows;  // each group's
  // Masked: the rows each group has room for; contiguous: rows after the
  // last group's, which no group owns.
  int64_t extra_rows = 0;
  int64_t n = 256, k = 256;
  MajorOrder a_major = MajorOrder::kK, b_major = MajorOrder::kK;
  GemmScaling scaling = GemmScaling::kNone;
  std::optional<ScalarType> output;
  float alpha = 1.0f, beta = 0.0f;
  BiasAlong bias = BiasAlong::kNone;
  Activation activation = Activation::kNone;
  bool record_amax = false;
  std::string config;  // empty: the heuristic's
};

void PrintTo(const GroupedCase& c, std::ostream* os) { *os << c.name; }

int64_t Groups(const GroupedCase& c) {
  return static_cast<int64_t>(c.rows.size());
}

// m: the rows of A and D (contiguous: every group's and the extra ones) or
// of each group (masked).
int64_t RowsOfA(const GroupedCase& c) {
  if (c.grouping == Grouping::kMasked) return c.extra_rows;
  return std::max<int64_t>(
      1,
      std::accumulate(c.rows.begin(), c.rows.end(), int64_t{0}) + c.extra_rows);
}

// Leading dimensions keep every row on 16 bytes (TMA's rule) for ragged
// sizes.
GemmProblem ProblemOf(const GroupedCase& c) {
  GemmProblem p;
  p.m = RowsOfA(c);
  p.n = c.n;
  p.k = c.k;
  p.element = c.element;
  p.output = c.output;
  p.a_major = c.a_major;
  p.b_major = c.b_major;
  const int64_t per_16_bytes = 16 / ptx::SizeInBytes(c.element);
  p.lda = RoundUp(c.a_major == MajorOrder::kK ? p.k : p.m, per_16_bytes);
  p.ldb = RoundUp(c.b_major == MajorOrder::kK ? p.k : p.n, per_16_bytes);
  p.batch = Groups(c);
  p.grouping = c.grouping;
  p.alpha = c.alpha;
  p.beta = c.beta;
  p.bias = c.bias;
  p.activation = c.activation;
  p.record_amax = c.record_amax;
  p.scaling = c.scaling;
  if (c.bias != BiasAlong::kNone) p.stride_bias = p.n;
  return p;
}

std::vector<GroupedCase> Cases() {
  constexpr ScalarType kF16 = ScalarType::kF16, kF32 = ScalarType::kF32,
                       kE4M3 = ScalarType::kE4M3;
  std::vector<GroupedCase> cases;
  auto add = [&](GroupedCase c) { cases.push_back(std::move(c)); };
  GroupedCase c;
  c = {};
  c.name = "Bf16ContiguousUniform";
  c.rows = {256, 256, 256, 256, 256, 256, 256, 256};
  c.n = 512;
  c.k = 512;
  add(c);
  c = {};
  c.name = "Bf16ContiguousSkewedEmptyAndRaggedWithUnroutedRows";
  c.rows = {0, 1, 127, 129, 0, 300, 64, 5};
  c.extra_rows = 7;
  c.n = 200;
  c.k = 200;
  add(c);
  c = {};
  c.name = "F16ContiguousBMnMajorCBiasGeluTanhToF32";
  c.element = kF16;
  c.rows = {70, 0, 200, 33};
  c.n = 320;
  c.k = 192;
  c.b_major = MajorOrder::kMN;
  c.output = kF32;
  c.beta = 0.5f;
  c.bias = BiasAlong::kN;
  c.activation = Activation::kGeluTanh;
  add(c);
  c = {};
  c.name = "Bf16MaskedAMnMajorAlphaSilu";
  c.grouping = Grouping::kMasked;
  c.rows = {100, 28, 0, 400};
  c.extra_rows = 400;
  c.n = 256;
  c.k = 320;
  c.a_major = MajorOrder::kMN;
  c.alpha = 0.25f;
  c.bias = BiasAlong::kN;
  c.activation = Activation::kSilu;
  add(c);
  c = {};
  c.name = "Bf16MaskedSkewed";
  c.grouping = Grouping::kMasked;
  c.rows = {0, 160, 33, 1, 64, 100};
  c.extra_rows = 160;
  c.n = 384;
  c.k = 256;
  add(c);
  c = {};
  c.name = "Bf16MaskedDecode";
  c.grouping = Grouping::kMasked;
  c.rows = {1, 64, 3, 0, 17, 40, 64, 8, 2, 33, 61, 5, 0, 12, 64, 9};
  c.extra_rows = 64;
  c.n = 1000;
  c.k = 512;
  add(c);
  c = {};
  c.name = "Bf16ContiguousManyGroups";
  c.rows = std::vector<int>(128, 32);
  c.rows[5] = 0;
  c.rows[77] = 90;
  c.n = 256;
  c.k = 128;
  add(c);
  c = {};
  c.name = "E4m3BlockScaledContiguous";
  c.element = kE4M3;
  c.scaling = GemmScaling::kBlock;
  c.rows = {128, 0, 300, 77};
  c.n = 384;
  c.k = 512;
  add(c);
  c = {};
  c.name = "E4m3BlockScaledMaskedRaggedK";
  c.element = kE4M3;
  c.scaling = GemmScaling::kBlock;
  c.grouping = Grouping::kMasked;
  c.rows = {256, 10, 0, 200};
  c.extra_rows = 256;
  c.n = 256;
  c.k = 400;
  add(c);
  c = {};
  c.name = "E4m3TensorScaledBiasReluAmax";
  c.element = kE4M3;
  c.scaling = GemmScaling::kTensor;
  c.rows = {90, 250, 0, 3};
  c.n = 256;
  c.k = 256;
  c.bias = BiasAlong::kN;
  c.activation = Activation::kRelu;
  c.record_amax = true;
  add(c);
  c = {};
  c.name = "Bf16ContiguousPingPong";
  c.rows = {300, 0, 129, 64, 1};
  c.n = 384;
  c.k = 256;
  c.config = "pp 128x128x64 s6 c2 w1 m1 direct g8 persistent";
  add(c);
  c = {};
  c.name = "E4m3BlockScaledContiguousPingPong";
  c.element = kE4M3;
  c.scaling = GemmScaling::kBlock;
  c.rows = {300, 0, 129, 64, 1};
  c.n = 384;
  c.k = 512;
  c.config = "pp 128x128x128 s7 c2 w0 m1 direct g8 persistent";
  add(c);
  c = {};
  c.name = "Bf16MaskedPingPongBiasGelu";
  c.grouping = Grouping::kMasked;
  c.rows = {130, 0, 7, 256};
  c.extra_rows = 256;
  c.n = 320;
  c.k = 256;
  c.bias = BiasAlong::kN;
  c.activation = Activation::kGelu;
  c.config = "pp 128x128x64 s7 c2 w1 m1 direct g8 persistent";
  add(c);
  c = {};
  c.name = "Bf16ContiguousCluster2";
  c.rows = {300, 0, 129, 64, 1, 256};
  c.n = 512;
  c.k = 256;
  c.config = "ws 128x256x64 s4 c2 w1 m2 direct g8 persistent";
  add(c);
  c = {};
  c.name = "Bf16MaskedCluster2Hilbert";
  c.grouping = Grouping::kMasked;
  c.rows = {500, 3, 0, 257};
  c.extra_rows = 512;
  c.n = 384;
  c.k = 192;
  c.config = "ws 128x128x64 s6 c2 w1 m2 direct hilbert persistent";
  add(c);
  // TMA stores of the tiles inside a group; the tiles crossing a group's
  // end copy their rows from the staging buffer.
  c = {};
  c.name = "Bf16ContiguousTmaStoreEdgesCBias";
  c.rows = {0, 1, 127, 129, 0, 300, 64, 5};
  c.extra_rows = 7;
  c.n = 256;
  c.k = 192;
  c.beta = 0.5f;
  c.bias = BiasAlong::kN;
  c.config = "ws 128x256x64 s3 c2 w1 m1 tma g8 persistent";
  add(c);
  c = {};
  c.name = "Bf16MaskedPingPongTmaStoreRaggedN";
  c.grouping = Grouping::kMasked;
  c.rows = {130, 0, 7, 256};
  c.extra_rows = 256;
  c.n = 328;
  c.k = 256;
  c.activation = Activation::kGelu;
  c.config = "pp 128x128x64 s5 c2 w1 m1 tma g8 persistent";
  add(c);
  c = {};
  c.name = "E4m3BlockScaledContiguousTmaStore";
  c.element = kE4M3;
  c.scaling = GemmScaling::kBlock;
  c.rows = {300, 0, 129, 64, 1};
  c.n = 384;
  c.k = 512;
  c.config = "ws 128x192x128 s4 c2 w0 m1 tma g8 persistent";
  add(c);
  c = {};
  c.name = "Bf16ContiguousCluster2TmaStore";
  c.rows = {300, 0, 129, 64, 1, 256};
  c.n = 512;
  c.k = 256;
  c.config = "ws 128x128x64 s5 c2 w1 m2 tma g8 persistent";
  add(c);
  return cases;
}

// An operand's values on the device and, exactly, on the host.
struct Values {
  DeviceBuffer buffer;
  std::vector<double> host;
};

absl::StatusOr<Values> RandomValues(int64_t count, ScalarType type,
                                    uint32_t seed) {
  absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(
      static_cast<size_t>(RoundUp(count * ptx::SizeInBytes(type), 16)));
  if (!buffer.ok()) return buffer.status();
  const int64_t elements =
      static_cast<int64_t>(buffer->size()) / ptx::SizeInBytes(type);
  if (absl::Status filled =
          FillRandom(buffer->address(), elements, type, seed, nullptr);
      !filled.ok()) {
    return filled;
  }
  absl::StatusOr<std::vector<double>> host = DownloadValues(*buffer, type);
  if (!host.ok()) return host.status();
  return Values{*std::move(buffer), *std::move(host)};
}

absl::StatusOr<Values> FloatValues(std::vector<float> values) {
  absl::StatusOr<DeviceBuffer> buffer =
      DeviceBuffer::Allocate(values.size() * sizeof(float) + 16);
  if (!buffer.ok()) return buffer.status();
  if (absl::Status copied =
          buffer->CopyFromHost(values.data(), values.size() * sizeof(float));
      !copied.ok()) {
    return copied;
  }
  return Values{*std::move(buffer),
                std::vector<double>(values.begin(), values.end())};
}

// Per group: the cumulative row ends (contiguous) or the counts (masked).
std::vector<int> GroupRows(const GroupedCase& c) {
  std::vector<int> rows = c.rows;
  if (c.grouping == Grouping::kContiguous) {
    std::partial_sum(rows.begin(), rows.end(), rows.begin());
  }
  return rows;
}

double Activate(Activation activation, double x) {
  switch (activation) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return std::max(x, 0.0);
    case Activation::kGelu:
      return 0.5 * x * (1 + std::erf(x * 0.70710678118654752));
    case Activation::kGeluTanh:
      return 0.5 * x *
             (1 + std::tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
    case Activation::kSilu:
      return x / (1 + std::exp(-x));
  }
  return NAN;
}

// Everything one run reads, on the device and on the host.
struct Inputs {
  Values a, b;
  std::optional<Values> c, bias, scale_a, scale_b;
};

absl::StatusOr<Inputs> MakeInputs(const GemmProblem& p, uint32_t seed) {
  const GemmProblem r = Resolved(p);
  const absl::StatusOr<GemmSpans> spans = StoredSpans(p);
  if (!spans.ok()) return spans.status();
  absl::StatusOr<Values> a = RandomValues(spans->a, p.element, seed);
  if (!a.ok()) return a.status();
  absl::StatusOr<Values> b = RandomValues(spans->b, p.element, seed + 1);
  if (!b.ok()) return b.status();
  Inputs inputs{*std::move(a), *std::move(b), {}, {}, {}, {}};
  if (p.beta != 0) {
    absl::StatusOr<Values> c = RandomValues(spans->d, *r.output, seed + 2);
    if (!c.ok()) return c.status();
    inputs.c = *std::move(c);
  }
  if (p.bias != BiasAlong::kNone) {
    absl::StatusOr<Values> bias =
        RandomValues(spans->bias, p.bias_type, seed + 3);
    if (!bias.ok()) return bias.status();
    inputs.bias = *std::move(bias);
  }
  if (p.scaling != GemmScaling::kNone) {
    // Block scales in [0.5, 2); per-tensor ones 0.75 and 1.5.
    uint32_t state = seed * 2654435761u + 5;
    auto scales = [&](int64_t count) {
      std::vector<float> values(static_cast<size_t>(count));
      for (float& value : values) {
        state = state * 1664525u + 1013904223u;
        value = 0.5f + 1.5f * static_cast<float>(state >> 8) / (1 << 24);
      }
      return values;
    };
    const bool block = p.scaling == GemmScaling::kBlock;
    absl::StatusOr<Values> scale_a =
        FloatValues(block ? scales(spans->scale_a) : std::vector<float>{0.75f});
    if (!scale_a.ok()) return scale_a.status();
    absl::StatusOr<Values> scale_b =
        FloatValues(block ? scales(spans->scale_b) : std::vector<float>{1.5f});
    if (!scale_b.ok()) return scale_b.status();
    inputs.scale_a = *std::move(scale_a);
    inputs.scale_b = *std::move(scale_b);
  }
  return inputs;
}

// Where row i of group g is in A's and D's rows (contiguous: its global
// row; masked: g's matrix).
struct RowPlace {
  int64_t matrix, row;
};

// D's expected values, [element of D] -> value, with NaN where no group
// writes: from the float64 products of the values as stored.
std::vector<double> Reference(const GemmProblem& p, const Inputs& in,
                              const std::vector<int>& rows, int64_t d_count) {
  const GemmProblem r = Resolved(p);
  const gen::BlockScales scales = gen::BlockScalesOf(p.m, p.n, p.k, p.batch);
  const bool contiguous = p.grouping == Grouping::kContiguous;
  std::vector<double> d(static_cast<size_t>(d_count), NAN);
  std::vector<double> a_row(static_cast<size_t>(p.k));
  int64_t begin = 0;
  for (int64_t g = 0; g < p.batch; ++g) {
    const int64_t count = rows[static_cast<size_t>(g)];
    for (int64_t i = 0; i < count; ++i) {
      const RowPlace at = contiguous ? RowPlace{0, begin + i} : RowPlace{g, i};
      const int64_t a_matrix = at.matrix * r.stride_a;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        a_row[kk] = in.a.host[a_matrix + (p.a_major == MajorOrder::kK
                                              ? at.row * r.lda + kk
                                              : kk * r.lda + at.row)];
      }
      for (int64_t j = 0; j < p.n; ++j) {
        auto b_at = [&](int64_t kk) {
          return in.b.host[g * r.stride_b + (p.b_major == MajorOrder::kK
                                                 ? j * r.ldb + kk
                                                 : kk * r.ldb + j)];
        };
        double sum = 0;
        if (p.scaling == GemmScaling::kBlock) {
          for (int64_t block = 0; block < scales.k_blocks; ++block) {
            double block_sum = 0;
            const int64_t end = std::min(p.k, (block + 1) * gen::kScaleBlock);
            for (int64_t kk = block * gen::kScaleBlock; kk < end; ++kk) {
              block_sum += a_row[kk] * b_at(kk);
            }
            const int64_t a_scale =
                ((contiguous ? 0 : g) * scales.k_blocks + block) * p.m + at.row;
            const int64_t b_scale =
                (g * scales.n_blocks + j / gen::kScaleBlock) * scales.k_blocks +
                block;
            sum += block_sum * in.scale_a->host[a_scale] *
                   in.scale_b->host[b_scale];
          }
        } else {
          for (int64_t kk = 0; kk < p.k; ++kk) sum += a_row[kk] * b_at(kk);
          if (p.scaling == GemmScaling::kTensor) {
            sum *= in.scale_a->host[0] * in.scale_b->host[0];
          }
        }
        const int64_t d_at = at.matrix * r.stride_d + at.row * r.ldd + j;
        double value = static_cast<double>(p.alpha) * sum;
        if (p.beta != 0) {
          value += static_cast<double>(p.beta) *
                   in.c->host[at.matrix * r.stride_c + at.row * r.ldc + j];
        }
        if (p.bias != BiasAlong::kNone) {
          value += in.bias->host[g * r.stride_bias + j];
        }
        d[static_cast<size_t>(d_at)] = Activate(p.activation, value);
      }
    }
    if (contiguous) begin += count;
  }
  return d;
}

// 16-bit D rounds at ErrorBound; f32 D only sums in another order (fp8
// products also in wgmma's narrower accumulator).
double Bound(const GemmProblem& p) {
  const ScalarType output = *Resolved(p).output;
  const double sums = ptx::IsFp8(p.element) ? 3e-4 : 1e-5;
  return output == ScalarType::kF32 ? sums : std::max(ErrorBound(output), sums);
}

// Compares D with the reference: the error by norm over the groups' rows,
// and every other element still NaN.
void ExpectMatches(const std::vector<double>& result,
                   const std::vector<double>& expected, double bound) {
  ASSERT_EQ(result.size(), expected.size());
  std::vector<double> computed, wanted;
  int64_t written = 0, first_written = -1;
  for (size_t at = 0; at < expected.size(); ++at) {
    if (std::isnan(expected[at])) {
      if (!std::isnan(result[at]) && written++ == 0) {
        first_written = static_cast<int64_t>(at);
      }
      continue;
    }
    computed.push_back(result[at]);
    wanted.push_back(expected[at]);
  }
  EXPECT_LE(RelativeErrorByNorm(computed, wanted), bound);
  EXPECT_EQ(written, 0) << "elements of D outside every group's rows were "
                           "written, the first at element "
                        << first_written;
}

class GemmGroupedGpuTest : public testing_support::HopperTest,
                           public testing::WithParamInterface<GroupedCase> {};

TEST_P(GemmGroupedGpuTest, MatchesTheHostReference) {
  const GroupedCase& gc = GetParam();
  const GemmProblem problem = ProblemOf(gc);
  SCOPED_TRACE(gen::FormName(FormOf(problem)));
  GemmOptions options;
  if (!gc.config.empty()) {
    absl::StatusOr<gen::GemmConfig> config = gen::ParseConfigName(gc.config);
    ASSERT_TRUE(config.ok()) << config.status();
    options.config = *config;
  }
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, options);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  SCOPED_TRACE(gen::ConfigName(gemm->config()));

  const uint32_t seed =
      static_cast<uint32_t>(std::hash<std::string>()(gc.name));
  absl::StatusOr<Inputs> in = MakeInputs(problem, seed);
  ASSERT_TRUE(in.ok()) << in.status();
  const ScalarType output = *Resolved(problem).output;
  const absl::StatusOr<GemmSpans> spans = StoredSpans(problem);
  ASSERT_TRUE(spans.ok()) << spans.status();
  absl::StatusOr<DeviceBuffer> d = DeviceBuffer::Allocate(
      static_cast<size_t>(RoundUp(spans->d * ptx::SizeInBytes(output), 16)));
  ASSERT_TRUE(d.ok()) << d.status();
  const int64_t d_count =
      static_cast<int64_t>(d->size()) / ptx::SizeInBytes(output);
  const std::vector<int> group_rows = GroupRows(gc);
  absl::StatusOr<DeviceBuffer> rows =
      DeviceBuffer::Allocate(group_rows.size() * sizeof(int));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_TRUE(
      rows->CopyFromHost(group_rows.data(), group_rows.size() * sizeof(int))
          .ok());
  absl::StatusOr<DeviceBuffer> amax = DeviceBuffer::Allocate(16);
  ASSERT_TRUE(amax.ok()) << amax.status();

  GemmOperands operands;
  operands.a = in->a.buffer.address();
  operands.b = in->b.buffer.address();
  if (in->c) operands.c = in->c->buffer.address();
  operands.d = d->address();
  if (in->bias) operands.bias = in->bias->buffer.address();
  if (in->scale_a) operands.scale_a = in->scale_a->buffer.address();
  if (in->scale_b) operands.scale_b = in->scale_b->buffer.address();
  if (problem.record_amax) operands.amax_d = amax->address();
  operands.group_rows = rows->address();

  ASSERT_TRUE(PoisonValues(d->address(), d_count, output, nullptr).ok());
  const absl::Status ran = gemm->Run(operands, nullptr);
  ASSERT_TRUE(ran.ok()) << ran;
  absl::StatusOr<std::vector<double>> result = DownloadValues(*d, output);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::vector<double> expected =
      Reference(problem, *in, gc.rows, d_count);
  ExpectMatches(*result, expected, Bound(problem));
  if (problem.record_amax) {
    double expected_amax = 0;
    for (double value : expected) {
      if (!std::isnan(value)) {
        expected_amax = std::max(expected_amax, std::abs(value));
      }
    }
    absl::StatusOr<std::vector<double>> recorded =
        DownloadValues(*amax, ScalarType::kF32);
    ASSERT_TRUE(recorded.ok()) << recorded.status();
    EXPECT_NEAR((*recorded)[0], expected_amax, 3e-4 * expected_amax);
  }
}

INSTANTIATE_TEST_SUITE_P(Grouped, GemmGroupedGpuTest,
                         testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<GroupedCase>& info) {
                           return info.param.name;
                         });

class GroupedCountsGpuTest : public testing_support::HopperTest {};

// A masked decode step captured once in a CUDA graph, replayed with the
// counts rewritten between replays: each replay computes its own counts'
// rows and leaves the rest of D alone.
TEST_F(GroupedCountsGpuTest, AGraphReplaysWithNewCounts) {
  const absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  ASSERT_TRUE(driver.ok()) << driver.status();
  GroupedCase gc;
  gc.name = "GraphReplay";
  gc.grouping = Grouping::kMasked;
  gc.rows = {5, 64, 0, 31, 2, 64, 17, 9};
  gc.extra_rows = 64;
  gc.n = 768;
  gc.k = 512;
  const GemmProblem problem = ProblemOf(gc);
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  absl::StatusOr<Inputs> in = MakeInputs(problem, 11);
  ASSERT_TRUE(in.ok()) << in.status();
  const absl::StatusOr<GemmSpans> spans = StoredSpans(problem);
  ASSERT_TRUE(spans.ok()) << spans.status();
  absl::StatusOr<DeviceBuffer> d =
      DeviceBuffer::Allocate(static_cast<size_t>(spans->d * 2));
  ASSERT_TRUE(d.ok()) << d.status();
  absl::StatusOr<DeviceBuffer> rows =
      DeviceBuffer::Allocate(gc.rows.size() * sizeof(int));
  ASSERT_TRUE(rows.ok()) << rows.status();
  GemmOperands operands;
  operands.a = in->a.buffer.address();
  operands.b = in->b.buffer.address();
  operands.d = d->address();
  operands.group_rows = rows->address();

  absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  ASSERT_EQ((*driver)->cuStreamBeginCapture(
                stream->get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            CUDA_SUCCESS);
  const absl::Status run = gemm->Run(operands, stream->get());
  CUgraph graph = nullptr;
  ASSERT_EQ((*driver)->cuStreamEndCapture(stream->get(), &graph), CUDA_SUCCESS);
  ASSERT_TRUE(run.ok()) << run;
  CUgraphExec replay = nullptr;
  ASSERT_EQ((*driver)->cuGraphInstantiateWithFlags(&replay, graph, 0),
            CUDA_SUCCESS);
  const std::vector<std::vector<int>> steps = {
      gc.rows,
      {64, 0, 0, 1, 33, 7, 64, 64},
      {0, 0, 0, 0, 0, 0, 0, 0},
      {1, 1, 1, 1, 1, 1, 1, 1},
  };
  for (const std::vector<int>& counts : steps) {
    SCOPED_TRACE(absl::StrCat("counts ", counts[0], ", ", counts[1], ", ..."));
    ASSERT_TRUE(
        rows->CopyFromHost(counts.data(), counts.size() * sizeof(int)).ok());
    ASSERT_TRUE(
        PoisonValues(d->address(), spans->d, ScalarType::kBF16, nullptr).ok());
    ASSERT_EQ((*driver)->cuGraphLaunch(replay, stream->get()), CUDA_SUCCESS);
    ASSERT_TRUE(stream->Synchronize().ok());
    absl::StatusOr<std::vector<double>> result =
        DownloadValues(*d, ScalarType::kBF16);
    ASSERT_TRUE(result.ok()) << result.status();
    ExpectMatches(
        *result,
        Reference(problem, *in, counts, static_cast<int64_t>(result->size())),
        Bound(problem));
  }
  EXPECT_EQ((*driver)->cuGraphExecDestroy(replay), CUDA_SUCCESS);
  EXPECT_EQ((*driver)->cuGraphDestroy(graph), CUDA_SUCCESS);
}

// Row ends a buggy router could leave (past m, negative, decreasing) are
// clipped to 0..m and to the previous group's end: no store leaves D or
// lands in rows another group owns; the groups that are well formed come
// out right.
TEST_F(GroupedCountsGpuTest, CountsOutsideTheRowsAreClipped) {
  GroupedCase gc;
  gc.name = "Clipped";
  gc.rows = {100, 100, 100, 100};
  gc.n = 256;
  gc.k = 128;
  const GemmProblem problem = ProblemOf(gc);  // m = 400
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  absl::StatusOr<Inputs> in = MakeInputs(problem, 12);
  ASSERT_TRUE(in.ok()) << in.status();
  // D with 256 guard rows past its m.
  const int64_t guard_rows = 256;
  const int64_t d_count = (problem.m + guard_rows) * problem.n;
  absl::StatusOr<DeviceBuffer> d =
      DeviceBuffer::Allocate(static_cast<size_t>(d_count * 2));
  ASSERT_TRUE(d.ok()) << d.status();
  // Group 0 well formed (rows 0..99); group 1 ends before it begins (its
  // end 50 is clipped to 100: empty); group 2 runs past m (to 400);
  // group 3 is negative (clipped: empty).
  const std::vector<int> ends = {100, 50, 100000, -7};
  absl::StatusOr<DeviceBuffer> rows =
      DeviceBuffer::Allocate(ends.size() * sizeof(int));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_TRUE(rows->CopyFromHost(ends.data(), ends.size() * sizeof(int)).ok());
  GemmOperands operands;
  operands.a = in->a.buffer.address();
  operands.b = in->b.buffer.address();
  operands.d = d->address();
  operands.group_rows = rows->address();
  ASSERT_TRUE(
      PoisonValues(d->address(), d_count, ScalarType::kBF16, nullptr).ok());
  ASSERT_TRUE(gemm->Run(operands, nullptr).ok());
  absl::StatusOr<std::vector<double>> result =
      DownloadValues(*d, ScalarType::kBF16);
  ASSERT_TRUE(result.ok()) << result.status();
  // As the kernel reads them: 100 rows, none, the 300 rows to m, none.
  ExpectMatches(*result,
                Reference(problem, *in, {100, 0, 300, 0},
                          static_cast<int64_t>(result->size())),
                Bound(problem));
}

}  // namespace
}  // namespace ptxgen::gemm
