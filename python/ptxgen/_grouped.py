"""ptxgen.grouped_gemm: the grouped GEMMs of mixture-of-experts layers on
CUDA arrays, shaped as torch._grouped_mm(mat_a, mat_b, offs) is:

  contiguous (offs): a [total_m, k] holds every group's rows, group after
    group; b [groups, k, n]; offs int32 [groups] on the device, where each
    group's rows end (cumulative, torch._grouped_mm's offs); out
    [total_m, n].
  masked (masked_m): a [groups, max_m, k], b [groups, k, n], masked_m
    int32 [groups] on the device, the rows each group uses (DeepGEMM's
    masked_m); out [groups, max_m, n].

Only the kernel reads the counts: a call copies nothing to the host and
waits for nothing, so a CUDA graph captures it once and replays it with new
counts. Arrays are read as ptxgen.gemm reads them (_gemm), its prepared
GEMMs and fast path shared: a call of a signature run before skips the
reading and launches what the first call prepared.
"""
import contextlib
import math

from ptxgen import _arrays, _gemm, _library, _problem
from ptxgen._library import refuse

_FUNCTION = "ptxgen.grouped_gemm"
# ptxgenGemmOperands_t's fields: the arrays of plan_call they point to.
_OPERAND_ARRAYS = {"a": "a", "b": "b", "d": "d", "bias": "bias", "scale_a": "scale_a",
                   "scale_b": "scale_b", "group_rows": "group_rows"}
_FIELDS = [name for name, _ in _library.GemmOperands._fields_]


def _named_refusals():
    """_gemm's refusals, naming ptxgen.grouped_gemm."""
    return _arrays.renamed_refusals(_FUNCTION)


def _read_counts(name, x, groups, read):
    """The int32 array of one count per group (offs or masked_m), checked
    by its description alone: its values stay on the device."""
    array = _arrays.describe_int32(_FUNCTION, name, x, read)
    if array.shape != (groups,) or (groups > 1 and array.strides != (1,)):
        raise refuse(f"{_FUNCTION}: {name} has shape {array.shape} and strides "
                     f"{array.strides}; it needs one int32 per group of b, {groups} "
                     "contiguous values")
    return array


def _bias_stride(array, groups, n):
    """The bias's stride between groups: 0 for one [n] vector shared by
    every group, the row stride of [groups, n]."""
    want = (n,) if len(array.shape) == 1 else (groups, n)
    if array.shape != want or (array.strides[-1] != 1 and n > 1):
        raise refuse(f"{_FUNCTION}: bias has shape {array.shape} and strides "
                     f"{array.strides}; it needs [groups, n] = ({groups}, {n}) (one row "
                     f"per group) or [n] = ({n},) (shared), contiguous along n")
    return array.strides[0] if len(array.shape) == 2 and groups > 1 else 0


@_named_refusals()
def plan_call(a, b, offs=None, masked_m=None, expected_m=None, bias=None, out_dtype=None,
              activation=None, alpha=1.0, scale_a=None, scale_b=None, out=None,
              stream=None, dtype=None, fast_accum=False, scaling=None, *, holds):
    """(problem, arrays by name, out, CUstream) of a grouped call, as
    _gemm.plan_call's of a GEMM: every argument read and its layout found,
    `out` allocated when not given, DLPack arrays held by `holds`."""
    if (offs is None) == (masked_m is None):
        raise refuse(f"{_FUNCTION}: give offs (contiguous groups, a [total_m, k]) or "
                     "masked_m (masked groups, a [groups, max_m, k]): "
                     + ("not both" if offs is not None else "neither was given"))
    contiguous = offs is not None
    counts_name = "offs" if contiguous else "masked_m"
    A = _arrays.describe("a", a, holds, _arrays.stream_of(stream, None))
    cuda_stream = _arrays.stream_of(stream, A)

    def read(name, x):
        return _arrays.describe(name, x, holds, cuda_stream)

    ndim = 2 if contiguous else 3
    if len(A.shape) != ndim:
        raise refuse(f"{_FUNCTION}: a has shape {A.shape}; with {counts_name} it is "
                     + ("[total_m, k] (2-D)" if contiguous else "[groups, max_m, k] (3-D)"))
    B = read("b", b)
    if len(B.shape) != 3:
        raise refuse(f"{_FUNCTION}: b has shape {B.shape}; it is [groups, k, n] (3-D)")
    element, b_element = _gemm._input_types(A, B, dtype)
    a_groups, m, k, a_row_stride, a_column_stride, stride_a = _gemm._matrices(A, ndim)
    groups, b_k, n, b_row_stride, b_column_stride, stride_b = _gemm._matrices(B, 3)
    if b_k != k or (not contiguous and a_groups != groups):
        raise refuse(f"{_FUNCTION}: a {A.shape} and b {B.shape} do not multiply: b must "
                     f"be [groups, k, n] with k={k}"
                     + ("" if contiguous else f" and groups={a_groups}"))
    a_major, lda = _gemm.operand_layout("a", m, a_row_stride, k, a_column_stride)
    b_major, ldb = _gemm.operand_layout("b", n, b_column_stride, k, b_row_stride)
    arrays = {"a": A, "b": B,
              "group_rows": _read_counts(counts_name, offs if contiguous else masked_m,
                                         groups, read)}
    out, arrays["d"] = _gemm.read_output(_FUNCTION, read, out, out_dtype, A, element,
                                         (m, n) if contiguous else (groups, m, n))
    ldd, stride_d = _gemm._row_major(arrays["d"], a_groups, m, n, ndim)
    stride_bias, bias_dtype = 0, "f32"
    if bias is not None:
        arrays["bias"] = read("bias", bias)
        bias_dtype = arrays["bias"].dtype
        stride_bias = _bias_stride(arrays["bias"], groups, n)
    given = {"scale_a": scale_a, "scale_b": scale_b}
    scales = [name for name, scale in given.items() if scale is not None]
    if scaling is not None:
        _problem.scaling_value(_FUNCTION, scaling)  # exact names: "NONE" is refused here
    if scaling == "none" and scales:
        raise refuse(f"{_FUNCTION}: {scales[0]} given with scaling='none', which reads "
                     "no scales")
    for name in scales:
        arrays[name] = read(name, given[name])
        if scaling != "block":
            _gemm._check_scalar(arrays[name], arrays["d"].dtype)
    # As ptxgen.gemm: a scale given asks for per-tensor scaling unless
    # scaling says which; a missing one is the library's to refuse.
    if scaling is None:
        scaling = "tensor" if scales else "none"
    problem = _problem.problem(
        _FUNCTION, m=m, n=n, k=k, dtype=element, b_dtype=b_element,
        out_dtype=arrays["d"].dtype, a_major=a_major, b_major=b_major, lda=lda, ldb=ldb,
        ldd=ldd, batch=groups, stride_a=stride_a, stride_b=stride_b, stride_d=stride_d,
        stride_bias=stride_bias, bias=None if bias is None else "n", bias_dtype=bias_dtype,
        activation=activation, alpha=alpha, scaling=scaling, fast_accum=fast_accum,
        grouping="contiguous" if contiguous else "masked",
        expected_m=0 if expected_m is None else expected_m)
    if scaling == "block":
        _gemm._check_block_scales(arrays, problem)
    _arrays.check_one_device(arrays)
    return problem, arrays, out, cuda_stream


def _signature(arrays, options):
    """(key, addresses in ptxgenGemmOperands_t's order, a's interface
    stream) of a call whose arrays, by operand field, are `arrays` (None
    where not given); None when one is plan_call's (_gemm._part). The key
    starts with this function's name: ptxgen.gemm's share the table."""
    key = [_FUNCTION, options]
    addresses = [None] * len(_FIELDS)
    a_stream = None
    for field, x in arrays.items():
        if x is None:
            key.append(None)
            continue
        part = _gemm._part(field, x)
        if part is None:
            return None
        key.append(part[0])
        addresses[_FIELDS.index(field)] = part[1]
        if field == "a":
            a_stream = part[2]
    return tuple(key), addresses, a_stream


def grouped_gemm(a, b, offs=None, *, masked_m=None, expected_m=None, bias=None,
                 out_dtype=None, activation=None, alpha=1.0, scale_a=None, scale_b=None,
                 out=None, stream=None, dtype=None, fast_accum=False, scaling=None):
    """ptxgen.grouped_gemm run eagerly (ptxgen/__init__.py says what it
    computes): the fast path for a signature run before, else plan_call."""
    try:
        # Each option with its type, as ptxgen.gemm keys them, and which
        # counts were given: plan_call refuses both, so a key with both is
        # never remembered.
        options = (type(alpha), alpha, alpha == 0 and math.copysign(1.0, alpha),
                   type(expected_m), expected_m, type(activation), activation,
                   type(out_dtype), out_dtype, type(dtype), dtype, type(scaling), scaling,
                   type(fast_accum), fast_accum, offs is None, masked_m is None)
        signature = _signature({"a": a, "b": b, "group_rows": masked_m if offs is None
                                else offs, "d": out, "bias": bias, "scale_a": scale_a,
                                "scale_b": scale_b}, options)
        entry = None if signature is None else _gemm._fast.get(signature[0])
        if entry is not None:
            entry.used = next(_gemm._clock)
    except Exception:
        signature = entry = None
    if entry is not None:
        with _named_refusals():
            return _gemm._launch(entry, signature[1], out, stream, signature[2])
    with contextlib.ExitStack() as holds:
        problem, planned, d, cuda_stream = plan_call(
            a, b, offs, masked_m=masked_m, expected_m=expected_m, bias=bias,
            out_dtype=out_dtype, activation=activation, alpha=alpha, scale_a=scale_a,
            scale_b=scale_b, out=out, stream=stream, dtype=dtype, fast_accum=fast_accum,
            scaling=scaling, holds=holds)
        A = planned["a"]
        api = _arrays.library_api(A.library)
        with _arrays.on_device(A):
            kernel = _gemm.prepared(problem, A.device, None if api else cuda_stream)
            operands = _library.GemmOperands(**{
                field: planned[name].pointer
                for field, name in _OPERAND_ARRAYS.items() if name in planned})
            kernel.run(operands, cuda_stream, api, A.device)
    if signature is not None:
        entry = _gemm._Entry()
        entry.kernel = kernel if api else None
        entry.problem = problem
        entry.api = api
        entry.device = A.device
        entry.reads_c = False
        if out is None:
            D = planned["d"]
            entry.out_shape, entry.out_strides = D.shape, D.strides
            entry.out_dtype = api.dtype(D.dtype)
        _gemm._remember(signature[0], entry)
    return d
