"""ptxgen.attention: attention forward on CUDA arrays (PyTorch tensors, CuPy
arrays, any object with __cuda_array_interface__ or DLPack's __dlpack__),
read as every entry point reads its arrays (_arrays) and run on the caller's
stream:

  fixed lengths: q [batch, seq_q, heads_q, head_dim] (layout "bshd",
    FlashAttention's) or [batch, heads_q, seq_q, head_dim] ("bhsd", torch's
    scaled_dot_product_attention's); k and v [batch, seq_k, heads_kv,
    head_dim] (or [batch, heads_kv, seq_k, head_dim]).
  variable lengths (cu_seqlens_q, cu_seqlens_k): q [total_q, heads_q,
    head_dim], k and v [total_k, heads_kv, head_dim], the sequences one
    after another, sequence b at rows cu_seqlens[b] to cu_seqlens[b+1]
    (int32 on the device, FlashAttention's varlen).

Strides come from the arrays: head_dim must be contiguous, the rest may be
padded or a view. The layout says how the shapes are ordered; how rows and
heads nest in memory comes from the strides (a [batch, heads, seq, dim] view
of [batch, seq, heads, dim] memory, as x.view(b, s, h, d).transpose(1, 2)
gives, is read as the memory it is), the same for q, k, v and out. A
prepared attention is kept per problem and device, so a repeated call
prepares nothing.
"""
import collections
import contextlib
import ctypes
import threading

from ptxgen import _arrays, _library, _problem
from ptxgen._library import refuse

_FUNCTION = "ptxgen.attention"
_DIMENSIONS = 4  # [batch, seq, heads, head_dim]
# How each layout orders a shape, for messages; variable lengths' own.
_SHAPES = {"bshd": "[batch, seq, heads, head_dim]", "bhsd": "[batch, heads, seq, head_dim]"}
_PACKED_SHAPE = "[total, heads, head_dim]"

# One tensor's sizes and strides (elements) by dimension, whatever order its
# shape has them in; batch 1 and batch_stride 0 with variable lengths.
_Dims = collections.namedtuple(
    "_Dims", "batch seq heads head_dim batch_stride seq_stride head_stride dim_stride")


def _dims(name, shape, strides, layout, variable_lengths):
    """The _Dims of tensor `name` of `shape` and `strides`, ordered as
    `layout` says (or [total, heads, head_dim]); head_dim contiguous."""
    shape, strides = tuple(shape), tuple(strides)
    if variable_lengths:
        if len(shape) != 3:
            raise refuse(f"{_FUNCTION}: {name} has shape {shape}; with cu_seqlens it is "
                         f"{_PACKED_SHAPE}")
        dims = _Dims(1, shape[0], shape[1], shape[2], 0, *strides)
    elif len(shape) != 4:
        raise refuse(f"{_FUNCTION}: {name} has shape {shape}; with layout={layout!r} it is "
                     f"{_SHAPES[layout]} (or give cu_seqlens_q and cu_seqlens_k for "
                     f"{_PACKED_SHAPE})")
    elif layout == "bshd":
        dims = _Dims(*shape, *strides)
    else:
        batch, heads, seq, head_dim = shape
        batch_stride, head_stride, seq_stride, dim_stride = strides
        dims = _Dims(batch, seq, heads, head_dim, batch_stride, seq_stride, head_stride,
                     dim_stride)
    if dims.head_dim > 1 and dims.dim_stride != 1:
        raise refuse(f"{_FUNCTION}: {name} has strides {strides}; its head_dim (the last "
                     "dimension) must be contiguous, stride 1 (call .contiguous())")
    return dims


def _nesting(dims):
    """How a tensor nests its rows and heads in memory: "bshd" (heads
    inside rows), "bhsd" (rows inside heads), None with one row or one head
    (either)."""
    if dims.seq < 2 or dims.heads < 2:
        return None
    return "bshd" if dims.head_stride < dims.seq_stride else "bhsd"


def memory_layout(tensors, layout):
    """The problem's layout: how the tensors (name: _Dims) nest rows and
    heads in memory, all alike; `layout` when none tells. The problem has
    one layout, whose packed strides and overlap rule it reads."""
    found = {}
    for name, dims in tensors.items():
        nesting = _nesting(dims)
        if nesting is not None:
            found.setdefault(nesting, name)
    if len(found) > 1:
        raise refuse(f"{_FUNCTION}: {found['bshd']} stores its heads inside its rows "
                     f"and {found['bhsd']} its rows inside its heads (by their strides); "
                     "q, k, v and out must nest them alike (call .contiguous())")
    return next(iter(found), layout)


def _out_strides(shape, layout, memory, variable_lengths):
    """The strides of a compact out of `shape` (ordered as `layout` says)
    whose rows and heads nest as `memory` says: q's."""
    if variable_lengths or memory == layout:
        return _arrays.compact_strides(shape)
    swapped = _arrays.compact_strides((shape[0], shape[2], shape[1], shape[3]))
    return (swapped[0], swapped[2], swapped[1], swapped[3])


def _lse_shape(q, variable_lengths):
    """The LSE's: [batch, heads_q, seq_q], or [heads_q, total_q]."""
    return (q.heads, q.seq) if variable_lengths else (q.batch, q.heads, q.seq)


def outputs_of(q_shape, q_strides, k_shape, k_strides, v_shape, v_strides, layout="bshd",
               variable_lengths=False):
    """(out's strides, the LSE's shape) of what ptxgen.attention allocates
    for q, k and v of these shapes and strides: out has q's shape and type,
    compact, nesting rows and heads in memory as q, k and v do; the LSE is
    float32. The rule the operators' fake implementations follow. Raises
    ptxgen.Error for what has no such out."""
    layout = _problem._choice(_FUNCTION, "layout", layout, {name: name for name in _SHAPES})
    tensors = {name: _dims(name, shape, strides, layout, variable_lengths)
               for name, shape, strides in (("q", q_shape, q_strides),
                                            ("k", k_shape, k_strides),
                                            ("v", v_shape, v_strides))}
    memory = memory_layout(tensors, layout)
    return (_out_strides(q_shape, layout, memory, variable_lengths),
            _lse_shape(tensors["q"], variable_lengths))


def _read_offsets(name, x, read):
    """cu_seqlens_q or cu_seqlens_k: contiguous int32 on the device, batch
    + 1 of them; the host never reads their values."""
    array = _arrays.describe_int32(_FUNCTION, name, x, read)
    if len(array.shape) != 1 or array.shape[0] < 2 or array.strides != (1,):
        raise refuse(f"{_FUNCTION}: {name} has shape {array.shape} and strides "
                     f"{array.strides}; it needs batch + 1 (at least 2) contiguous int32 "
                     "offsets")
    return array


def _strides(dims):
    """The problem's strides of a tensor: 0 (packed) along a dimension of
    one, whose stride is never stepped (and may be anything in a view)."""
    return _library.AttentionStrides(dims.batch_stride if dims.batch > 1 else 0,
                                     dims.seq_stride if dims.seq > 1 else 0,
                                     dims.head_stride if dims.heads > 1 else 0)


def _allocate(like, shape, strides, dtype):
    """A new out of `shape` and compact `strides` (a [batch, seq, heads,
    dim] or [batch, heads, seq, dim] order of the dimensions) beside `like`."""
    if strides == _arrays.compact_strides(shape):
        return _arrays.allocate(like, shape, dtype)
    # Allocated in memory order, then seen in the shape's.
    return _arrays.allocate(like, (shape[0], shape[2], shape[1], shape[3]),
                            dtype).swapaxes(1, 2)


@_arrays.renamed_refusals(_FUNCTION)
def plan_call(q, k, v, *, causal=False, scale=None, cu_seqlens_q=None, cu_seqlens_k=None,
              max_seqlen_q=None, max_seqlen_k=None, layout="bshd", out=None,
              return_lse=False, stream=None, holds):
    """(problem, arrays by name, out, lse, CUstream) of a call, as
    _gemm.plan_call's of a GEMM: every argument read and its layout found,
    out and (with return_lse) the LSE allocated when not given, DLPack
    arrays held by `holds`."""
    layout = _problem._choice(_FUNCTION, "layout", layout, {name: name for name in _SHAPES})
    variable_lengths = cu_seqlens_q is not None or cu_seqlens_k is not None
    if variable_lengths:
        if cu_seqlens_q is None or cu_seqlens_k is None:
            raise refuse(f"{_FUNCTION}: variable lengths need both cu_seqlens_q and "
                         "cu_seqlens_k")
        if layout != "bshd":
            raise refuse(f"{_FUNCTION}: layout={layout!r} with cu_seqlens: variable lengths "
                         f"take q, k and v {_PACKED_SHAPE} (layout 'bshd')")
        for name, value in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
            if value is None:
                raise refuse(f"{_FUNCTION}: {name} is needed with cu_seqlens: the longest "
                             "sequence, which the host plans for (it never reads the "
                             "offsets)")
    else:
        for name, value in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
            if value is not None:
                raise refuse(f"{_FUNCTION}: {name} is for variable lengths; give "
                             "cu_seqlens_q and cu_seqlens_k with it")
    causal = _problem._flag(_FUNCTION, "causal", causal)
    _problem._flag(_FUNCTION, "return_lse", return_lse)
    # The C struct's 0 is the default: an explicit 0 is refused here, the
    # other scales by the library's rule.
    if scale is not None:
        scale = _problem.float_value(_FUNCTION, "scale", scale)
        if scale == 0:
            raise refuse(f"{_FUNCTION}: scale={scale} must be finite and positive "
                         "(None: 1/sqrt(head_dim))")

    Q = _arrays.describe("q", q, holds, _arrays.stream_of(stream, None), _DIMENSIONS)
    cuda_stream = _arrays.stream_of(stream, Q)

    def read(name, x):
        return _arrays.describe(name, x, holds, cuda_stream, _DIMENSIONS)

    arrays = {"q": Q, "k": read("k", k), "v": read("v", v)}
    dims = {name: _dims(name, array.shape, array.strides, layout, variable_lengths)
            for name, array in arrays.items()}
    qd, kd = dims["q"], dims["k"]
    if arrays["k"].shape != arrays["v"].shape or (kd.batch, kd.head_dim) != (
            qd.batch, qd.head_dim):
        shape = _PACKED_SHAPE if variable_lengths else _SHAPES[layout]
        batch = "" if variable_lengths else f"batch={qd.batch} and "
        raise refuse(f"{_FUNCTION}: q {Q.shape}, k {arrays['k'].shape} and v "
                     f"{arrays['v'].shape} do not match: k and v are both {shape} with "
                     f"q's {batch}head_dim={qd.head_dim}")
    for name in ("k", "v"):
        if arrays[name].dtype != Q.dtype:
            raise refuse(f"{_FUNCTION}: {name} is {arrays[name].dtype}; q, k, v and out are "
                         f"of one type, q's {Q.dtype}")
    if out is not None:
        arrays["out"] = read("out", out)
        if arrays["out"].readonly:
            raise refuse(f"{_FUNCTION}: out is read-only")
        if arrays["out"].shape != Q.shape or arrays["out"].dtype != Q.dtype:
            raise refuse(f"{_FUNCTION}: out has shape {arrays['out'].shape} of "
                         f"{arrays['out'].dtype}, not q's {Q.shape} of {Q.dtype}")
        dims["out"] = _dims("out", arrays["out"].shape, arrays["out"].strides, layout,
                            variable_lengths)
    memory = memory_layout(dims, layout)
    if out is None:
        out = _allocate(Q, Q.shape, _out_strides(Q.shape, layout, memory, variable_lengths),
                        Q.dtype)
        arrays["out"] = read("out", out)
        dims["out"] = _dims("out", arrays["out"].shape, arrays["out"].strides, layout,
                            variable_lengths)
    lse = None
    if return_lse:
        # Like out, beside q; there is no lse= to give.
        if _arrays.library_api(Q.library) is None:
            raise refuse(f"{_FUNCTION}: return_lse allocates the LSE beside q, which "
                         "takes torch tensors or CuPy arrays")
        lse = _arrays.allocate(Q, _lse_shape(qd, variable_lengths), "f32")
        arrays["lse"] = read("lse", lse)

    problem = _library.AttentionProblem()
    problem.batch, problem.seq_q, problem.seq_k = qd.batch, qd.seq, kd.seq
    if variable_lengths:
        arrays["cu_seqlens_q"] = _read_offsets("cu_seqlens_q", cu_seqlens_q, read)
        arrays["cu_seqlens_k"] = _read_offsets("cu_seqlens_k", cu_seqlens_k, read)
        if arrays["cu_seqlens_q"].shape != arrays["cu_seqlens_k"].shape:
            raise refuse(f"{_FUNCTION}: cu_seqlens_q has shape "
                         f"{arrays['cu_seqlens_q'].shape} and cu_seqlens_k "
                         f"{arrays['cu_seqlens_k'].shape}: batch + 1 offsets each")
        problem.batch = arrays["cu_seqlens_q"].shape[0] - 1
        problem.seq_q = _problem.int64(_FUNCTION, "max_seqlen_q", max_seqlen_q)
        problem.seq_k = _problem.int64(_FUNCTION, "max_seqlen_k", max_seqlen_k)
        problem.total_q, problem.total_k = qd.seq, kd.seq  # the rows allocated
        problem.variable_lengths = 1
    problem.heads_q, problem.heads_kv, problem.head_dim = qd.heads, kd.heads, qd.head_dim
    problem.element_type = _library.DATA_TYPES[Q.dtype]
    problem.causal = causal
    problem.scale = 0.0 if scale is None else scale  # 0: 1/sqrt(head_dim)
    problem.layout = _library.ATTENTION_LAYOUTS[memory]
    problem.q_stride, problem.k_stride, problem.v_stride, problem.o_stride = (
        _strides(dims[name]) for name in ("q", "k", "v", "out"))
    _arrays.check_one_device(arrays)
    return problem, arrays, out, lse, cuda_stream


class _Prepared:
    """A ptxgenAttention_t, destroyed with this object."""

    def __init__(self, problem):
        library, handle = _library.loaded()
        pointer = ctypes.c_void_p()
        _library.check(library.ptxgenAttentionPrepare(handle, ctypes.byref(problem),
                                                      ctypes.byref(pointer)))
        self._library = library
        self._handle = handle
        self.pointer = pointer

    def run(self, addresses, cuda_stream):
        """Enqueues the attention of `addresses` (q, k, v, o, lse,
        cu_seqlens_q, cu_seqlens_k; None where not given) on `cuda_stream`."""
        _library.check(self._library.ptxgenAttentionRun(self._handle, self.pointer,
                                                        *addresses, cuda_stream))

    def __del__(self):
        pointer = getattr(self, "pointer", None)
        if pointer:
            self._library.ptxgenAttentionDestroy(pointer)


# Prepared attentions by (problem, device): one is loaded into one context,
# and needs no workspace, so it serves every stream of its device. The
# oldest go beyond _CACHE_SIZE.
_CACHE_SIZE = 64
_cache = collections.OrderedDict()
_cache_lock = threading.Lock()


def prepared(problem, device):
    """The _Prepared of `problem` on `device`, prepared at its first call."""
    key = (_problem.key(problem), device)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    attention = _Prepared(problem)
    with _cache_lock:
        attention = _cache.setdefault(key, attention)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return attention


# ptxgenAttentionRun's pointers, in order: the arrays of plan_call.
_OPERAND_ARRAYS = ("q", "k", "v", "out", "lse", "cu_seqlens_q", "cu_seqlens_k")


def attention(q, k, v, *, causal=False, scale=None, cu_seqlens_q=None, cu_seqlens_k=None,
              max_seqlen_q=None, max_seqlen_k=None, layout="bshd", out=None,
              return_lse=False, stream=None):
    """ptxgen.attention run eagerly (ptxgen/__init__.py says what it
    computes)."""
    # DLPack arrays are given back once the attention is enqueued.
    with contextlib.ExitStack() as holds:
        problem, arrays, out, lse, cuda_stream = plan_call(
            q, k, v, causal=causal, scale=scale, cu_seqlens_q=cu_seqlens_q,
            cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k,
            layout=layout, out=out, return_lse=return_lse, stream=stream, holds=holds)
        Q = arrays["q"]
        with _arrays.on_device(Q):
            prepared(problem, Q.device).run(
                [arrays[name].pointer if name in arrays else None for name in _OPERAND_ARRAYS],
                cuda_stream)
    return (out, lse) if return_lse else out
