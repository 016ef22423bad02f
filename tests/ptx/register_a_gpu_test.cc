// Attention's two wgmmas on the GPU, joined by AccumulatorToRegisterA: one
// warpgroup computes S = Q * K^T with an SS wgmma, takes S's f32
// accumulators as the A registers of P * V (P = S rounded to the input type,
// packed in place: no shuffle, no shared memory), runs the RS wgmma over V
// with its keys in the order AColumn gives, and stores O by the accumulator
// fragment. The values are small integers, exact in every input type and
// accumulator, so O must equal the host's exactly: a wrong register, element
// or key order shows as a wrong value.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/verification.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gen/cuda_source.h"
#include "ptxgen/ptx/convert.h"
#include "ptxgen/ptx/fragment_layout.h"
#include "ptxgen/ptx/matrix_descriptor.h"
#include "ptxgen/ptx/tma.h"
#include "ptxgen/ptx/wgmma.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/module.h"
#include "tests/support/hopper_test.h"

namespace ptxgen::ptx {
namespace {

constexpr int kThreads = 128;
constexpr int kRowBytes = 128;

// Keys and head dimension alike: one 128-byte row of elements, so every
// tile is K-major with the 128B swizzle.
int Columns(ScalarType input) { return kRowBytes / SizeInBytes(input); }

// Q is 64 x C, K and V (as B, [head][key]) C x C.
SharedTile QTile(ScalarType input) {
  return {input, kWgmmaM, Columns(input), MajorOrder::kK, Swizzle::k128B};
}
SharedTile KvTile(ScalarType input) {
  return {input, Columns(input), Columns(input), MajorOrder::kK,
          Swizzle::k128B};
}

WgmmaMma QkMma(ScalarType input) {
  WgmmaMma mma;
  mma.n = Columns(input);
  mma.a_type = mma.b_type = input;
  mma.d_type = ScalarType::kF32;
  return mma;
}

WgmmaMma PvMma(ScalarType input) {
  WgmmaMma mma = QkMma(input);
  mma.a_source = WgmmaASource::kRegisters;
  return mma;
}

absl::StatusOr<AccumulatorToRegisterA> Conversion(ScalarType input) {
  absl::StatusOr<AccumulatorFragment> s = AccumulatorFragment::Of(QkMma(input));
  if (!s.ok()) return s.status();
  absl::StatusOr<RegisterAFragment> p = RegisterAFragment::Of(PvMma(input));
  if (!p.ok()) return p.status();
  return AccumulatorToRegisterA::Of(*s, *p);
}

// The statement `name` of `statement` as a device function, appended.
absl::Status AppendFunction(absl::string_view name,
                            const absl::StatusOr<Statement>& statement,
                            std::string* functions) {
  if (!statement.ok()) return statement.status();
  absl::StatusOr<std::string> function = gen::DeviceFunction(name, *statement);
  if (!function.ok()) return function.status();
  absl::StrAppend(functions, *function);
  return absl::OkStatus();
}

// The tiles arrive in global memory in tile order ([mn][k]) with each
// element's shared offset; the kernel scatters them, runs both wgmmas and
// stores O ([row][head]).
absl::StatusOr<std::string> ProbeSource(ScalarType input) {
  const int columns = Columns(input);
  const int k = *WgmmaK(input);
  absl::StatusOr<AccumulatorFragment> s = AccumulatorFragment::Of(QkMma(input));
  if (!s.ok()) return s.status();
  absl::StatusOr<AccumulatorToRegisterA> conversion = Conversion(input);
  if (!conversion.ok()) return conversion.status();
  std::string functions =
      absl::StrCat(s->DeviceFunctions(), conversion->DeviceFunctions());
  const std::pair<const char*, absl::StatusOr<Statement>> statements[] = {
      {"qk", WgmmaMmaAsync(QkMma(input))},
      {"pv", WgmmaMmaAsync(PvMma(input))},
      {"fence", WgmmaFence()},
      {"commit", WgmmaCommitGroup()},
      {"wait", WgmmaWaitGroup(0)},
      {"pin", WgmmaAccumulatorPin(ScalarType::kF32, columns)},
      {"proxy_fence", FenceProxyAsyncSharedCta()},
      {"pack", CvtPackFromF32x2(input)}};
  for (const auto& [name, statement] : statements) {
    if (absl::Status appended = AppendFunction(name, statement, &functions);
        !appended.ok()) {
      return appended;
    }
  }
  // A register packs its elements by pairs, the first pair (and element) in
  // the low bits.
  const std::string take =
      SizeInBytes(input) == 2
          ? "pack(p[j][r], s[register_a_accumulator(j, r, 1)],\n"
            "           s[register_a_accumulator(j, r, 0)]);\n"
          : "unsigned short low, high;\n"
            "      pack(low, s[register_a_accumulator(j, r, 1)],\n"
            "           s[register_a_accumulator(j, r, 0)]);\n"
            "      pack(high, s[register_a_accumulator(j, r, 3)],\n"
            "           s[register_a_accumulator(j, r, 2)]);\n"
            "      p[j][r] = low | (unsigned)high << 16;\n";
  const int bytes = SizeInBytes(input);
  const int q_bytes = kWgmmaM * columns * bytes;
  const int kv_bytes = columns * columns * bytes;
  return absl::StrCat(
      functions, R"(
extern "C" __global__ void __launch_bounds__(128, 1) attention_probe(
    const unsigned char* q, const unsigned char* k, const unsigned char* v,
    const unsigned* q_offsets, const unsigned* k_offsets,
    const unsigned* v_offsets, float* o, unsigned long long q_fields,
    unsigned long long k_fields, unsigned long long v_fields,
    const unsigned* q_steps, const unsigned* k_steps, const unsigned* v_steps) {
  __shared__ __align__(1024) unsigned char tiles[)",
      q_bytes + 2 * kv_bytes, R"(];
  for (int i = threadIdx.x; i < )",
      kWgmmaM * columns, R"(; i += 128) {
    for (int b = 0; b < )",
      bytes, R"(; ++b) tiles[q_offsets[i] + b] = q[i * )", bytes, R"( + b];
  }
  for (int i = threadIdx.x; i < )",
      columns * columns, R"(; i += 128) {
    for (int b = 0; b < )",
      bytes, R"(; ++b) {
      tiles[)",
      q_bytes, R"( + k_offsets[i] + b] = k[i * )", bytes, R"( + b];
      tiles[)",
      q_bytes + kv_bytes, R"( + v_offsets[i] + b] = v[i * )", bytes, R"( + b];
    }
  }
  proxy_fence();
  __syncthreads();
  const unsigned base = (unsigned)__cvta_generic_to_shared(tiles);
  float s[)",
      columns / 2, R"(];
#pragma unroll
  for (int i = 0; i < )",
      columns / 2, R"(; ++i) s[i] = 0.0f;
  pin(s);
  fence();
#pragma unroll
  for (int t = 0; t < )",
      columns / k, R"(; ++t) {
    qk(s, q_fields | )",
      DescriptorAddressFieldExpression("base + q_steps[t]"), R"(,
       k_fields | )",
      DescriptorAddressFieldExpression(
          absl::StrCat("base + ", q_bytes, " + k_steps[t]")),
      R"(, 1u);
  }
  commit();
  wait();
  pin(s);
  unsigned p[)",
      conversion->slices(), R"(][4];
#pragma unroll
  for (int j = 0; j < )",
      conversion->slices(), R"(; ++j) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      )",
      take, R"(    }
  }
  float o_acc[)",
      columns / 2, R"(];
#pragma unroll
  for (int i = 0; i < )",
      columns / 2, R"(; ++i) o_acc[i] = 0.0f;
  pin(o_acc);
  fence();
#pragma unroll
  for (int j = 0; j < )",
      conversion->slices(), R"(; ++j) {
    pv(o_acc, p[j], v_fields | )",
      DescriptorAddressFieldExpression(
          absl::StrCat("base + ", q_bytes + kv_bytes, " + v_steps[j]")),
      R"(, 1u);
  }
  commit();
  wait();
  pin(o_acc);
  const int t = threadIdx.x;
#pragma unroll
  for (int i = 0; i < )",
      columns / 2, R"(; ++i) {
    o[accumulator_row(t, i) * )",
      columns, R"( + accumulator_column(t, i)] = o_acc[i];
  }
}
)");
}

// A small integer's bits in `input` (exact in every input type).
std::vector<uint8_t> Bytes(int value, ScalarType input) {
  if (SizeInBytes(input) == 1) return {gemm::DoubleToFp8Bits(value, input)};
  const uint16_t bits = gemm::FloatToHalfBits(static_cast<float>(value), input);
  return {static_cast<uint8_t>(bits & 0xFF), static_cast<uint8_t>(bits >> 8)};
}

// A tile's elements in tile order, as bytes, with their shared offsets.
struct TileUpload {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> offsets;
};

absl::StatusOr<TileUpload> Tile(const SharedTile& tile,
                                const std::vector<int>& values) {
  TileUpload upload;
  for (int mn = 0; mn < tile.mn_extent; ++mn) {
    for (int k = 0; k < tile.k_extent; ++k) {
      const std::vector<uint8_t> bytes =
          Bytes(values[mn * tile.k_extent + k], tile.type);
      upload.bytes.insert(upload.bytes.end(), bytes.begin(), bytes.end());
      absl::StatusOr<uint32_t> offset = TileElementOffset(tile, mn, k);
      if (!offset.ok()) return offset.status();
      upload.offsets.push_back(*offset);
    }
  }
  return upload;
}

// The operands' offsets in a tile, K columns apart.
absl::StatusOr<std::vector<uint32_t>> Steps(const SharedTile& tile, int k) {
  std::vector<uint32_t> steps;
  for (int at = 0; at < tile.k_extent; at += k) {
    absl::StatusOr<uint32_t> offset = TileOperandOffset(tile, 0, at);
    if (!offset.ok()) return offset.status();
    steps.push_back(*offset);
  }
  return steps;
}

// Everything the GPU test launches with, and the O it must produce.
struct Probe {
  std::string source;
  TileUpload q, k, v;
  std::vector<uint32_t> q_steps, kv_steps;
  uint64_t q_fields = 0, kv_fields = 0;
  std::vector<int> expected;  // O, [row][head]
};

absl::StatusOr<Probe> MakeProbe(ScalarType input) {
  const int columns = Columns(input);
  const int k = *WgmmaK(input);
  absl::StatusOr<AccumulatorToRegisterA> conversion = Conversion(input);
  if (!conversion.ok()) return conversion.status();
  Probe probe;
  absl::StatusOr<std::string> source = ProbeSource(input);
  if (!source.ok()) return source.status();
  probe.source = *std::move(source);

  // Q has 8 nonzeros in {-1, 1} a row, spread over every K step, so S lies
  // in -8..8, exact in every input type; V lies in -3..3, so |O| <= 24 C,
  // exact in f32.
  std::mt19937 random(37);
  std::uniform_int_distribution<int> ternary(-1, 1), small(-3, 3);
  const int spread = columns / 8;
  std::vector<int> q(kWgmmaM * columns), key(columns * columns),
      value(columns * columns);  // q[row][head], key and value [key][head]
  for (int row = 0; row < kWgmmaM; ++row) {
    for (int h = 0; h < columns; ++h) {
      const bool nonzero = h % spread == row % spread;
      q[row * columns + h] = nonzero ? (ternary(random) < 0 ? -1 : 1) : 0;
    }
  }
  for (int& x : key) x = ternary(random);
  for (int& x : value) x = small(random);

  // B of P * V is [head][position]: key jK + c at position jK + AColumn(c).
  std::vector<int> v_b(columns * columns);
  for (int j = 0; j < conversion->slices(); ++j) {
    for (int c = 0; c < k; ++c) {
      const int position = j * k + *conversion->AColumn(c);
      for (int h = 0; h < columns; ++h)
        v_b[h * columns + position] = value[(j * k + c) * columns + h];
    }
  }

  const SharedTile q_tile = QTile(input), kv_tile = KvTile(input);
  absl::StatusOr<TileLayout> q_layout = DescribeTile(q_tile);
  if (!q_layout.ok()) return q_layout.status();
  absl::StatusOr<TileLayout> kv_layout = DescribeTile(kv_tile);
  if (!kv_layout.ok()) return kv_layout.status();
  absl::StatusOr<uint64_t> q_fields =
      EncodeMatrixDescriptor(q_layout->descriptor);
  if (!q_fields.ok()) return q_fields.status();
  absl::StatusOr<uint64_t> kv_fields =
      EncodeMatrixDescriptor(kv_layout->descriptor);
  if (!kv_fields.ok()) return kv_fields.status();
  probe.q_fields = *q_fields;
  probe.kv_fields = *kv_fields;
  for (const auto& [tile, values, upload] :
       {std::tie(q_tile, q, probe.q), std::tie(kv_tile, key, probe.k),
        std::tie(kv_tile, v_b, probe.v)}) {
    absl::StatusOr<TileUpload> made = Tile(tile, values);
    if (!made.ok()) return made.status();
    upload = *std::move(made);
  }
  absl::StatusOr<std::vector<uint32_t>> q_steps = Steps(q_tile, k);
  if (!q_steps.ok()) return q_steps.status();
  absl::StatusOr<std::vector<uint32_t>> kv_steps = Steps(kv_tile, k);
  if (!kv_steps.ok()) return kv_steps.status();
  probe.q_steps = *std::move(q_steps);
  probe.kv_steps = *std::move(kv_steps);

  std::vector<int> scores(kWgmmaM * columns, 0);
  for (int row = 0; row < kWgmmaM; ++row) {
    for (int j = 0; j < columns; ++j) {
      for (int h = 0; h < columns; ++h) {
        scores[row * columns + j] +=
            q[row * columns + h] * key[j * columns + h];
      }
    }
  }
  probe.expected.assign(kWgmmaM * columns, 0);
  for (int row = 0; row < kWgmmaM; ++row) {
    for (int j = 0; j < columns; ++j) {
      for (int h = 0; h < columns; ++h) {
        probe.expected[row * columns + h] +=
            scores[row * columns + j] * value[j * columns + h];
      }
    }
  }
  return probe;
}

const ScalarType kInputs[] = {ScalarType::kF16, ScalarType::kBF16,
                              ScalarType::kE4M3, ScalarType::kE5M2};

// Without a GPU the probes are still made and compiled, so CI proves all
// but the launch.
TEST(RegisterAProbeTest, ProbesCompileForSm90a) {
  for (ScalarType input : kInputs) {
    absl::StatusOr<Probe> probe = MakeProbe(input);
    ASSERT_TRUE(probe.ok()) << PtxName(input) << ": " << probe.status();
    absl::StatusOr<compile::CompiledModule> compiled =
        compile::CompileCuda("attention_probe", probe->source, {});
    EXPECT_TRUE(compiled.ok()) << PtxName(input) << ": " << compiled.status();
  }
}

template <typename T>
runtime::DeviceBuffer Upload(const std::vector<T>& host) {
  absl::StatusOr<runtime::DeviceBuffer> buffer =
      runtime::DeviceBuffer::Allocate(host.size() * sizeof(T));
  EXPECT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_TRUE(buffer->CopyFromHost(host.data(), host.size() * sizeof(T)).ok());
  return *std::move(buffer);
}

class RegisterAGpuTest : public testing_support::HopperTest,
                         public testing::WithParamInterface<ScalarType> {};

TEST_P(RegisterAGpuTest, AccumulatorsFeedTheSecondWgmmaInPlace) {
  const ScalarType input = GetParam();
  const int columns = Columns(input);
  absl::StatusOr<Probe> probe = MakeProbe(input);
  ASSERT_TRUE(probe.ok()) << probe.status();
  // Through the kernel cache: a GPU bundle holds it precompiled.
  absl::StatusOr<std::shared_ptr<const compile::CompiledModule>> compiled =
      compile::KernelCache::Default().GetOrCompile("attention_probe",
                                                   probe->source, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  absl::StatusOr<runtime::Module> module =
      runtime::Module::LoadCubin(**compiled);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<runtime::Function> function =
      module->GetFunction("attention_probe");
  ASSERT_TRUE(function.ok()) << function.status();

  runtime::DeviceBuffer q = Upload(probe->q.bytes), k = Upload(probe->k.bytes),
                        v = Upload(probe->v.bytes);
  runtime::DeviceBuffer q_offsets = Upload(probe->q.offsets),
                        k_offsets = Upload(probe->k.offsets),
                        v_offsets = Upload(probe->v.offsets);
  runtime::DeviceBuffer o =
      Upload(std::vector<float>(kWgmmaM * columns, -12345.0f));
  runtime::DeviceBuffer q_steps = Upload(probe->q_steps),
                        kv_steps = Upload(probe->kv_steps);
  CUdeviceptr pointers[] = {
      q.address(),         k.address(),         v.address(),
      q_offsets.address(), k_offsets.address(), v_offsets.address(),
      o.address(),         q_steps.address(),   kv_steps.address()};
  unsigned long long q_fields = probe->q_fields;
  unsigned long long kv_fields = probe->kv_fields;
  void* args[] = {&pointers[0], &pointers[1], &pointers[2], &pointers[3],
                  &pointers[4], &pointers[5], &pointers[6], &q_fields,
                  &kv_fields,   &kv_fields,   &pointers[7], &pointers[8],
                  &pointers[8]};
  runtime::LaunchConfig launch;
  launch.block = {kThreads, 1, 1};
  ASSERT_TRUE(function->Launch(launch, args).ok());
  std::vector<float> result(kWgmmaM * columns);
  ASSERT_TRUE(o.CopyToHost(result.data(), result.size() * sizeof(float)).ok());

  int wrong = 0;
  for (int i = 0; i < kWgmmaM * columns; ++i) {
    if (result[i] != static_cast<float>(probe->expected[i]) && ++wrong <= 8) {
      ADD_FAILURE() << PtxName(input) << " O(" << i / columns << ", "
                    << i % columns << ") = " << result[i] << ", not "
                    << probe->expected[i];
    }
  }
  EXPECT_EQ(wrong, 0);
}

INSTANTIATE_TEST_SUITE_P(Inputs, RegisterAGpuTest, testing::ValuesIn(kInputs),
                         [](const testing::TestParamInfo<ScalarType>& info) {
                           return std::string(PtxName(info.param));
                         });

}  // namespace
}  // namespace ptxgen::ptx
