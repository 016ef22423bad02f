"""ptxgen's GEMM and attention as PyTorch operators, so that torch.compile
traces a call of ptxgen.gemm (attention) into its graph (no graph break) and
CUDA graphs, CUDA-graph trees (mode="reduce-overhead") included, capture it:

    torch.ops.ptxgen.gemm(a, b, c=None, bias=None, scale_a=None, scale_b=None,
                          scale_d=None, bias_along="n", activation=None,
                          alpha=1.0, beta=0.0, out_dtype=None, dtype=None,
                          fast_accum=False, scaling=None) -> out
    torch.ops.ptxgen.gemm_amax(<the same>) -> (out, amax)
    torch.ops.ptxgen.grouped_gemm(a, b, offs=None, masked_m=None, bias=None,
                                  scale_a=None, scale_b=None, expected_m=None,
                                  activation=None, alpha=1.0, out_dtype=None,
                                  dtype=None, fast_accum=False,
                                  scaling=None) -> out
    torch.ops.ptxgen.attention(q, k, v, cu_seqlens_q=None, cu_seqlens_k=None,
                               max_seqlen_q=None, max_seqlen_k=None,
                               causal=False, scale=None,
                               layout="bshd") -> out
    torch.ops.ptxgen.attention_lse(<the same>) -> (out, lse)

All are functional: out (and amax, a 0-d float32; lse, float32) are new
tensors, as ptxgen.gemm (grouped_gemm, attention) allocates them. The
scaled forms (scale_a, scale_b, scale_d, scaling "tensor" or "block") are
the same operator with its optional scales given. amax is an output of its own operator, not a mutated
argument, because the GEMM only writes it (each run sets it, then its
tiles raise it): a functional operator needs no functionalization pass,
and a compiled graph that keeps amax inside (returns it, feeds it on)
mutates none of its inputs, which CUDA-graph trees would otherwise skip.

The operators are registered when this module is imported, which ptxgen
does when torch was imported before ptxgen, else the first time code
compiled by torch.compile calls ptxgen.gemm, grouped_gemm or attention.
Importing it without torch installed gives output_of and grouped_output_of
only, the rules the fake implementations follow (attention's:
_attention.outputs_of).
"""
from ptxgen import _arrays, _attention, _gemm, _grouped, _problem
from ptxgen._library import refuse

try:
    import torch
except ImportError:  # the pure part (output_of) still serves
    torch = None

_FUNCTION = "ptxgen.gemm"
_GROUPED = "ptxgen.grouped_gemm"
_ATTENTION = "ptxgen.attention"


def output_of(a_shape, a_dtype, b_shape, out_dtype=None, dtype=None):
    """(shape, torch dtype name) of the out ptxgen.gemm allocates for a of
    `a_shape` and `a_dtype` and b of `b_shape`: [m,n] of a [m,k] and b
    [k,n], [batch,m,n] of [batch,m,k] and [batch,k,n]; of type `out_dtype`
    when given, else the library's default for a's type (f32 for float32
    arrays with dtype="tf32"). Types are anything ptxgen reads as one: "bf16",
    torch.bfloat16, "torch.bfloat16". Sizes may be torch's symbolic ones:
    none is compared. Raises ptxgen.Error for what has no such out."""
    rank = len(a_shape)
    if rank not in (2, 3) or len(b_shape) != rank:
        raise refuse(f"{_FUNCTION}: a has shape {tuple(a_shape)} and b {tuple(b_shape)}; "
                     "ptxgen takes [m,k] and [k,n], or [batch,m,k] and [batch,k,n]")
    element = ("tf32" if dtype == "tf32"
               else _problem.dtype_name(_FUNCTION, "a.dtype", a_dtype))
    output = _problem.stored_output(_FUNCTION, element, out_dtype)
    return (*a_shape[:-1], b_shape[-1]), _problem.TORCH_DTYPES[output]


def grouped_output_of(a_shape, a_dtype, b_shape, masked, out_dtype=None, dtype=None):
    """(shape, torch dtype name) of the out ptxgen.grouped_gemm allocates:
    [total_m, n] of a [total_m, k] and b [groups, k, n] with offs,
    [groups, max_m, n] of a [groups, max_m, k] with masked_m (`masked`);
    its type as output_of's. Sizes are carried, not compared."""
    if len(b_shape) != 3 or len(a_shape) != (3 if masked else 2):
        raise refuse(f"{_GROUPED}: a has shape {tuple(a_shape)} and b {tuple(b_shape)}; "
                     "ptxgen takes a [total_m, k] with offs or [groups, max_m, k] with "
                     "masked_m, and b [groups, k, n]")
    element = ("tf32" if dtype == "tf32"
               else _problem.dtype_name(_GROUPED, "a.dtype", a_dtype))
    output = _problem.stored_output(_GROUPED, element, out_dtype)
    return (*a_shape[:-1], b_shape[-1]), _problem.TORCH_DTYPES[output]


def _name(value):
    """A type keyword as the operators take it: a string (str of a torch
    dtype is "torch.bfloat16", which ptxgen reads), or None."""
    return None if value is None or isinstance(value, str) else str(value)


def gemm(a, b, *, out=None, c=None, bias=None, bias_along="n", activation=None,
         alpha=1.0, beta=0.0, out_dtype=None, stream=None, dtype=None, scale_a=None,
         scale_b=None, scale_d=None, amax=None, fast_accum=False, scaling=None):
    """ptxgen.gemm in code torch.compile traces: the operators, whose new
    out and amax are then copied into an out= and amax= given (their shapes
    and types checked first, as the eager path checks them). A stream= is refused: compiled code runs
    on the stream it is called on (torch.cuda.stream(s) chooses it)."""
    if stream is not None:
        raise refuse(f"{_FUNCTION}: stream= is not taken in code torch.compile traces; the "
                     "GEMM runs on the current stream (choose it with torch.cuda.stream)")
    if out is not None and out_dtype is None:
        out_dtype = out.dtype
    arguments = (a, b, c, bias, scale_a, scale_b, scale_d, bias_along, activation, alpha,
                 beta, _name(out_dtype), _name(dtype), fast_accum, scaling)
    if amax is None:
        result = torch.ops.ptxgen.gemm(*arguments)
    else:
        if amax.dtype != torch.float32 or amax.numel() != 1:
            raise refuse(f"{_FUNCTION}: amax must be one float32 element, not shape "
                         f"{tuple(amax.shape)} of {amax.dtype}")
        result, largest = torch.ops.ptxgen.gemm_amax(*arguments)
        amax.copy_(largest)
    if out is None:
        return result
    if out.shape != result.shape or out.dtype != result.dtype:
        raise refuse(f"{_FUNCTION}: out has shape {tuple(out.shape)} of {out.dtype}, not "
                     f"{tuple(result.shape)} of {result.dtype}")
    return out.copy_(result)


def grouped_gemm(a, b, offs=None, *, masked_m=None, expected_m=None, bias=None,
                 out_dtype=None, activation=None, alpha=1.0, scale_a=None, scale_b=None,
                 out=None, stream=None, dtype=None, fast_accum=False, scaling=None):
    """ptxgen.grouped_gemm in code torch.compile traces: the operator, whose
    new out is then copied into an out= given; a stream= is refused, as
    gemm's."""
    if stream is not None:
        raise refuse(f"{_GROUPED}: stream= is not taken in code torch.compile traces; the "
                     "GEMM runs on the current stream (choose it with torch.cuda.stream)")
    if out is not None and out_dtype is None:
        out_dtype = out.dtype
    result = torch.ops.ptxgen.grouped_gemm(
        a, b, offs, masked_m, bias, scale_a, scale_b, expected_m, activation, alpha,
        _name(out_dtype), _name(dtype), fast_accum, scaling)
    if out is None:
        return result
    if out.shape != result.shape or out.dtype != result.dtype:
        raise refuse(f"{_GROUPED}: out has shape {tuple(out.shape)} of {out.dtype}, not "
                     f"{tuple(result.shape)} of {result.dtype}")
    return out.copy_(result)


def attention(q, k, v, *, causal=False, scale=None, cu_seqlens_q=None, cu_seqlens_k=None,
              max_seqlen_q=None, max_seqlen_k=None, layout="bshd", out=None,
              return_lse=False, stream=None):
    """ptxgen.attention in code torch.compile traces: the operators
    (attention_lse with return_lse), whose new out is then copied into an
    out= given; a stream= is refused, as gemm's."""
    if stream is not None:
        raise refuse(f"{_ATTENTION}: stream= is not taken in code torch.compile traces; "
                     "the attention runs on the current stream (choose it with "
                     "torch.cuda.stream)")
    arguments = (q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
                 scale, layout)
    if _problem._flag(_ATTENTION, "return_lse", return_lse):
        result, lse = torch.ops.ptxgen.attention_lse(*arguments)
    else:
        result = torch.ops.ptxgen.attention(*arguments)
    if out is not None:
        if out.shape != result.shape or out.dtype != result.dtype:
            raise refuse(f"{_ATTENTION}: out has shape {tuple(out.shape)} of {out.dtype}, "
                         f"not {tuple(result.shape)} of {result.dtype}")
        result = out.copy_(result)
    return (result, lse) if return_lse else result


def _register():
    """Defines torch.ops.ptxgen.gemm and gemm_amax: each runs ptxgen.gemm's
    eager path on any device (which refuses tensors off the GPU itself) and
    fakes its out with output_of; and grouped_gemm, ptxgen.grouped_gemm's
    eager path faked with grouped_output_of; attention and attention_lse,
    ptxgen.attention's eager path faked with _attention.outputs_of. The
    Python functions keep the schema's defaults: the dispatcher leaves
    trailing arguments at their defaults out of the call."""
    from typing import Optional, Tuple

    Tensor = torch.Tensor

    def fake_out(a, b, out_dtype, dtype):
        shape, name = output_of(a.shape, a.dtype, b.shape, out_dtype, dtype)
        return torch.empty(shape, dtype=getattr(torch, name), device=a.device)

    @torch.library.custom_op("ptxgen::gemm", mutates_args=())
    def gemm_op(a: Tensor, b: Tensor, c: Optional[Tensor] = None,
                bias: Optional[Tensor] = None, scale_a: Optional[Tensor] = None,
                scale_b: Optional[Tensor] = None, scale_d: Optional[Tensor] = None,
                bias_along: str = "n", activation: Optional[str] = None,
                alpha: float = 1.0, beta: float = 0.0, out_dtype: Optional[str] = None,
                dtype: Optional[str] = None, fast_accum: bool = False,
                scaling: Optional[str] = None) -> Tensor:
        with _arrays.workspaces_per_run():
            return _gemm.gemm(a, b, c=c, bias=bias, bias_along=bias_along,
                              activation=activation, alpha=alpha, beta=beta,
                              out_dtype=out_dtype, dtype=dtype, scale_a=scale_a,
                              scale_b=scale_b, scale_d=scale_d, fast_accum=fast_accum,
                              scaling=scaling)

    @gemm_op.register_fake
    def _(a, b, c=None, bias=None, scale_a=None, scale_b=None, scale_d=None,
          bias_along="n", activation=None, alpha=1.0, beta=0.0, out_dtype=None,
          dtype=None, fast_accum=False, scaling=None):
        return fake_out(a, b, out_dtype, dtype)

    @torch.library.custom_op("ptxgen::gemm_amax", mutates_args=())
    def gemm_amax_op(a: Tensor, b: Tensor, c: Optional[Tensor] = None,
                     bias: Optional[Tensor] = None, scale_a: Optional[Tensor] = None,
                     scale_b: Optional[Tensor] = None, scale_d: Optional[Tensor] = None,
                     bias_along: str = "n", activation: Optional[str] = None,
                     alpha: float = 1.0, beta: float = 0.0,
                     out_dtype: Optional[str] = None, dtype: Optional[str] = None,
                     fast_accum: bool = False,
                     scaling: Optional[str] = None) -> Tuple[Tensor, Tensor]:
        amax = torch.empty((), dtype=torch.float32, device=a.device)
        with _arrays.workspaces_per_run():
            out = _gemm.gemm(a, b, c=c, bias=bias, bias_along=bias_along,
                             activation=activation, alpha=alpha, beta=beta,
                             out_dtype=out_dtype, dtype=dtype, scale_a=scale_a,
                             scale_b=scale_b, scale_d=scale_d, amax=amax,
                             fast_accum=fast_accum, scaling=scaling)
        return out, amax

    @gemm_amax_op.register_fake
    def _(a, b, c=None, bias=None, scale_a=None, scale_b=None, scale_d=None,
          bias_along="n", activation=None, alpha=1.0, beta=0.0, out_dtype=None,
          dtype=None, fast_accum=False, scaling=None):
        return (fake_out(a, b, out_dtype, dtype),
                torch.empty((), dtype=torch.float32, device=a.device))

    @torch.library.custom_op("ptxgen::grouped_gemm", mutates_args=())
    def grouped_gemm_op(a: Tensor, b: Tensor, offs: Optional[Tensor] = None,
                        masked_m: Optional[Tensor] = None, bias: Optional[Tensor] = None,
                        scale_a: Optional[Tensor] = None, scale_b: Optional[Tensor] = None,
                        expected_m: Optional[int] = None, activation: Optional[str] = None,
                        alpha: float = 1.0, out_dtype: Optional[str] = None,
                        dtype: Optional[str] = None, fast_accum: bool = False,
                        scaling: Optional[str] = None) -> Tensor:
        with _arrays.workspaces_per_run():
            return _grouped.grouped_gemm(
                a, b, offs, masked_m=masked_m, expected_m=expected_m, bias=bias,
                out_dtype=out_dtype, activation=activation, alpha=alpha, scale_a=scale_a,
                scale_b=scale_b, dtype=dtype, fast_accum=fast_accum, scaling=scaling)

    @grouped_gemm_op.register_fake
    def _(a, b, offs=None, masked_m=None, bias=None, scale_a=None, scale_b=None,
          expected_m=None, activation=None, alpha=1.0, out_dtype=None, dtype=None,
          fast_accum=False, scaling=None):
        shape, name = grouped_output_of(a.shape, a.dtype, b.shape, masked_m is not None,
                                        out_dtype, dtype)
        return torch.empty(shape, dtype=getattr(torch, name), device=a.device)

    def fake_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, layout):
        """(out, lse) as the eager path allocates them: out of q's shape and
        type nesting rows and heads as q does (by the strides, as ptxgen
        reads them), the LSE float32."""
        strides, lse_shape = _attention.outputs_of(
            q.shape, q.stride(), k.shape, k.stride(), v.shape, v.stride(), layout,
            cu_seqlens_q is not None or cu_seqlens_k is not None)
        return (torch.empty_strided(q.shape, strides, dtype=q.dtype, device=q.device),
                torch.empty(lse_shape, dtype=torch.float32, device=q.device))

    @torch.library.custom_op("ptxgen::attention", mutates_args=())
    def attention_op(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Optional[Tensor] = None,
                     cu_seqlens_k: Optional[Tensor] = None,
                     max_seqlen_q: Optional[int] = None, max_seqlen_k: Optional[int] = None,
                     causal: bool = False, scale: Optional[float] = None,
                     layout: str = "bshd") -> Tensor:
        return _attention.attention(
            q, k, v, causal=causal, scale=scale, cu_seqlens_q=cu_seqlens_q,
            cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k,
            layout=layout)

    @attention_op.register_fake
    def _(q, k, v, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
          max_seqlen_k=None, causal=False, scale=None, layout="bshd"):
        return fake_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, layout)[0]

    @torch.library.custom_op("ptxgen::attention_lse", mutates_args=())
    def attention_lse_op(q: Tensor, k: Tensor, v: Tensor,
                         cu_seqlens_q: Optional[Tensor] = None,
                         cu_seqlens_k: Optional[Tensor] = None,
                         max_seqlen_q: Optional[int] = None,
                         max_seqlen_k: Optional[int] = None, causal: bool = False,
                         scale: Optional[float] = None,
                         layout: str = "bshd") -> Tuple[Tensor, Tensor]:
        return _attention.attention(
            q, k, v, causal=causal, scale=scale, cu_seqlens_q=cu_seqlens_q,
            cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k,
            layout=layout, return_lse=True)

    @attention_lse_op.register_fake
    def _(q, k, v, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
          max_seqlen_k=None, causal=False, scale=None, layout="bshd"):
        return fake_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, layout)


if torch is not None:
    _register()
