// Layer: timing on the device (random operands, event medians), beside
// gemm.cc and below autotune.cc; calls problem.cc and helper_kernels.cc.
#include "lib/gemm/timing.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "lib/gemm/helper_kernels.h"
#include "ptxgen/gen/fill_kernel.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/module.h"

namespace ptxgen::gemm {

namespace {

// The largest scale whose values every element of `element` holds.
float MaxFillScale(ptx::ScalarType element) {
  switch (element) {
    case ptx::ScalarType::kF16:
      return 65504.0f;
    case ptx::ScalarType::kBF16:
      return 0x1.FEp127f;  // bits 0x7F7F
    case ptx::ScalarType::kS8:
      return 127.0f;
    case ptx::ScalarType::kU8:
      return 255.0f;
    default:
      return std::numeric_limits<float>::max();
  }
}

}  // namespace

absl::Status FillRandom(CUdeviceptr address, int64_t count,
                        ptx::ScalarType element, uint32_t seed, float scale,
                        CUstream stream) {
  if (count < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("FillRandom: count ", count, " is negative"));
  }
  const float max_scale = MaxFillScale(element);
  if (!(scale >= 0.0f && scale <= max_scale)) {
    return absl::InvalidArgumentError(
        absl::StrCat("FillRandom: scale ", scale, " is outside 0..", max_scale,
                     ", what ", ptx::PtxName(element), " holds"));
  }
  absl::StatusOr<runtime::Function> fill =
      HelperKernel(gen::RandomFillKernelName(element),
                   [element] { return gen::RandomFillSource(element); });
  if (!fill.ok()) return fill.status();
  unsigned long long elements = static_cast<unsigned long long>(count);
  void* args[] = {&address, &elements, &seed, &scale};
  runtime::LaunchConfig launch;
  launch.grid = {1024, 1, 1};
  launch.block = {256, 1, 1};
  launch.stream = stream;
  return fill->Launch(launch, args);
}

float DefaultFillScale(ptx::ScalarType element) {
  return element == ptx::ScalarType::kS8 || element == ptx::ScalarType::kU8
             ? 8.0f
             : 1.0f;
}

absl::Status FillRandom(CUdeviceptr address, int64_t count,
                        ptx::ScalarType element, uint32_t seed,
                        CUstream stream) {
  return FillRandom(address, count, element, seed, DefaultFillScale(element),
                    stream);
}

absl::Status RotatingGemmOperands::RunOnCopy(size_t i,
                                             const GemmCall& call) const {
  const size_t copy = i % a.size();
  return call(a[copy].address(), b[copy].address(), c.address());
}

GemmOperands RotatingGemmOperands::OperandsOfCopy(size_t i) const {
  const size_t copy = i % a.size();
  GemmOperands operands;
  operands.a = a[copy].address();
  operands.b = b[copy].address();
  operands.c = c_input ? c_input->address() : 0;
  operands.d = c.address();
  operands.bias = bias ? bias->address() : 0;
  operands.scale_a = block_scales_a ? block_scales_a->address() : ScaleA();
  operands.scale_b = block_scales_b ? block_scales_b->address() : ScaleB();
  operands.scale_d = ScaleD();
  operands.amax_d = AmaxD();
  return operands;
}

namespace {

// A buffer of `count` random elements of `type`: what timing reads.
absl::StatusOr<runtime::DeviceBuffer> TimingInput(int64_t count,
                                                  ptx::ScalarType type,
                                                  uint32_t seed,
                                                  CUstream stream) {
  absl::StatusOr<runtime::DeviceBuffer> buffer =
      runtime::DeviceBuffer::Allocate(count * ptx::SizeInBytes(type));
  if (!buffer.ok()) return buffer.status();
  if (absl::Status filled =
          FillRandom(buffer->address(), count, type, seed, stream);
      !filled.ok()) {
    return filled;
  }
  return buffer;
}

// `count` f32 scales of 1: block scales a kernel reads at full cost but
// which leave its D the unscaled product.
absl::StatusOr<runtime::DeviceBuffer> UnitScales(int64_t count) {
  absl::StatusOr<runtime::DeviceBuffer> buffer =
      runtime::DeviceBuffer::Allocate(count * sizeof(float));
  if (!buffer.ok()) return buffer.status();
  absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  if (!driver.ok()) return driver.status();
  constexpr unsigned kOneBits = 0x3F800000;  // 1.0f
  if (absl::Status set =
          (*driver)->Check((*driver)->cuMemsetD32(buffer->address(), kOneBits,
                                                  static_cast<size_t>(count)),
                           "cuMemsetD32 (block scales)");
      !set.ok()) {
    return set;
  }
  return buffer;
}

}  // namespace

absl::StatusOr<RotatingGemmOperands> RandomRotatingGemmOperands(
    const GemmProblem& problem, int64_t l2_bytes, uint32_t seed,
    CUstream stream) {
  if (absl::Status valid = ValidateProblem(problem); !valid.ok()) return valid;
  absl::StatusOr<GemmSpans> stored = StoredSpans(problem);
  if (!stored.ok()) return stored.status();
  const GemmSpans& spans = *stored;
  const GemmProblem r = Resolved(problem);
  const int64_t bytes = ptx::SizeInBytes(problem.element);
  const int64_t counts[] = {spans.a, spans.b};
  const int64_t pass_bytes = (counts[0] + counts[1]) * bytes;
  const int64_t copies =
      std::clamp<int64_t>(4 * l2_bytes / pass_bytes + 1, 1, 16);
  absl::StatusOr<runtime::DeviceBuffer> c =
      runtime::DeviceBuffer::Allocate(spans.d * ptx::SizeInBytes(*r.output));
  if (!c.ok()) return c.status();
  RotatingGemmOperands operands{{},           {},           *std::move(c),
                                std::nullopt, std::nullopt, std::nullopt};
  if (r.scaling != GemmScaling::kNone || r.record_amax) {
    const float values[16] = {0.5f, 0, 0, 0, 2.0f, 0, 0, 0, 1.0f};
    absl::StatusOr<runtime::DeviceBuffer> scalars =
        runtime::DeviceBuffer::Allocate(sizeof(values));
    if (!scalars.ok()) return scalars.status();
    if (absl::Status copied = scalars->CopyFromHost(values, sizeof(values));
        !copied.ok()) {
      return copied;
    }
    operands.scalars = *std::move(scalars);
  }
  if (r.scaling == GemmScaling::kBlock) {
    absl::StatusOr<runtime::DeviceBuffer> scales_a = UnitScales(spans.scale_a);
    if (!scales_a.ok()) return scales_a.status();
    absl::StatusOr<runtime::DeviceBuffer> scales_b = UnitScales(spans.scale_b);
    if (!scales_b.ok()) return scales_b.status();
    operands.block_scales_a = *std::move(scales_a);
    operands.block_scales_b = *std::move(scales_b);
  }
  if (r.beta != 0.0f) {
    absl::StatusOr<runtime::DeviceBuffer> input =
        TimingInput(spans.c, *r.output, seed - 1, stream);
    if (!input.ok()) return input.status();
    operands.c_input = *std::move(input);
  }
  if (r.bias != BiasAlong::kNone) {
    absl::StatusOr<runtime::DeviceBuffer> bias =
        TimingInput(spans.bias, r.bias_type, seed - 2, stream);
    if (!bias.ok()) return bias.status();
    operands.bias = *std::move(bias);
  }
  for (int64_t copy = 0; copy < copies; ++copy) {
    for (int which = 0; which < 2; ++which) {
      absl::StatusOr<runtime::DeviceBuffer> buffer =
          runtime::DeviceBuffer::Allocate(counts[which] * bytes);
      if (!buffer.ok()) return buffer.status();
      const ptx::ScalarType type =
          which == 0 ? problem.element
                     : problem.b_element.value_or(problem.element);
      if (absl::Status filled = FillRandom(
              buffer->address(), counts[which], type,
              seed + 2 * static_cast<uint32_t>(copy) + which, stream);
          !filled.ok()) {
        return filled;
      }
      (which == 0 ? operands.a : operands.b).push_back(*std::move(buffer));
    }
  }
  return operands;
}

absl::StatusOr<double> MedianMilliseconds(
    const std::function<absl::Status()>& run, CUstream stream, int warmups,
    int repeats, int calls_per_batch) {
  for (int i = 0; i < warmups; ++i) {
    if (absl::Status status = run(); !status.ok()) return status;
  }
  absl::StatusOr<runtime::Event> start = runtime::Event::Create();
  absl::StatusOr<runtime::Event> end = runtime::Event::Create();
  if (!start.ok()) return start.status();
  if (!end.ok()) return end.status();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    if (absl::Status status = start->Record(stream); !status.ok())
      return status;
    for (int i = 0; i < calls_per_batch; ++i) {
      if (absl::Status status = run(); !status.ok()) return status;
    }
    if (absl::Status status = end->Record(stream); !status.ok()) return status;
    absl::StatusOr<float> elapsed = runtime::ElapsedMilliseconds(*start, *end);
    if (!elapsed.ok()) return elapsed.status();
    times.push_back(*elapsed / calls_per_batch);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  return times[times.size() / 2];
}

}  // namespace ptxgen::gemm

namespace ptxgen::gemm {}  // namespace ptxgen::gemm
