#ifndef PTXGEN_TESTS_RUNTIME_TEST_KERNELS_H_
#define PTXGEN_TESTS_RUNTIME_TEST_KERNELS_H_

// The kernels gpu_test runs. kernels_test assembles each of them on any
// machine, so the GPU run never meets a kernel that does not compile.

#include <string>

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
// copies the shared-memory bytes out verbatim, swizzle and all.
inline constexpr char kTmaKernel[] = R"(
struct __align__(64) TensorMap { unsigned long long opaque[16]; };

extern "C" __global__ void tma_box(const __grid_constant__ TensorMap map,
                                   int x, int y, unsigned char* out,
                                   unsigned bytes) {
  extern __shared__ unsigned char raw[];
  unsigned base;
  asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }"
               : "=r"(base) : "l"(raw));
  const unsigned tile = (base + 1023u) & ~1023u;  // swizzle pattern repeat
  const unsigned barrier = tile + bytes;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(barrier));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(barrier), "r"(bytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        :: "r"(tile), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x),
           "r"(y), "r"(barrier) : "memory");
    unsigned done = 0;
    while (!done) {
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;"
          " selp.u32 %0, 1, 0, p; }"
          : "=r"(done) : "r"(barrier) : "memory");
    }
  }
  __syncthreads();
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) {
    out[i] = raw[tile - base + i];
  }
}
)";
}  // namespace ptxgen::runtime::testing_kernels

#endif  // PTXGEN_TESTS_RUNTIME_TEST_KERNELS_H_
