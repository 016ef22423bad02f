// The parameters of every generated GEMM kernel, in the order
// gemm::Gemm::Run passes them (see gen/gemm.h).
extern "C" __global__ void __launch_bounds__({{THREADS}}, 1)
{{KERNEL_NAME}}(const __grid_constant__ TensorMap a_map,
    const __grid_constant__ TensorMap b_map,
    const __grid_constant__ TensorMap c_map,
    unsigned short* __restrict__ c, float* __restrict__ workspace, int m,
    int n, int k, int pair_stores)
