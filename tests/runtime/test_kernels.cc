#include "tests/runtime/test_kernels.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "ptxgen/gen/cuda_source.h"
#include "ptxgen/ptx/mbarrier.h"
#include "ptxgen/ptx/tma.h"

namespace ptxgen::runtime::testing_kernels {

absl::StatusOr<std::string> TmaKernel() {
  const absl::StatusOr<ptx::Statement> load =
      ptx::CpAsyncBulkTensorLoad(ptx::TensorLoad{});
  if (!load.ok()) return load.status();
  const std::pair<const char*, ptx::Statement> functions[] = {
      {"mbarrier_init", ptx::MbarrierInit()},
      {"fence_mbarrier_init", ptx::FenceMbarrierInit()},
      {"expect_bytes", ptx::MbarrierArriveExpectTx()},
      {"load_box", *load},
      {"wait", ptx::MbarrierTryWaitParity()},
  };
  std::string source =
      R"(struct __align__(64) TensorMap { unsigned long long opaque[16]; };
)";
  for (const auto& [name, statement] : functions) {
    absl::StatusOr<std::string> function = gen::DeviceFunction(name, statement);
    if (!function.ok()) return function.status();
    absl::StrAppend(&source, *function, "\n");
  }
  absl::StrAppend(&source, R"(
extern "C" __global__ void tma_box(const __grid_constant__ TensorMap map,
                                   int x, int y, unsigned char* out,
                                   unsigned bytes) {
  extern __shared__ unsigned char raw[];
  const unsigned base = (unsigned)__cvta_generic_to_shared(raw);
  const unsigned tile = (base + 1023u) & ~1023u;  // swizzle pattern repeat
  const unsigned barrier = tile + bytes;
  if (threadIdx.x == 0) {
    mbarrier_init(barrier, 1u);
    fence_mbarrier_init();
    expect_bytes(barrier, bytes);
    load_box(tile, (unsigned long long)&map, {(unsigned)x, (unsigned)y}, barrier);
    wait(barrier, 0u);
  }
  __syncthreads();
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) {
    out[i] = raw[tile - base + i];
  }
}
)");
  return source;
}

}  // namespace ptxgen::runtime::testing_kernels
