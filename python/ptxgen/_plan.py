"""ptxgen.plan and ptxgen.plan_attention: a GEMM or an attention planned for a
named device, no GPU needed."""
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
    return _planned("ptxgen.plan", "ptxgenPlanGemm", problem, sms, shared_bytes)


def plan_attention(*, batch, heads, seq, head_dim, kv_heads=None, seq_k=None, dtype="bf16",
                   causal=False, scale=None, layout="bshd", total_q=None, total_k=None,
                   sms=132, shared_bytes=H200_SHARED_BYTES):
    """Plans attention forward as ptxgen.attention would run it, for an
    sm_90a device of `sms` SMs and `shared_bytes` of shared memory per
    block (an H200 by default), no GPU needed: `batch` sequences of `seq`
    query rows and `seq_k` keys (None: seq), `heads` query heads sharing
    `kv_heads` K/V heads (None: heads), `head_dim` of dtype "f16" or
    "bf16", causal (bottom-right aligned), scale (None: 1/sqrt(head_dim)),
    packed tensors in `layout` "bshd" ([batch, seq, heads, head_dim]) or
    "bhsd". Variable lengths when total_q and total_k (the rows of all
    sequences) are given: seq and seq_k are then the longest sequence's.
    The Plan's grid is the launch's CTAs. Raises ptxgen.Error naming the
    broken rule."""
    function = "ptxgen.plan_attention"
    problem = _library.AttentionProblem()
    problem.batch = _problem.int64(function, "batch", batch)
    problem.heads_q = _problem.int64(function, "heads", heads)
    if kv_heads is None:
        kv_heads = heads
    elif _problem.int64(function, "kv_heads", kv_heads) == 0:
        # The C struct's 0 means heads; here, as on the command line, that
        # is said by leaving kv_heads out.
        raise refuse(f"{function}: kv_heads=0 names no heads: give the K and V heads, or "
                     "None for as many as heads")
    problem.heads_kv = _problem.int64(function, "kv_heads", kv_heads)
    problem.seq_q = _problem.int64(function, "seq", seq)
    problem.seq_k = _problem.int64(function, "seq_k", seq if seq_k is None else seq_k)
    problem.head_dim = _problem.int64(function, "head_dim", head_dim)
    problem.element_type = _library.DATA_TYPES[_problem.attention_dtype(function, dtype)]
    problem.causal = _problem._flag(function, "causal", causal)
    if scale is not None:
        scale = _problem.float_value(function, "scale", scale)
        if scale == 0:
            raise refuse(f"{function}: scale={scale} must be finite and positive "
                         "(None: 1/sqrt(head_dim))")
    problem.scale = 0.0 if scale is None else scale  # 0: 1/sqrt(head_dim)
    problem.layout = _problem._choice(function, "layout", layout, _library.ATTENTION_LAYOUTS)
    if (total_q is None) != (total_k is None):
        raise refuse(f"{function}: variable lengths need both total_q and total_k")
    if total_q is not None:
        problem.variable_lengths = 1
        problem.total_q = _problem.int64(function, "total_q", total_q)
        problem.total_k = _problem.int64(function, "total_k", total_k)
    return _planned(function, "ptxgenPlanAttention", problem, sms, shared_bytes)


def spans(**problem):
    """How many elements each operand of the problem (plan's keywords, less
    sms and shared_bytes) spans as stored, padding and batch gaps included:
    a dict of "a", "b", "c", "d", "bias", "scale_a" and "scale_b" (floats:
    1 each with scaling="tensor", the block scales' counts with "block").
    Raises ptxgen.Error naming the broken rule."""
    function = "ptxgen.spans"
    taken = _problem.PROBLEM_KEYWORDS
    unknown = sorted(set(problem) - set(taken))
    if unknown:
        raise refuse(f"{function}: {unknown[0]} is not a keyword of a problem; it takes "
                     f"{', '.join(taken)}")
    missing = [name for name in ("m", "n", "k") if name not in problem]
    if missing:
        raise refuse(f"{function}: {', '.join(missing)} missing: m, n and k are required")
    return _problem.spans_of(_problem.problem(function, **problem))


def _planned(function, entry, problem, sms, shared_bytes):
    """The Plan of `problem` by the C API's `entry` (ptxgenPlanGemm or
    ptxgenPlanAttention) on a target of `sms` SMs and `shared_bytes`."""
    target = _library.Target(_int32(function, "sms", sms),
                             _int32(function, "shared_bytes", shared_bytes))
    library, handle = _library.loaded()
    pointer = ctypes.c_void_p()
    _library.check(getattr(library, entry)(handle, ctypes.byref(problem),
                                           ctypes.byref(target), ctypes.byref(pointer)))
    try:
        return _kernel.read(library.ptxgenPlanGetKernelInfo, pointer, True, Plan)
    finally:
        library.ptxgenPlanDestroy(pointer)


def _int32(function, keyword, value):
    number = _problem.int64(function, keyword, value)
    if not -2**31 <= number < 2**31:
        raise refuse(f"{function}: {keyword}={number} does not fit in 32 bits")
    return number
