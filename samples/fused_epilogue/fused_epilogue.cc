// A GEMM with a fused epilogue, run through ptxgen's user-facing API and
// checked against a host reference:
//
//   D = gelu(alpha * A.B^T + beta * C + bias)     bias: one value per column
//
//   fused_epilogue [--m=512] [--n=376] [--k=264]
//
// A [m,k], B [n,k], C and D [m,n], row-major f16; the bias f32, the
// accumulation f32. n and k are not multiples of the tile by default, so the
// edge tiles are partial. On a Hopper GPU: gemm::Gemm::Prepare plans,
// generates, compiles and loads the kernel, Run computes D into a buffer
// poisoned with NaN, and D is compared with a float64 host reference.
// Without one: the same kernel is planned for an H200 (gemm::PlanGemm needs
// no driver), its configuration and epilogue are printed, and the exit
// status is 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"

namespace {

using ptxgen::gemm::GemmProblem;

// The project's bound for f16 outputs (as its GEMM tests use): D rounds to
// f16 at 2^-11 relative, with margin for the order of f32 summation.
constexpr double kErrorBound = 2e-3;
// Past this many multiply-adds the host checks every few rows, not all.
constexpr int64_t kHostMultiplyAdds = int64_t{1} << 30;

GemmProblem FusedProblem(int64_t m, int64_t n, int64_t k) {
  GemmProblem problem{m, n, k, ptxgen::ptx::ScalarType::kF16};
  problem.alpha = 1.25f;
  problem.beta = 0.5f;  // non-zero: the kernel reads C
  problem.bias = ptxgen::gemm::BiasAlong::kN;
  problem.bias_type = ptxgen::ptx::ScalarType::kF32;
  problem.activation = ptxgen::gemm::Activation::kGelu;  // the erf form
  return problem;
}

absl::StatusOr<GemmProblem> ParseFlags(int argc, char** argv) {
  int64_t m = 512, n = 376, k = 264;
  for (int i = 1; i < argc; ++i) {
    const std::pair<absl::string_view, absl::string_view> flag =
        absl::StrSplit(argv[i], absl::MaxSplits('=', 1));
    int64_t* size = flag.first == "--m"   ? &m
                    : flag.first == "--n" ? &n
                    : flag.first == "--k" ? &k
                                          : nullptr;
    if (size == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag '", argv[i], "' (takes --m=, --n=, --k=)"));
    }
    if (!absl::SimpleAtoi(flag.second, size)) {
      return absl::InvalidArgumentError(
          absl::StrCat(argv[i], ": not an integer"));
    }
  }
  // The problem's rules (sizes, 16-byte aligned rows) belong to the library.
  const GemmProblem problem = FusedProblem(m, n, k);
  if (absl::Status valid = ptxgen::gemm::ValidateProblem(problem);
      !valid.ok()) {
    return valid;
  }
  return problem;
}

// ---- Host data: f16 bits without a half type ----

// A deterministic generator (splitmix64), so every run sees the same inputs.
struct Random {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // A multiple of 1/1024 in [-1, 1]: exact in f16, so the host reference
  // sees the very values the GPU multiplies.
  double Value() { return (static_cast<int>(Next() % 2049) - 1024) / 1024.0; }
};

// The f16 bits of a value that f16 holds exactly and as a normal number.
uint16_t HalfBits(double value) {
  if (value == 0) return 0;
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(value), &exponent);  // [0.5, 1)
  const int mantissa = static_cast<int>((2 * fraction - 1) * 1024);
  return static_cast<uint16_t>((value < 0 ? 0x8000 : 0) |
                               ((exponent + 14) << 10) | mantissa);
}

// Any f16 bits as a double: subnormals, infinities and NaN (0xffff, the
// poison) included.
double HalfValue(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  const double magnitude = exponent == 0x1f ? (mantissa != 0 ? NAN : INFINITY)
                           : exponent == 0
                               ? std::ldexp(mantissa, -24)
                               : std::ldexp(mantissa + 1024, exponent - 25);
  return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

// The operands' values on the host, each exact in the type it is stored in.
struct HostOperands {
  std::vector<double> a, b, c, bias;
};

HostOperands RandomOperands(const GemmProblem& p) {
  Random random{2024};
  HostOperands host;
  for (int64_t i = 0; i < p.m * p.k; ++i) host.a.push_back(random.Value());
  for (int64_t i = 0; i < p.n * p.k; ++i) host.b.push_back(random.Value());
  for (int64_t i = 0; i < p.m * p.n; ++i) host.c.push_back(random.Value());
  for (int64_t i = 0; i < p.n; ++i) host.bias.push_back(random.Value());
  return host;
}

// One element of D in float64, the erf form of GELU as the kernel's.
double ReferenceElement(const GemmProblem& p, const HostOperands& host,
                        int64_t row, int64_t column) {
  double dot = 0;
  for (int64_t i = 0; i < p.k; ++i)
    dot += host.a[row * p.k + i] * host.b[column * p.k + i];
  const double v =
      p.alpha * dot + p.beta * host.c[row * p.n + column] + host.bias[column];
  return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
}

struct Check {
  double relative_error =
      0;                   // by norm; infinite when D holds non-finite values
  int64_t non_finite = 0;  // NaN (the poison: unwritten) or infinity
  int64_t rows = 0;        // rows compared
};

// ||D - reference|| / ||reference|| over every row_step-th row of D.
Check CheckResult(const GemmProblem& p, const HostOperands& host,
                  const std::vector<uint16_t>& d, int64_t row_step) {
  Check check;
  double difference = 0, norm = 0;
  for (int64_t row = 0; row < p.m; row += row_step, ++check.rows) {
    for (int64_t column = 0; column < p.n; ++column) {
      const double got = HalfValue(d[row * p.n + column]);
      const double expected = ReferenceElement(p, host, row, column);
      if (!std::isfinite(got)) ++check.non_finite;
      difference += (got - expected) * (got - expected);
      norm += expected * expected;
    }
  }
  check.relative_error =
      check.non_finite > 0 ? INFINITY : std::sqrt(difference / norm);
  return check;
}

// ---- What ptxgen chose and generated ----

// From the line that defines `signature` through the brace closing it.
absl::StatusOr<std::string> FunctionText(absl::string_view source,
                                         absl::string_view signature) {
  const size_t at = source.find(signature);
  if (at == absl::string_view::npos) {
    return absl::NotFoundError(
        absl::StrCat("the generated source defines no '", signature,
                     "'; this sample is out of date with the generator"));
  }
  const size_t start = source.rfind('\n', at) + 1;  // npos + 1 is 0
  int depth = 0;
  for (size_t i = source.find('{', at); i < source.size(); ++i) {
    if (source[i] == '{') ++depth;
    if (source[i] == '}' && --depth == 0) {
      return std::string(source.substr(start, i + 1 - start));
    }
  }
  return absl::NotFoundError("unbalanced braces in the generated source");
}

absl::Status PrintKernel(const ptxgen::gen::GemmConfig& config,
                         const ptxgen::gen::GeneratedGemm& generated) {
  absl::PrintF("form          %s\n", ptxgen::gen::FormName(generated.form));
  absl::PrintF("config        %s\n", ptxgen::gen::ConfigName(config));
  absl::PrintF(
      "kernel        %s: %d threads, %d bytes of dynamic shared memory\n",
      generated.kernel_name, generated.threads_per_block,
      generated.shared_bytes);
  // The fused operations are one device function of the kernel: every store
  // strategy passes each f32 accumulator through it before rounding.
  absl::StatusOr<std::string> epilogue = FunctionText(
      generated.source, "__device__ __forceinline__ float epilogue_value(");
  if (!epilogue.ok()) return epilogue.status();
  absl::PrintF("\nthe epilogue, from the generated source:\n");
  for (absl::string_view line : absl::StrSplit(*epilogue, '\n')) {
    absl::PrintF("  | %s\n", line);
  }
  return absl::OkStatus();
}

// ---- The run ----

// The values as their stored types: f16 bits for A, B and C, f32 for the bias.
std::vector<uint16_t> AsHalves(const std::vector<double>& values) {
  std::vector<uint16_t> halves;
  for (double value : values) halves.push_back(HalfBits(value));
  return halves;
}
std::vector<float> AsFloats(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

template <typename T>
absl::StatusOr<ptxgen::runtime::DeviceBuffer> Upload(
    const std::vector<T>& values) {
  absl::StatusOr<ptxgen::runtime::DeviceBuffer> buffer =
      ptxgen::runtime::DeviceBuffer::Allocate(values.size() * sizeof(T));
  if (!buffer.ok()) return buffer.status();
  absl::Status copied =
      buffer->CopyFromHost(values.data(), values.size() * sizeof(T));
  if (!copied.ok()) return copied;
  return buffer;
}

// Runs the GEMM on device 0; D, downloaded, in `d`.
absl::Status RunOnGpu(const GemmProblem& p, const HostOperands& host,
                      std::vector<uint16_t>& d) {
  // Device 0's primary context, current for Prepare (which loads the kernel
  // into it) and the buffers; made first, so that it outlives them.
  absl::StatusOr<ptxgen::runtime::PrimaryContext> context =
      ptxgen::runtime::PrimaryContext::Retain(0);
  if (!context.ok()) return context.status();
  if (absl::Status current = context->SetCurrent(); !current.ok())
    return current;
  absl::StatusOr<ptxgen::gemm::Gemm> gemm = ptxgen::gemm::Gemm::Prepare(p);
  if (!gemm.ok()) return gemm.status();
  if (absl::Status printed = PrintKernel(gemm->config(), gemm->generated());
      !printed.ok()) {
    return printed;
  }
  auto a = Upload(AsHalves(host.a));
  auto b = Upload(AsHalves(host.b));
  auto c = Upload(AsHalves(host.c));
  auto bias = Upload(AsFloats(host.bias));
  auto out = ptxgen::runtime::DeviceBuffer::Allocate(d.size() * 2);
  for (const absl::Status& status :
       {a.status(), b.status(), c.status(), bias.status(), out.status()}) {
    if (!status.ok()) return status;
  }
  // 0xffff is a NaN: an element the kernel does not write cannot pass.
  if (absl::Status poisoned = out->Memset8(0xff); !poisoned.ok())
    return poisoned;
  const ptxgen::gemm::GemmOperands operands{a->address(), b->address(),
                                            c->address(), out->address(),
                                            bias->address()};
  if (absl::Status ran = gemm->Run(operands, /*stream=*/nullptr); !ran.ok())
    return ran;
  if (absl::Status synced = ptxgen::runtime::SynchronizeCurrentContext();
      !synced.ok()) {
    return synced;
  }
  return out->CopyToHost(d.data(), d.size() * 2);
}

absl::StatusOr<bool> Main(const GemmProblem& p) {
  absl::PrintF(
      "problem       D = gelu(%g * A.B^T + %g * C + bias_n), m=%d n=%d k=%d; "
      "A, B, C, D f16, bias f32\n",
      p.alpha, p.beta, p.m, p.n, p.k);
  if (const absl::Status here =
          ptxgen::runtime::CheckDeviceRuns(0, ptxgen::runtime::kKernelArch);
      !here.ok()) {
    absl::PrintF("no GPU: %s\n", here.message());
    absl::PrintF(
        "planning for an H200 instead (GemmTarget::H200(), no driver needed); "
        "the run is skipped\n");
    absl::StatusOr<ptxgen::gemm::GemmPlan> plan =
        ptxgen::gemm::PlanGemm(p, ptxgen::gemm::GemmTarget::H200());
    if (!plan.ok()) return plan.status();
    if (absl::Status printed = PrintKernel(plan->config, plan->generated);
        !printed.ok()) {
      return printed;
    }
    return true;
  }
  const HostOperands host = RandomOperands(p);
  std::vector<uint16_t> d(p.m * p.n);
  if (absl::Status ran = RunOnGpu(p, host, d); !ran.ok()) return ran;
  const int64_t row_step =
      std::max<int64_t>(1, p.m * p.n * p.k / kHostMultiplyAdds);
  const Check check = CheckResult(p, host, d, row_step);
  absl::PrintF(
      "\nrelative error by norm vs a float64 host reference (%d of %d rows): "
      "%.3e, bound %.0e\n",
      check.rows, p.m, check.relative_error, kErrorBound);
  if (check.non_finite > 0) {
    absl::PrintF("%d elements of D are NaN or infinite (NaN: left unwritten)\n",
                 check.non_finite);
  }
  const bool passed = check.relative_error < kErrorBound;
  absl::PrintF("%s\n", passed ? "PASS" : "FAIL");
  return passed;
}

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<GemmProblem> problem = ParseFlags(argc, argv);
  if (!problem.ok()) {
    std::fprintf(stderr, "fused_epilogue: %s\n",
                 std::string(problem.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<bool> passed = Main(*problem);
  if (!passed.ok()) {
    std::fflush(stdout);
    std::fprintf(stderr, "fused_epilogue: %s\n",
                 std::string(passed.status().message()).c_str());
    return 1;
  }
  return *passed ? 0 : 1;
}
