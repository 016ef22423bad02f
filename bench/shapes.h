#ifndef PTXGEN_BENCH_SHAPES_H_
#define PTXGEN_BENCH_SHAPES_H_

// The benchmark suites' problems, f16 unless a benchmark sets the type:
// gemm_bench times them beside cuBLAS, compile_bench compiles the kernels
// the heuristic picks for them.

#include <vector>

#include "ptxgen/gemm/gemm.h"

namespace ptxgen::gemm {

// The benchmark suite of the GEMM issues.
inline std::vector<GemmProblem> SuiteShapes() {
  return {{8192, 8192, 8192},    {4096, 4096, 4096}, {2048, 2048, 2048},
          {16384, 16384, 16384}, {6144, 6144, 6144}, {128, 8192, 8192},
          {8192, 8192, 1024},    {1024, 1024, 8192}, {3000, 5000, 2048},
          {7777, 3333, 4104}};
}

// The shapes SuiteShapes() hardly has, where a large tile idles or few
// tiles fill the GPU and memory rather than the tensor cores sets the
// floor: projections of Llama-3 8B and 70B and of 13B-class models
// (hidden 4096, 5120, 8192; MLP 14336, 28672), with m x n x k = tokens x
// out x in features.
inline std::vector<GemmProblem> SmallShapes() {
  return {
      // Decode: m of 1..128 tokens against a whole weight matrix.
      {1, 4096, 4096},
      {2, 5120, 5120},
      {4, 28672, 4096},
      {8, 4096, 14336},
      {16, 8192, 8192},
      {32, 10240, 8192},
      {64, 8192, 28672},
      {128, 28672, 8192},
      // The same transposed (weights as A, tokens in n), as column-major
      // callers pose it: small n, which only swapping A and B fills.
      {4096, 1, 4096},
      {6144, 4, 4096},
      {14336, 8, 4096},
      {4096, 32, 14336},
      {28672, 64, 8192},
      {8192, 128, 28672},
      // Short k (attention scores over a 128 head, LoRA rank 64, a 512
      // latent): few k-steps per tile, writing D dominates.
      {1024, 4096, 512},
      {4096, 4096, 256},
      {8192, 8192, 1024},
      {4096, 4096, 128},
      {8192, 14336, 64},
      {16384, 5120, 512},
      // A small output over a long k (weight gradients, k = tokens): fewer
      // tiles than SMs unless k is split.
      {1024, 1024, 8192},
      {512, 1024, 16384},
      {1024, 512, 14336},
      {256, 256, 28672},
      {1024, 1024, 32768},
      {1024, 256, 65536},
  };
}

}  // namespace ptxgen::gemm

#endif  // PTXGEN_BENCH_SHAPES_H_
