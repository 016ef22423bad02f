// What the GEMM refuses before any device is touched, each by a status
// naming the rule gemm.h states: ValidateProblem's rules (Prepare returns
// the same status), the spans it keeps inside int64_t, the options'
// enumerations, and the timing inputs' problem check. The driver is hidden
// from this binary, so it proves the same on a GPU machine; it runs under
// the sanitizers, which leave the GPU tests out.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "lib/gemm/timing.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/runtime/driver.h"

namespace ptxgen::gemm {
namespace {

using ptx::ScalarType;

constexpr ScalarType kF16 = ScalarType::kF16;
constexpr ScalarType kBF16 = ScalarType::kBF16;
constexpr ScalarType kF32 = ScalarType::kF32;
constexpr ScalarType kE4M3 = ScalarType::kE4M3;
constexpr ScalarType kE5M2 = ScalarType::kE5M2;
constexpr ScalarType kTF32 = ScalarType::kTF32;
constexpr ScalarType kS8 = ScalarType::kS8;
constexpr ScalarType kU8 = ScalarType::kU8;
constexpr ScalarType kS32 = ScalarType::kS32;
constexpr BiasAlong kAlongN = BiasAlong::kN;

// Read at the driver's first load and by the default kernel cache at its
// first use: set before any test runs.
const bool kNoDriverNoDiskCache =
    setenv(runtime::kDriverLibraryEnv, "/nonexistent/libcuda.so.1", 1) == 0 &&
    setenv("PTXGEN_CACHE_DISABLE", "1", 1) == 0;

// ---------------------------------------------------------------------------
// Problems the kernels cannot take, each refused by a status naming the rule
// gemm.h states.

struct Refusal {
  std::string what;
  GemmProblem problem;
  std::vector<std::string> message_parts;  // each in the status's message
};

GemmProblem Square(int64_t size, ScalarType element = kF16) {
  GemmProblem p;
  p.m = p.n = p.k = size;
  p.element = element;
  return p;
}

std::vector<Refusal> Refusals() {
  std::vector<Refusal> refusals;
  auto add = [&](std::string what,
                 const std::function<void(GemmProblem&)>& change,
                 std::vector<std::string> parts) {
    GemmProblem p = Square(64);
    change(p);
    refusals.push_back({std::move(what), p, std::move(parts)});
  };
  add("m = 0", [](GemmProblem& p) { p.m = 0; },
      {"m=0 is outside 1..2147483647"});
  add("k = 2^31", [](GemmProblem& p) { p.k = int64_t{1} << 31; },
      {"k=2147483648 is outside 1..2147483647"});
  add("f32 inputs (tf32 names them)", [](GemmProblem& p) { p.element = kF32; },
      {"f16, bf16, e4m3, e5m2, tf32, s8 or u8", "f32"});
  add("s32 inputs", [](GemmProblem& p) { p.element = kS32; },
      {"f16, bf16, e4m3, e5m2, tf32, s8 or u8", "s32"});
  add("MN-major tf32 B",
      [](GemmProblem& p) {
        p.element = kTF32;
        p.b_major = MajorOrder::kMN;
      },
      {"f16 or bf16", "tf32"});
  add("f16 A with an e4m3 B", [](GemmProblem& p) { p.b_element = kE4M3; },
      {"e4m3 with e5m2", "f16 with e4m3"});
  add("s8 A with an e4m3 B",
      [](GemmProblem& p) {
        p.element = kS8;
        p.b_element = kE4M3;
      },
      {"s8 with u8", "s8 with e4m3"});
  add("an s32 D of f16 inputs", [](GemmProblem& p) { p.output = kS32; },
      {"an s32 D comes from s8/u8 inputs", "f16"});
  add("an s32 D scaled by alpha",
      [](GemmProblem& p) {
        p.element = kU8;
        p.alpha = 2;
      },
      {"exact sums", "alpha must be 1, not 2"});
  add("an s8 D with C",
      [](GemmProblem& p) {
        p.element = kS8;
        p.output = kS8;
        p.beta = 1;
      },
      {"an s8 D takes no C"});
  add("an s32 D with a bias",
      [](GemmProblem& p) {
        p.element = kS8;
        p.bias = kAlongN;
      },
      {"an s32 D is the exact sums", "no bias"});
  add("MN-major s8 inputs",
      [](GemmProblem& p) {
        p.element = kS8;
        p.b_major = MajorOrder::kMN;
      },
      {"f16 or bf16", "s8"});
  add("e5m2 named twice",
      [](GemmProblem& p) {
        p.element = kE5M2;
        p.b_element = kE5M2;
      },
      {"write one type"});
  add("per-tensor scales of f16",
      [](GemmProblem& p) { p.scaling = GemmScaling::kTensor; },
      {"for fp8 inputs", "f16"});
  add("block scales of bf16",
      [](GemmProblem& p) {
        p.element = kBF16;
        p.scaling = GemmScaling::kBlock;
      },
      {"for fp8 inputs", "bf16"});
  add("block scaling with fast accumulation",
      [](GemmProblem& p) {
        p.element = kE4M3;
        p.scaling = GemmScaling::kBlock;
        p.fast_accumulation = true;
      },
      {"block scaling", "no fast accumulation"});
  add("a block-scaled e4m3 D",
      [](GemmProblem& p) {
        p.element = kE4M3;
        p.output = kE4M3;
        p.scaling = GemmScaling::kBlock;
      },
      {"f16, bf16 or f32 D, not e4m3", "no scale_d"});
  add("fast accumulation of bf16",
      [](GemmProblem& p) {
        p.element = kBF16;
        p.fast_accumulation = true;
      },
      {"for fp8 inputs", "bf16"});
  add("packed K-major e4m3 rows of k = 40",
      [](GemmProblem& p) {
        p.element = kE4M3;
        p.k = 40;
      },
      {"k=40", "16-byte boundary", "k must be a multiple of 16"});
  add("MN-major e4m3 inputs",
      [](GemmProblem& p) {
        p.element = ScalarType::kE4M3;
        p.a_major = MajorOrder::kMN;
      },
      {"f16 or bf16", "e4m3"});
  add("u8 output", [](GemmProblem& p) { p.output = kU8; },
      {"output type must be f16, bf16, f32, e4m3, e5m2, s8 or s32", "u8"});
  add("s8 bias",
      [](GemmProblem& p) {
        p.bias = kAlongN;
        p.bias_type = ScalarType::kS8;
      },
      {"bias must be f16, bf16 or f32", "s8"});
  add("K-major lda < k", [](GemmProblem& p) { p.lda = 32; },
      {"lda=32", "at least the stored row"});
  add("MN-major lda < m",
      [](GemmProblem& p) {
        p.a_major = MajorOrder::kMN;
        p.m = 128;
        p.lda = 64;
      },
      {"lda=64", "at least the stored row"});
  add("MN-major ldb < n",
      [](GemmProblem& p) {
        p.b_major = MajorOrder::kMN;
        p.n = 128;
        p.ldb = 120;
      },
      {"ldb=120", "at least the stored row"});
  add("ldc < n with C read",
      [](GemmProblem& p) {
        p.beta = 1;
        p.ldc = 63;
      },
      {"ldc=63", "at least the stored row"});
  add("ldd < n", [](GemmProblem& p) { p.ldd = 60; },
      {"ldd=60", "at least the stored row"});
  add("ldd < m, D transposed",
      [](GemmProblem& p) {
        p.d_transposed = true;
        p.m = 100;
        p.ldd = 64;
      },
      {"ldd=64", "at least the stored row (100 elements)"});
  add("ldc < m with C read, transposed",
      [](GemmProblem& p) {
        p.d_transposed = true;
        p.m = 72;
        p.beta = 1;
        p.ldc = 70;
      },
      {"ldc=70", "at least the stored row (72 elements)"});
  add("overlapping matrices of a transposed D",
      [](GemmProblem& p) {
        p.d_transposed = true;
        p.m = 80;
        p.batch = 2;
        p.stride_d = 64 * 80 - 1;
      },
      {"stride_d=5119", "at least one matrix (5120 elements)"});
  add("lda of 136 bytes", [](GemmProblem& p) { p.lda = 68; },
      {"lda=68", "16-byte boundary"});
  add("ldb of 200 bytes, MN-major",
      [](GemmProblem& p) {
        p.b_major = MajorOrder::kMN;
        p.ldb = 100;
      },
      {"ldb=100", "16-byte boundary"});
  add("packed K-major rows of k = 20", [](GemmProblem& p) { p.k = 20; },
      {"k=20", "16-byte boundary", "k must be a multiple of 8"});
  add("packed MN-major A of m = 257",
      [](GemmProblem& p) {
        p.a_major = MajorOrder::kMN;
        p.m = 257;
      },
      {"m=257", "16-byte boundary", "m must be a multiple of 8"});
  add("stride_a of 8200 bytes",
      [](GemmProblem& p) {
        p.batch = 2;
        p.stride_a = 64 * 64 + 4;
      },
      {"stride_a=4100", "multiple of 16 bytes"});
  add("batch = 0", [](GemmProblem& p) { p.batch = 0; }, {"batch=0", "65535"});
  add("batch = 65536", [](GemmProblem& p) { p.batch = 65536; },
      {"batch=65536", "65535"});
  add("overlapping matrices of D",
      [](GemmProblem& p) {
        p.batch = 2;
        p.stride_d = 64 * 64 - 64;
      },
      {"stride_d=4032", "at least one matrix"});
  add("overlapping biases of a batch",
      [](GemmProblem& p) {
        p.batch = 2;
        p.bias = kAlongN;
        p.stride_bias = 32;
      },
      {"stride_bias=32"});
  add("a bias stride past 2^40 bytes",
      [](GemmProblem& p) {
        p.batch = 2;
        p.bias = kAlongN;
        p.stride_bias = INT64_MAX;
      },
      {"stride_bias=9223372036854775807", "below 2^40 bytes"});
  add("an f32 bias stride of 2^40 bytes",
      [](GemmProblem& p) {
        p.batch = 2;
        p.bias = kAlongN;
        p.stride_bias = int64_t{1} << 38;
      },
      {"stride_bias=274877906944", "below 2^40 bytes"});
  // A tensor map's strides are below 2^40 bytes: so are a batch's.
  add("a batch stride of A of 2^40 bytes",
      [](GemmProblem& p) {
        p.batch = 2;
        p.stride_a = int64_t{1} << 39;
      },
      {"stride_a=549755813888", "below 2^40 bytes"});
  // Grouped GEMMs.
  auto grouped = [](Grouping grouping) {
    return [grouping](GemmProblem& p) {
      p.grouping = grouping;
      p.batch = 8;
    };
  };
  add("a grouping outside the enumeration",
      [](GemmProblem& p) { p.grouping = static_cast<Grouping>(7); },
      {"grouping is none, contiguous or masked"});
  add("a grouped D transposed",
      [&](GemmProblem& p) {
        grouped(Grouping::kContiguous)(p);
        p.d_transposed = true;
      },
      {"grouped GEMM stores D [rows, n]"});
  add("a grouped bias along m",
      [&](GemmProblem& p) {
        grouped(Grouping::kMasked)(p);
        p.bias = BiasAlong::kM;
      },
      {"bias runs along n, one per group"});
  add("a contiguous A with a batch stride",
      [&](GemmProblem& p) {
        grouped(Grouping::kContiguous)(p);
        p.stride_a = 64 * 64;
      },
      {"one matrix each", "stride_a, stride_c and stride_d must be 0"});
  add("expected_m past m",
      [&](GemmProblem& p) {
        grouped(Grouping::kMasked)(p);
        p.expected_m = 65;
      },
      {"expected_m=65 is outside 0..m (64)"});
  add("expected_m without groups", [](GemmProblem& p) { p.expected_m = 8; },
      {"expected_m is a grouped GEMM's planning hint"});
  add("groups past 65535",
      [&](GemmProblem& p) {
        grouped(Grouping::kContiguous)(p);
        p.batch = 65536;
      },
      {"batch=65536 is outside 1..65535"});
  return refusals;
}

void ExpectNamesTheRule(const absl::Status& status, const Refusal& refusal) {
  ASSERT_FALSE(status.ok()) << refusal.what << " was accepted";
  for (const std::string& part : refusal.message_parts) {
    EXPECT_NE(status.message().find(part), absl::string_view::npos)
        << refusal.what << ": \"" << part << "\" is not in: " << status;
  }
}

TEST(GemmFormsRules, ValidateProblemRefusesNamingTheRule) {
  for (const Refusal& refusal : Refusals()) {
    ExpectNamesTheRule(ValidateProblem(refusal.problem), refusal);
  }
}

// ValidateProblem's bounds keep every span inside int64_t; past them the
// count is refused, naming the operand, rather than wrapped.
TEST(GemmSpans, ASpanPastInt64IsRefusedNotWrapped) {
  GemmProblem p = Square(128);
  p.batch = 3;
  p.stride_a = INT64_MAX / 2 + 1;
  const absl::StatusOr<GemmSpans> spans = StoredSpans(p);
  EXPECT_FALSE(spans.ok());
  EXPECT_NE(spans.status().message().find("A spans more than 2^63-1"),
            std::string::npos)
      << spans.status();
}

// C is never read with beta = 0, so its leading dimension is not checked
// and must not be counted: once 2^63-1 wrapped to a negative span.
// A contiguous grouped GEMM's A and D are one matrix of every group's rows
// (its A block scales one [k blocks][m] array); B and its block scales are
// one per group; a masked one's A and D are one matrix per group.
TEST(GemmSpans, GroupedSpansFollowTheLayout) {
  GemmProblem p = Square(256, kE4M3);
  p.n = 512;
  p.batch = 4;
  p.scaling = GemmScaling::kBlock;
  p.grouping = Grouping::kContiguous;
  absl::StatusOr<GemmSpans> contiguous = StoredSpans(p);
  ASSERT_TRUE(contiguous.ok()) << contiguous.status();
  EXPECT_EQ(contiguous->a, 256 * 256);
  EXPECT_EQ(contiguous->b, 4 * 512 * 256);
  EXPECT_EQ(contiguous->d, 256 * 512);
  EXPECT_EQ(contiguous->scale_a, 2 * 256);
  EXPECT_EQ(contiguous->scale_b, 4 * 4 * 2);
  p.grouping = Grouping::kMasked;
  absl::StatusOr<GemmSpans> masked = StoredSpans(p);
  ASSERT_TRUE(masked.ok()) << masked.status();
  EXPECT_EQ(masked->a, 4 * 256 * 256);
  EXPECT_EQ(masked->d, 4 * 256 * 512);
  EXPECT_EQ(masked->scale_a, 4 * 2 * 256);
  EXPECT_TRUE(ValidateProblem(p).ok());
}

TEST(GemmSpans, CSpansNothingWithBetaZero) {
  GemmProblem p = Square(128);
  p.batch = 2;
  p.ldc = INT64_MAX;
  p.stride_c = INT64_MAX;
  const absl::StatusOr<GemmSpans> spans = StoredSpans(p);
  ASSERT_TRUE(spans.ok()) << spans.status();
  EXPECT_EQ(spans->c, 0);
  EXPECT_EQ(spans->d, 2 * 128 * 128);
}

// The largest bias stride (2^40 bytes of f32, less one element) spans
// exactly what the batch's last bias reaches.
TEST(GemmSpans, TheLargestBiasStrideSpansTheLastBiasExactly) {
  GemmProblem p = Square(128);
  p.batch = 65535;
  p.bias = BiasAlong::kN;
  p.stride_bias = (int64_t{1} << 38) - 1;
  const absl::StatusOr<GemmSpans> spans = StoredSpans(p);
  ASSERT_TRUE(spans.ok()) << spans.status();
  EXPECT_EQ(spans->bias, 65534 * ((int64_t{1} << 38) - 1) + 128);
}

TEST(GemmFormsRules, PrepareRefusesWithValidateProblemsStatus) {
  ASSERT_TRUE(kNoDriverNoDiskCache);
  for (const Refusal& refusal : Refusals()) {
    const absl::StatusOr<Gemm> gemm = Gemm::Prepare(refusal.problem);
    ExpectNamesTheRule(gemm.status(), refusal);
    EXPECT_EQ(gemm.status(), ValidateProblem(refusal.problem)) << refusal.what;
  }
}

// Where the operands of a 256 x 128 x 64 f16 GEMM (C read) lie: A, B, C
// and D each 1 MiB apart.
constexpr CUdeviceptr kMemory = 0x7f0000000000;
GemmOperands ApartOperands() {
  GemmOperands o;
  o.a = kMemory;
  o.b = kMemory + (1 << 20);
  o.c = kMemory + (2 << 20);
  o.d = kMemory + (3 << 20);
  o.bias = kMemory + (4 << 20);
  o.amax_d = kMemory + (5 << 20);
  return o;
}
GemmProblem ReadsC() {
  GemmProblem p{256, 128, 64, kF16};
  p.beta = 0.5f;
  p.bias = kAlongN;
  return p;
}

// An output that shares memory with another operand is refused, naming
// both (torch refuses such an out= too); D may be C itself, in place.
TEST(GemmOutputsApart, AnOutputSharingAnInputsMemoryIsRefused) {
  EXPECT_TRUE(CheckOutputsApart(ReadsC(), ApartOperands()).ok());
  GemmOperands in_place = ApartOperands();
  in_place.d = in_place.c;
  EXPECT_TRUE(CheckOutputsApart(ReadsC(), in_place).ok());

  const struct {
    const char* what;
    std::function<void(GemmProblem&, GemmOperands&)> change;
    const char* message;
  } refused[] = {
      {"out=a", [](GemmProblem&, GemmOperands& o) { o.d = o.a; },
       "GEMM: D (at 0x7f0000000000) shares memory with A (at 0x7f0000000000)"},
      {"D inside B", [](GemmProblem&, GemmOperands& o) { o.d = o.b + 256; },
       "D (at 0x7f0000100100) shares memory with B"},
      {"D starting in C's last row",
       [](GemmProblem&, GemmOperands& o) { o.d = o.c + 255 * 128 * 2; },
       "D (at 0x7f000020ff00) shares memory with C"},
      {"C in D walked another way",
       [](GemmProblem& p, GemmOperands& o) {
         o.d = o.c;
         p.ldc = 256;
       },
       "shares memory with C"},
      {"the bias in D",
       [](GemmProblem&, GemmOperands& o) { o.bias = o.d + 64; },
       "D (at 0x7f0000300000) shares memory with the bias"},
      {"amax_d in D",
       [](GemmProblem& p, GemmOperands& o) {
         p = GemmProblem{256, 128, 64, kE4M3};
         p.record_amax = true;
         o.amax_d = o.d + 4;
       },
       "D (at 0x7f0000300000) shares memory with amax_d"},
  };
  for (const auto& r : refused) {
    GemmProblem problem = ReadsC();
    GemmOperands operands = ApartOperands();
    r.change(problem, operands);
    const absl::Status status = CheckOutputsApart(problem, operands);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << r.what << ": " << status;
    EXPECT_NE(status.message().find(r.message), absl::string_view::npos)
        << r.what << ": " << status;
  }
  // A caller's workspace is written too.
  const absl::Status workspace =
      CheckOutputsApart(ReadsC(), ApartOperands(), kMemory + 4096, 1 << 16);
  EXPECT_NE(workspace.message().find(
                "the workspace (at 0x7f0000001000) shares memory with A"),
            absl::string_view::npos)
      << workspace;
}

// Slices of one buffer that do not touch may be an output and an input:
// D into columns 64.. of a [256, 192] buffer whose columns 0..63 are A.
TEST(GemmOutputsApart, SlicesOfOneBufferThatDoNotTouchPass) {
  GemmProblem p{256, 128, 64, kF16};
  p.lda = p.ldd = 192;
  GemmOperands o = ApartOperands();
  o.d = o.a + 64 * 2;
  EXPECT_TRUE(CheckOutputsApart(p, o).ok()) << CheckOutputsApart(p, o);
  o.d -= 2;  // column 63: A's
  EXPECT_FALSE(CheckOutputsApart(p, o).ok());
  // Operands the problem does not use are not looked at (C with beta 0).
  GemmOperands unused = ApartOperands();
  unused.c = unused.d;
  unused.bias = unused.d;
  EXPECT_TRUE(CheckOutputsApart(GemmProblem{256, 128, 64, kF16}, unused).ok());
}

TEST(GemmRules, AWorkspaceOwnerOutsideItsEnumerationIsRefused) {
  ASSERT_TRUE(kNoDriverNoDiskCache);
  GemmOptions options;
  options.workspace = static_cast<WorkspaceOwner>(2);
  const absl::StatusOr<Gemm> gemm =
      Gemm::Prepare(GemmProblem{64, 64, 64, ScalarType::kF16}, options);
  EXPECT_TRUE(absl::IsInvalidArgument(gemm.status())) << gemm.status();
  EXPECT_EQ(gemm.status().message(),
            "GEMM: GemmOptions::workspace=2 is not a WorkspaceOwner (kGemm=0, "
            "kCaller=1)");
}

TEST(GemmRules, RotatingOperandsRefuseAProblemTheKernelsCannotTake) {
  const absl::StatusOr<RotatingGemmOperands> empty = RandomRotatingGemmOperands(
      GemmProblem{8, 8, 0, ScalarType::kF16}, 64 << 20, 1, nullptr);
  EXPECT_EQ(empty.status().message(), "GEMM: k=0 is outside 1..2147483647");
}

}  // namespace
}  // namespace ptxgen::gemm
