#ifndef PTXGEN_TESTS_RUNTIME_TEST_KERNELS_H_
#define PTXGEN_TESTS_RUNTIME_TEST_KERNELS_H_

// The kernels gpu_test runs. kernels_test assembles each of them on any
// machine, so the GPU run never meets a kernel that does not compile.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"

namespace ptxgen::runtime::testing_kernels {

// A generated kernel: data[i] = a * data[i] + b, with a and b baked in.
inline std::string AffineKernel(int a, int b) {
  return absl::StrFormat(
      R"(extern "C" __global__ void affine(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = %d * data[i] + %d;
}
)",
      a, b);
}

// Each block writes its rank in its cluster and the cluster's size.
inline constexpr char kClusterKernel[] = R"(
extern "C" __global__ void cluster_rank(unsigned* out) {
  unsigned rank, size;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = rank;
    out[2 * blockIdx.x + 1] = size;
  }
}
)";

// Fills `words` words of dynamic shared memory with 0, 1, 2, ... and writes
// their sum: right only if all of that shared memory exists.
inline constexpr char kSharedKernel[] = R"(
extern "C" __global__ void shared_sum(unsigned long long* out, unsigned words) {
  extern __shared__ unsigned smem[];
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) smem[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long sum = 0;
    for (unsigned i = 0; i < words; ++i) sum += smem[i];
    *out = sum;
  }
}
)";

// Loads one box through TMA into (1024-byte aligned) shared memory and
// copies the shared-memory bytes out verbatim, swizzle and all. Generated:
// every instruction comes from ptxgen's PTX layer.
absl::StatusOr<std::string> TmaKernel();

}  // namespace ptxgen::runtime::testing_kernels

#endif  // PTXGEN_TESTS_RUNTIME_TEST_KERNELS_H_
