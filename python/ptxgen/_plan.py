"""ptxgen.plan: a GEMM planned for a named device, no GPU needed."""
import ctypes

from ptxgen import _kernel, _library, _problem
from ptxgen._library import refuse

# GemmTarget::H200()'s shared memory per block (227 KiB).
H200_SHARED_BYTES = 227 * 1024


class Plan(_kernel.Kernel):
    """What ptxgen.gemm would run on the target: see Kernel for the fields;
    `grid` is the launch grid on the target."""


def plan(*, m, n, k, dtype="f16", b_dtype=None, out_dtype=None, a_major="k",
         b_major="k", lda=0, ldb=0, ldc=0, ldd=0, batch=1, stride_a=0,
         stride_b=0, stride_c=0, stride_d=0, stride_bias=0, bias=None,
         bias_dtype="f32", activation=None, alpha=1.0, beta=0.0,
         scaling="none", fast_accum=False, record_amax=False, grouping=None,
         expected_m=0, sms=132, shared_bytes=H200_SHARED_BYTES):
    """Plans D = act(alpha * op(A) op(B) + beta * C + bias) for an sm_90a
    device of `sms` SMs and `shared_bytes` of shared memory per block (an
    H200 by default): A [m,k] (a_major="k") or [k,m] ("mn"), B [n,k]
    ("k", as torch.nn.functional.linear's weight) or [k,n] ("mn", as
    torch.matmul's right operand); dtype "f16", "bf16", "e4m3"
    ("float8_e4m3fn"), "e5m2" ("float8_e5m2"), "tf32" (f32 in memory,
    tf32 tensor cores), "s8" ("int8") or "u8" ("uint8"; summed exactly in
    s32), b_dtype B's where it differs (fp8: "e4m3" with "e5m2"; "s8" with
    "u8"), out_dtype "f16", "bf16", "f32", "e4m3" or "e5m2", and from s8/u8
    also "s32" (the exact sums: alpha 1, no C, bias, activation or amax) or
    "s8" (alpha times the sums, rounded with saturation; no C); out_dtype
    None is the library's default: dtype for 16-bit inputs, "bf16" for
    fp8, "f32" for tf32, "s32" for s8/u8; bias None, "m" (one per row) or
    "n" (one per column) of bias_dtype; activation None, "relu", "gelu",
    "gelu_tanh" or "silu"; scaling "none", "tensor" (fp8: alpha times the
    scale_a and scale_b scalars) or "block" (fp8: DeepGEMM's f32 scales of
    A per row and 128 of k, of B per 128 x 128 block; ptxgen.spans gives
    their counts), fast_accum (fp8: wgmma's reduced-precision
    accumulation), record_amax (the largest |D| written to an amax scalar);
    grouping None, "contiguous" or "masked": a grouped GEMM of `batch`
    groups whose rows the kernel reads on the device (ptxgen.grouped_gemm;
    contiguous: m is every group's rows together, masked: each group's
    room), expected_m the rows per group to plan for (0: m / batch
    contiguous, m masked); leading dimensions and batch strides in
    elements, 0 for packed. Raises ptxgen.Error naming the broken rule."""
    problem = _problem.problem(
        "ptxgen.plan", m=m, n=n, k=k, dtype=dtype, b_dtype=b_dtype, out_dtype=out_dtype,
        a_major=a_major, b_major=b_major, lda=lda, ldb=ldb, ldc=ldc, ldd=ldd,
        batch=batch, stride_a=stride_a, stride_b=stride_b, stride_c=stride_c,
        stride_d=stride_d, stride_bias=stride_bias, bias=bias,
        bias_dtype=bias_dtype, activation=activation, alpha=alpha, beta=beta,
        scaling=scaling, fast_accum=fast_accum, record_amax=record_amax,
        grouping=grouping, expected_m=expected_m)
    target = _library.Target(_int32("sms", sms), _int32("shared_bytes", shared_bytes))
    library, handle = _library.loaded()
    pointer = ctypes.c_void_p()
    _library.check(library.ptxgenPlanGemm(handle, ctypes.byref(problem),
                                          ctypes.byref(target), ctypes.byref(pointer)))
    try:
        return _kernel.read(library.ptxgenPlanGetKernelInfo, pointer, True, Plan)
    finally:
        library.ptxgenPlanDestroy(pointer)


def spans(**problem):
    """How many elements each operand of the problem (plan's keywords, less
    sms and shared_bytes) spans as stored, padding and batch gaps included:
    a dict of "a", "b", "c", "d", "bias", "scale_a" and "scale_b" (floats:
    1 each with scaling="tensor", the block scales' counts with "block").
    Raises ptxgen.Error naming the broken rule."""
    return _problem.spans_of(_problem.problem("ptxgen.spans", **problem))


def _int32(keyword, value):
    number = _problem.int64("ptxgen.plan", keyword, value)
    if not -2**31 <= number < 2**31:
        raise refuse(f"ptxgen.plan: {keyword}={number} does not fit in 32 bits")
    return number
