"""ptxgen from Python: Hopper (sm_90a) GEMM and attention kernels generated
at run time.

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

    # Mixture-of-experts: the groups' rows read on the device, never the host.
    y = ptxgen.grouped_gemm(x, w, offs)           # torch._grouped_mm(x, w, offs)
    y = ptxgen.grouped_gemm(x3, w, masked_m=counts, expected_m=16)   # masked

    # Attention forward: FlashAttention's shapes, or SDPA's with layout="bhsd".
    pa = ptxgen.plan_attention(batch=2, heads=32, kv_heads=8, seq=4096,
                               head_dim=128, causal=True)   # no GPU needed
    o = ptxgen.attention(q, k, v, causal=True)    # q [batch, seq, heads, dim]
    o, lse = ptxgen.attention(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                              max_seqlen_q=512, max_seqlen_k=512,
                              return_lse=True)    # q [total, heads, dim]

ptxgen.gemm takes torch tensors, and other CUDA arrays through
__cuda_array_interface__ or DLPack (__dlpack__, __dlpack_device__). In code
torch.compile traces it is the operator torch.ops.ptxgen.gemm, which CUDA
graphs capture (torch.ops.ptxgen.gemm_amax returns amax too;
torch.ops.ptxgen.grouped_gemm is ptxgen.grouped_gemm's, torch.ops.ptxgen.attention
ptxgen.attention's); ptxgen imports torch only once the program has.

A pure-Python package over libptxgen.so's C API (ctypes): the library is
taken from $PTXGEN_LIBRARY (an absolute path), else from beside this package
(tools/python_install.sh puts it there). Every refusal is a ptxgen.Error
carrying the library's message, which names the rule that was broken.
"""
import sys

from ptxgen import _attention, _gemm, _grouped
from ptxgen._kernel import Kernel
from ptxgen._library import Error
from ptxgen._plan import Plan, plan, plan_attention, spans

# torch imported first: its operators now (no cost but theirs); else code
# torch.compile traces registers them at its first call of gemm.
if "torch" in sys.modules:
    from ptxgen import _torch_ops  # noqa: F401  (registers torch.ops.ptxgen)


def gemm(a, b, **options):
    """out = activation(alpha * a @ b + beta * c + bias), returned.

    gemm(a, b, *, out=None, c=None, bias=None, bias_along="n",
         activation=None, alpha=1.0, beta=0.0, out_dtype=None, stream=None,
         dtype=None, scale_a=None, scale_b=None, scale_d=None, amax=None,
         fast_accum=False, scaling=None)

    a [m,k] and b [k,n] (or [batch,m,k] and [batch,k,n]) of f16 or bf16,
    each row- or column-major with any leading dimension, or of fp8
    (torch.float8_e4m3fn, float8_e5m2; a and b may mix the two) with b
    K-major (b = w.t() of a [n,k] w), or float32 with dtype="tf32" (tf32
    tensor cores; K-major b too), or of 8-bit integers (torch.int8, uint8;
    a and b may mix the two; K-major b too) summed exactly in s32; out and
    c [m,n] row-major, of out_dtype ("f16", "bf16", "f32", "e4m3", "e5m2";
    from integers also "s32", the exact sums, with alpha 1 and no c, bias,
    activation or amax, and "s8", alpha times the sums rounded with
    saturation, with no c; default the library's: a's type for 16-bit
    inputs, "bf16" for fp8, "f32" for tf32, "s32" for integers), allocated
    when out is None (torch tensors, CuPy arrays; give out= with DLPack
    arrays); bias of m (bias_along="m") or n ("n", as linear's) values;
    activation None, "relu", "gelu", "gelu_tanh" or "silu". fp8: scale_a
    and scale_b (one float32 each, on the device) multiply alpha, as
    cuBLASLt's scale pointers (either given makes the GEMM scaled: give
    both), scale_d multiplies an fp8 out before its rounding; with
    scaling="block" scale_a and scale_b are instead DeepGEMM's block
    scales, contiguous float32 arrays of ptxgen.spans' counts (A's per row
    and 128 of k, B's per 128 x 128 block; out f16, bf16 or f32);
    fast_accum accumulates in wgmma's reduced precision. amax (one
    float32) receives the largest |out| before scale_d. Runs asynchronously
    on `stream`, else the current torch (CuPy) stream, else the default
    stream. Raises ptxgen.Error, naming the broken rule.

    In code torch.compile traces it is the operator torch.ops.ptxgen.gemm
    (gemm_amax with amax=): no graph break, and CUDA graphs capture it.
    There stream= is refused (the compiled code's stream is used), and
    out= and amax= are copied into from the operator's new tensors: under
    mode="reduce-overhead", CUDA-graph trees skip a graph that writes an
    input other than a parameter, a buffer or an earlier graph's output,
    so take the returned tensors there.
    """
    # The keywords pass through unnamed: naming all 17 again costs about a
    # microsecond a call. Tracing is told from eager work by torch's own flag, read only
    # once torch is imported.
    torch = sys.modules.get("torch")
    if torch is not None and torch.compiler.is_compiling():
        from ptxgen._torch_ops import gemm as traced
        return traced(a, b, **options)
    return _gemm.gemm(a, b, **options)


gemm.__wrapped__ = _gemm.gemm  # inspect.signature, help(): its keywords


def grouped_gemm(a, b, offs=None, **options):
    """out = activation(alpha * a_g @ b[g] + bias[g]) for each group g of a
    grouped GEMM (mixture-of-experts layers), returned; shaped as
    torch._grouped_mm(a, b, offs).

    grouped_gemm(a, b, offs=None, *, masked_m=None, expected_m=None,
                 bias=None, out_dtype=None, activation=None, alpha=1.0,
                 scale_a=None, scale_b=None, out=None, stream=None,
                 dtype=None, fast_accum=False, scaling=None)

    Contiguous, with offs: a [total_m, k] holds every group's rows, group
    after group; b [groups, k, n]; offs int32 [groups] on the device, where
    each group's rows end (cumulative: group 0's rows are 0 to offs[0],
    group g's offs[g-1] to offs[g]); out [total_m, n]. Masked, with
    masked_m: a [groups, max_m, k], b [groups, k, n], masked_m int32
    [groups] on the device, the rows each group uses from the top of its
    max_m (DeepGEMM's masked_m); out [groups, max_m, n]. Rows of out no
    group covers (past offs[groups-1], past a group's masked_m) are not
    written; counts past a's rows are clipped to them. b is [groups, k, n] as
    torch._grouped_mm's mat_b: contiguous along n (torch.stack of [k, n]
    matrices), or along k (w.transpose(1, 2) of [groups, n, k] weights,
    as F.linear's); a, b and out are read as ptxgen.gemm reads them, of the
    same types (bf16 and f16; fp8 with K-major b, scale_a and scale_b
    per-tensor scalars or, with scaling="block", DeepGEMM's block scales;
    tf32 with dtype="tf32"; s8/u8).

    The counts are read by the kernel only, never on the host (no copy, no
    synchronization): a call may be captured in a CUDA graph and replayed
    with new counts copied into the same offs or masked_m. expected_m is
    the rows per group to plan tiles for (None: total_m / groups
    contiguous, max_m masked), at most a's rows. bias [groups, n] (one row
    per group) or [n] (shared), along n; activation None, "relu", "gelu",
    "gelu_tanh" or "silu"; out_dtype, out, stream and the rest as
    ptxgen.gemm's. Raises ptxgen.Error, naming the broken rule.

    In code torch.compile traces it is the operator
    torch.ops.ptxgen.grouped_gemm (out= copied into from its new tensor;
    stream= refused), as ptxgen.gemm's.
    """
    torch = sys.modules.get("torch")
    if torch is not None and torch.compiler.is_compiling():
        from ptxgen._torch_ops import grouped_gemm as traced
        return traced(a, b, offs, **options)
    return _grouped.grouped_gemm(a, b, offs, **options)


grouped_gemm.__wrapped__ = _grouped.grouped_gemm


def attention(q, k, v, **options):
    """out = softmax(q @ k^T * scale + mask) @ v for each sequence and query
    head, returned (with return_lse, (out, lse)).

    attention(q, k, v, *, causal=False, scale=None, cu_seqlens_q=None,
              cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None,
              layout="bshd", out=None, return_lse=False, stream=None)

    Fixed lengths: q [batch, seq_q, heads_q, head_dim] and k, v [batch,
    seq_k, heads_kv, head_dim] (layout "bshd", FlashAttention's), or q
    [batch, heads_q, seq_q, head_dim] and k, v [batch, heads_kv, seq_k,
    head_dim] ("bhsd", torch's scaled_dot_product_attention's). Variable
    lengths: q [total_q, heads_q, head_dim] and k, v [total_k, heads_kv,
    head_dim], the sequences one after another, sequence b at rows
    cu_seqlens_q[b] to cu_seqlens_q[b+1] of q (cu_seqlens_k of k and v):
    int32 arrays of batch + 1 offsets on the device, which only the kernel
    reads (a CUDA graph replays a call with new lengths), with the longest
    sequences max_seqlen_q and max_seqlen_k (ints) to plan for. The kernel
    skips a sequence whose offsets are out of order, outside q or k, or
    longer than max_seqlen_q: its rows of out and the LSE are left as they
    were, and nothing outside the arrays is read or written. f16 or bf16,
    all of one type; head_dim a multiple of 16, at most 256; heads_q a
    multiple of heads_kv (grouped-query attention). Strides come from the
    arrays: head_dim contiguous, the rest any that q, k, v and out nest alike
    (a transposed view reads as the memory it is). causal masks the keys
    after each query row, aligned to the bottom-right corner when seq_q !=
    seq_k (FlashAttention's; a row that sees no key gets out 0 and LSE
    +inf); scale multiplies q @ k^T (None: 1/sqrt(head_dim)). out is
    allocated like q when None (torch tensors, CuPy arrays; give out= with
    DLPack arrays); return_lse also returns the float32 log-sum-exp of each
    query row, [batch, heads_q, seq_q] or with variable lengths [heads_q,
    total_q]. Runs asynchronously on `stream`, else the current torch (CuPy)
    stream, else the default stream; a repeated problem prepares nothing.
    Raises ptxgen.Error, naming the broken rule.

    In code torch.compile traces it is the operator torch.ops.ptxgen.attention
    (attention_lse with return_lse=): no graph break, and CUDA graphs
    capture it; out= is copied into from the operator's new tensor, and
    stream= is refused, as ptxgen.gemm's.
    """
    torch = sys.modules.get("torch")
    if torch is not None and torch.compiler.is_compiling():
        from ptxgen._torch_ops import attention as traced
        return traced(q, k, v, **options)
    return _attention.attention(q, k, v, **options)


attention.__wrapped__ = _attention.attention


def version():
    """The library's version, "0.1.0"."""
    from ptxgen import _library
    library, _ = _library.loaded()
    return library.ptxgenGetVersionString().decode()


__all__ = ["Error", "Kernel", "Plan", "attention", "gemm", "grouped_gemm", "plan",
           "plan_attention", "spans", "version"]
