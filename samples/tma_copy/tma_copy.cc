// A kernel of your own from ptxgen's PTX layer: one TMA copy of a 2-D box
// into shared memory, completed on an mbarrier.
//
//   tma_copy
//
// Each PTX instruction comes from an emitter of include/ptxgen/ptx/ (a
// ptx::Statement, its operands typed slots) and becomes a device function
// through gen::DeviceFunction; the kernel around them is plain CUDA C++
// text, the way lib/gen composes the GEMM kernels. compile::CompileCuda
// compiles it with NVRTC for sm_90a; the sample prints the source and the
// PTX's TMA and mbarrier instructions. On a Hopper GPU the runtime layer
// loads it, encodes the tensor map and launches it, and the host checks the
// copied box. Without one it stops after compiling, saying why (exit 0).
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gen/cuda_source.h"
#include "ptxgen/ptx/mbarrier.h"
#include "ptxgen/ptx/statement.h"
#include "ptxgen/ptx/tma.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/module.h"
#include "ptxgen/runtime/tensor_map.h"

namespace {

namespace ptx = ptxgen::ptx;
namespace runtime = ptxgen::runtime;

// A 96 x 128 tensor of 16-bit elements, row-major, and the 32 x 64 box one
// copy takes, at column 32 and row 80: its rows 96..111 lie past the
// tensor's edge, where TMA reads zeros. Coordinates run innermost first.
constexpr int kRows = 96, kCols = 128;
constexpr int kBoxRows = 32, kBoxCols = 64;
constexpr int kBoxX = 32, kBoxY = 80;
constexpr int kBoxBytes = kBoxRows * kBoxCols * 2;
constexpr int kThreads = 128;
constexpr char kKernelName[] = "tma_copy";

// The instructions the kernel calls, each as the PTX layer builds it.
absl::StatusOr<std::string> DeviceFunctions() {
  const std::pair<const char*, absl::StatusOr<ptx::Statement>> functions[] = {
      {"mbarrier_init", ptx::MbarrierInit()},
      {"fence_mbarrier_init", ptx::FenceMbarrierInit()},
      {"mbarrier_arrive_expect_tx", ptx::MbarrierArriveExpectTx()},
      {"tma_load_2d", ptx::CpAsyncBulkTensorLoad(ptx::TensorLoad{/*rank=*/2})},
      {"mbarrier_wait", ptx::MbarrierTryWaitParity()},
  };
  std::string text;
  for (const auto& [name, statement] : functions) {
    if (!statement.ok()) return statement.status();  // e.g. an illegal rank
    absl::StatusOr<std::string> function =
        ptxgen::gen::DeviceFunction(name, *statement);
    if (!function.ok()) return function.status();
    absl::StrAppend(&text, *function, "\n");
  }
  return text;
}

// The whole translation unit. Generated code includes no headers, so the
// tensor map is a 128-byte, 64-byte-aligned struct like CUtensorMap.
absl::StatusOr<std::string> KernelSource() {
  absl::StatusOr<std::string> functions = DeviceFunctions();
  if (!functions.ok()) return functions.status();
  return absl::StrFormat(
      R"(// tma_copy: one %dx%d box of a 2-D tensor, TMA -> shared -> global.
constexpr int kBoxElements = %d;
constexpr unsigned kBoxBytes = %d;

struct __align__(64) TensorMap {
  unsigned long long opaque[16];
};

%sextern "C" __global__ void __launch_bounds__(%d)
%s(const __grid_constant__ TensorMap map, unsigned short* out) {
  // TMA writes whole 128-byte lines of shared memory.
  __shared__ __align__(128) unsigned short box[kBoxElements];
  __shared__ __align__(8) unsigned long long barrier;
  // The PTX layer addresses shared memory by 32-bit shared-window offsets.
  const unsigned box_address = (unsigned)__cvta_generic_to_shared(box);
  const unsigned barrier_address = (unsigned)__cvta_generic_to_shared(&barrier);

  if (threadIdx.x == 0) {
    mbarrier_init(barrier_address, 1u);  // one arrival per phase: thread 0's
    fence_mbarrier_init();               // before the TMA unit may signal it
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    // The arrival also says how many bytes the phase waits for; then the
    // copy, which counts its bytes (zero-filled ones too) on the barrier.
    mbarrier_arrive_expect_tx(barrier_address, kBoxBytes);
    tma_load_2d(box_address, (unsigned long long)&map, {%du, %du}, barrier_address);
  }
  // Phase 0 completes once the arrival and every byte are in; waiting on it
  // is also what makes the box visible to each thread.
  mbarrier_wait(barrier_address, 0u);
  for (int i = threadIdx.x; i < kBoxElements; i += blockDim.x) out[i] = box[i];
}
)",
      kBoxRows, kBoxCols, kBoxRows * kBoxCols, kBoxBytes, *functions, kThreads,
      kKernelName, kBoxX, kBoxY);
}

// The PTX lines of the TMA copy and the barrier, which NVRTC keeps as the
// inline asm wrote them.
void PrintTmaPtx(absl::string_view ptx_text) {
  absl::PrintF("\n== PTX: the TMA and mbarrier instructions ==\n");
  for (absl::string_view line : absl::StrSplit(ptx_text, '\n')) {
    const absl::string_view code = absl::StripAsciiWhitespace(line);
    if (absl::StrContains(code, "cp.async.bulk") ||
        absl::StrContains(code, "mbarrier")) {
      absl::PrintF("  %s\n", code);
    }
  }
}

// Element (r, c) of the tensor holds r * kCols + c + 1: never 0, so TMA's
// zero fill is told apart. The bits are copied, never computed with.
uint16_t TensorElement(int row, int column) {
  return static_cast<uint16_t>(row * kCols + column + 1);
}

// Element (r, c) of the box as the copy must deliver it.
uint16_t ExpectedBoxElement(int r, int c) {
  const int row = kBoxY + r, column = kBoxX + c;
  return row < kRows && column < kCols ? TensorElement(row, column) : 0;
}

// Uploads the tensor, launches one CTA and returns the box it wrote out.
absl::StatusOr<std::vector<uint16_t>> RunOnGpu(
    const ptxgen::compile::CompiledModule& compiled) {
  // First, so that it outlives the module and buffers made in it.
  absl::StatusOr<runtime::PrimaryContext> context =
      runtime::PrimaryContext::Retain(0);
  if (!context.ok()) return context.status();
  if (absl::Status current = context->SetCurrent(); !current.ok())
    return current;
  absl::StatusOr<runtime::Module> module = runtime::Module::LoadCubin(compiled);
  if (!module.ok()) return module.status();
  absl::StatusOr<runtime::Function> kernel = module->GetFunction(kKernelName);
  if (!kernel.ok()) return kernel.status();

  std::vector<uint16_t> tensor;
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) tensor.push_back(TensorElement(r, c));
  }
  absl::StatusOr<runtime::DeviceBuffer> input =
      runtime::DeviceBuffer::Allocate(tensor.size() * 2);
  if (!input.ok()) return input.status();
  if (absl::Status s = input->CopyFromHost(tensor.data(), tensor.size() * 2);
      !s.ok())
    return s;
  absl::StatusOr<runtime::DeviceBuffer> output =
      runtime::DeviceBuffer::Allocate(kBoxBytes);
  if (!output.ok()) return output.status();
  // 0xffff everywhere, which no element holds: an unwritten one shows.
  if (absl::Status s = output->Memset8(0xff); !s.ok()) return s;

  // The map describes the tensor and the box; the kernel names only where
  // the box starts. Lists run innermost dimension first.
  runtime::TensorMapSpec spec;
  spec.element = ptx::ScalarType::kF16;
  spec.global_address = input->address();
  spec.dims = {kCols, kRows};
  spec.strides_bytes = {kCols * 2};
  spec.box = {kBoxCols, kBoxRows};
  spec.swizzle = ptx::Swizzle::kNone;  // the box lands row-major, as it is
  absl::StatusOr<CUtensorMap> map = runtime::EncodeTensorMap(spec);
  if (!map.ok()) return map.status();

  CUdeviceptr out = output->address();
  void* args[] = {&*map, &out};
  runtime::LaunchConfig launch;
  launch.block = {kThreads, 1, 1};
  if (absl::Status s = kernel->Launch(launch, args); !s.ok()) return s;
  if (absl::Status s = runtime::SynchronizeCurrentContext(); !s.ok()) return s;
  std::vector<uint16_t> box(kBoxRows * kBoxCols);
  if (absl::Status s = output->CopyToHost(box.data(), kBoxBytes); !s.ok())
    return s;
  return box;
}

// Compiles always; runs and checks where a Hopper GPU is. False: a mismatch.
absl::StatusOr<bool> Main() {
  absl::StatusOr<std::string> source = KernelSource();
  if (!source.ok()) return source.status();
  absl::PrintF("== The CUDA source, its instructions from the PTX layer ==\n%s",
               *source);
  absl::StatusOr<ptxgen::compile::CompiledModule> compiled =
      ptxgen::compile::CompileCuda(kKernelName, *source,
                                   ptxgen::compile::CompileOptions{});
  if (!compiled.ok()) return compiled.status();
  PrintTmaPtx(compiled->ptx);
  for (const ptxgen::compile::KernelResources& r : compiled->resources) {
    absl::PrintF(
        "\nptxas: %s, %d registers, %d bytes of static shared memory\n",
        r.kernel, r.registers, r.static_shared_bytes);
  }
  if (const absl::Status here = runtime::CheckDeviceRuns(0, "sm_90a");
      !here.ok()) {
    absl::PrintF(
        "\nno GPU: %s\nstopping after compilation: the copy is not run\n",
        here.message());
    return true;
  }
  absl::StatusOr<std::vector<uint16_t>> box = RunOnGpu(*compiled);
  if (!box.ok()) return box.status();
  int mismatches = 0;
  for (int r = 0; r < kBoxRows; ++r) {
    for (int c = 0; c < kBoxCols; ++c) {
      const uint16_t got = (*box)[r * kBoxCols + c],
                     expected = ExpectedBoxElement(r, c);
      if (got != expected && ++mismatches <= 5) {
        absl::PrintF("box (%d, %d): got %#06x, expected %#06x\n", r, c, got,
                     expected);
      }
    }
  }
  absl::PrintF(
      "\ncopied the %dx%d box at (x %d, y %d): %d of %d elements differ\n%s\n",
      kBoxRows, kBoxCols, kBoxX, kBoxY, mismatches, kBoxRows * kBoxCols,
      mismatches == 0 ? "PASS" : "FAIL");
  return mismatches == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "tma_copy: unknown flag '%s' (it takes none)\n",
                 argv[1]);
    return 2;
  }
  absl::StatusOr<bool> passed = Main();
  if (!passed.ok()) {
    std::fflush(stdout);
    std::fprintf(stderr, "tma_copy: %s\n",
                 std::string(passed.status().message()).c_str());
    return 1;
  }
  return *passed ? 0 : 1;
}
