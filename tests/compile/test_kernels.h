#ifndef PTXGEN_TESTS_COMPILE_TEST_KERNELS_H_
#define PTXGEN_TESTS_COMPILE_TEST_KERNELS_H_

// Small include-free CUDA sources with known compile outcomes, shared by the
// compile tests and the cache worker process.

namespace ptxgen::compile::test_kernels {

// Compiles in tens of milliseconds; 4000 bytes of static shared memory.
inline constexpr char kTinyKernel[] = R"(
extern "C" __global__ void scale(float* out, float factor) {
  __shared__ float tile[1000];
  tile[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[999 - threadIdx.x] * factor;
}
)";

// Wants about 40 registers; with -maxrregcount=24 (the smallest sm_90
// allows) it must use exactly 24 and spill to the stack.
inline constexpr char kCrowdedKernel[] = R"(
extern "C" __global__ void crowded(float* out, int n) {
  __shared__ float tile[512];
  float v[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) v[i] = out[i * n];
  float sum = 0;
#pragma unroll
  for (int i = 0; i < 32; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) sum += v[i] * v[(j * 7 + i) % 32];
  }
  tile[threadIdx.x] = sum;
  __syncthreads();
  out[threadIdx.x] = tile[511 - threadIdx.x];
}
)";

// setmaxnreg needs the register count at entry, which only
// __launch_bounds__(N, 1) fixes: without it ptxas ignores it (C7508).
inline constexpr char kSetmaxnregKernel[] = R"(
extern "C" __global__ void producer(float* out) {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
  out[threadIdx.x] = 1.0f;
}
)";

// Reads a wgmma accumulator between commit and wait without pinning it:
// ptxas injects a wait (C7517) and serializes the pipeline (C7511).
inline constexpr char kUnpinnedWgmmaKernel[] = R"(
extern "C" __global__ void unpinned(float* out, unsigned long long desc_a,
                                    unsigned long long desc_b) {
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < 4; ++k) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 "
        "{%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "l"(desc_a), "l"(desc_b + k), "r"(1));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    acc[0] += 1.0f;
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  }
  out[threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
}
)";

// A front-end error on line 3 (the raw string starts with a newline).
inline constexpr char kSyntaxErrorKernel[] = R"(
extern "C" __global__ void broken(float* out) {
  float x = ;
  out[0] = x;
}
)";

// Valid C++ whose inline asm ptxas rejects.
inline constexpr char kBadAsmKernel[] = R"(
extern "C" __global__ void bad_asm(float* out) {
  asm volatile("bogus.instruction %0;" :: "f"(out[0]));
}
)";

}  // namespace ptxgen::compile::test_kernels

#endif  // PTXGEN_TESTS_COMPILE_TEST_KERNELS_H_
