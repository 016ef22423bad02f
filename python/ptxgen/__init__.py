"""ptxgen from Python: Hopper (sm_90a) GEMM kernels generated at run time.

    import ptxgen
    p = ptxgen.plan(m=4096, n=4096, k=4096, dtype="bf16", b_major="mn",
                    out_dtype="f32", bias="n", activation="gelu")  # no GPU needed
    p.source, p.ptx, p.resources, p.config, p.kernel_name

    y = ptxgen.gemm(x, w.t(), bias=b, activation="gelu")  # = gelu(F.linear(x, w, b))

    p8 = ptxgen.plan(m=8192, n=8192, k=8192, dtype="e4m3", scaling="tensor")
    y8 = ptxgen.gemm(x8, w8.t(), scale_a=sa, scale_b=sb)  # float8_e4m3fn -> bf16
    yb = ptxgen.gemm(x8, w8.t(), scaling="block", scale_a=sa_blocks,
                     scale_b=sb_blocks)   # DeepGEMM's scales, counts: ptxgen.spans
    y32 = ptxgen.gemm(x32, w32.t(), dtype="tf32")        # float32 on tf32 cores
    yi = ptxgen.gemm(xi, wi.t())                         # int8 -> int32, the exact sums
    yq = ptxgen.gemm(xi, wi.t(), out_dtype="s8", alpha=0.05)  # alpha times them in int8

ptxgen.gemm takes torch tensors, and other CUDA arrays through
__cuda_array_interface__ or DLPack (__dlpack__, __dlpack_device__).

A pure-Python package over libptxgen.so's C API (ctypes): the library is
taken from $PTXGEN_LIBRARY (an absolute path), else from beside this package
(tools/python_install.sh puts it there). Every refusal is a ptxgen.Error
carrying the library's message, which names the rule that was broken.
"""
from ptxgen._gemm import gemm
from ptxgen._kernel import Kernel
from ptxgen._library import Error
from ptxgen._plan import Plan, plan, spans


def version():
    """The library's version, "0.1.0"."""
    from ptxgen import _library
    library, _ = _library.loaded()
    return library.ptxgenGetVersionString().decode()


__all__ = ["Error", "Kernel", "Plan", "gemm", "plan", "spans", "version"]
