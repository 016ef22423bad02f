"""ptxgen.gemm from PyTorch, on a Hopper GPU (H100, H200): a linear layer with
a fused bias and GELU, checked against PyTorch and timed beside it.

    bash tools/python_install.sh && python3 samples/python/gemm_torch.py
"""
import torch
import torch.nn.functional as F

import ptxgen

x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)  # activations
w = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)  # weight [out, in]
b = torch.randn(8192, device="cuda", dtype=torch.bfloat16)

# The layouts come from the strides: w.t() is the K-major B of F.linear, a
# contiguous [k, n] tensor would be an MN-major one. It runs on torch's
# current stream, as torch's own kernels do.
y = ptxgen.gemm(x, w.t(), bias=b, activation="gelu")
expected = F.gelu(F.linear(x, w, b).float()).to(torch.bfloat16)
print("largest difference from torch:", (y.float() - expected.float()).abs().max().item())

# Also: out= (and c= with beta), out_dtype="f32", bias_along="m",
# activation="relu" | "gelu_tanh" | "silu", [batch, m, k] tensors.
ptxgen.gemm(x, w.t(), out=torch.empty(8192, 8192, device="cuda"), out_dtype="f32")

# Generating and compiling happen on the first call of a shape (and are
# cached on disk); later calls only launch.
def milliseconds(function, repeats=20):
    function()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        function()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / repeats

flops = 2 * 8192 * 8192 * 4096
for name, run in [("ptxgen.gemm(x, w.t(), bias=b, activation='gelu')",
                   lambda: ptxgen.gemm(x, w.t(), bias=b, activation="gelu")),
                  ("F.gelu(F.linear(x, w, b))", lambda: F.gelu(F.linear(x, w, b))),
                  ("ptxgen.gemm(x, w.t())", lambda: ptxgen.gemm(x, w.t())),
                  ("x @ w.t()", lambda: x @ w.t())]:
    ms = milliseconds(run)
    print(f"{name:50} {ms:7.3f} ms  {flops / ms / 1e9:6.0f} TFLOP/s")
