"""A GEMM problem from Python keywords: the one place that names the
keywords' legal values, for ptxgen.plan and ptxgen.gemm alike."""
import contextlib
import ctypes
import inspect
import math
import numbers
import operator

from ptxgen import _library
from ptxgen._library import echo, refuse

# Spellings taken for each value; the first of each is what ptxgen prints.
# torch's float8_e4m3fn is e4m3 as NVIDIA has it (no infinities, one NaN);
# "tf32" is f32 in memory, multiplied by tf32 tensor cores; "s32" is only
# ever an output (the exact sums of s8/u8 inputs).
_DTYPE_SPELLINGS = {"f16": ("f16", "float16", "half"),
                    "bf16": ("bf16", "bfloat16"),
                    "f32": ("f32", "float32", "float"),
                    "e4m3": ("e4m3", "float8_e4m3fn"),
                    "e5m2": ("e5m2", "float8_e5m2"),
                    "tf32": ("tf32",),
                    "s8": ("s8", "int8"),
                    "u8": ("u8", "uint8"),
                    "s32": ("s32", "int32")}
# The types D is stored in, by the name of their torch dtype (torch.<name>;
# NumPy names those it has alike): every type but tf32, which names how
# float32 inputs are multiplied.
TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32",
                "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "s8": "int8",
                "u8": "uint8", "s32": "int32"}
_INT64_MAX = 2**63 - 1


def dtype_name(function, keyword, value):
    """The name of _DTYPE_SPELLINGS ("f16", "e4m3", "s8", ...) for a value
    whose str() is exactly a spelling of one, or torch's "torch." and one:
    "bf16", numpy.dtype('float16'), torch.float8_e4m3fn and str(torch.int8);
    nothing is read after some other prefix ("evil.module.bf16")."""
    text = str(value).removeprefix("torch.")
    for name, spellings in _DTYPE_SPELLINGS.items():
        if text in spellings:
            return name
    names = ", ".join(repr(name) for name in _DTYPE_SPELLINGS)
    raise refuse(f"{function}: {keyword}={echo(value)} is not one of {names}")


def attention_dtype(function, value):
    """"f16" or "bf16" of any spelling dtype_name reads ("float16",
    torch.bfloat16, numpy.dtype('float16')): attention's elements."""
    with contextlib.suppress(_library.Error):
        name = dtype_name(function, "dtype", value)
        if name in ("f16", "bf16"):
            return name
    raise refuse(f"{function}: dtype={echo(value)} is not one of 'f16', 'bf16' (f16 or "
                 "bf16: 'float16', 'bfloat16' and torch's or NumPy's dtypes of them too)")


def default_output(element):
    """The output type the library gives inputs of `element` (a name of
    _DTYPE_SPELLINGS), as ptxgenGemmProblemInit sets it."""
    library, _ = _library.loaded()
    p = _library.GemmProblem()
    _library.check(library.ptxgenGemmProblemInit(ctypes.byref(p), 1, 1, 1,
                                                 _library.DATA_TYPES[element]))
    return next(name for name, value in _library.DATA_TYPES.items()
                if value == p.output_type)


def output_name(function, element, out_dtype):
    """D's type: out_dtype's name when given (any spelling dtype_name
    reads), else the library's default for inputs of `element`."""
    if out_dtype is None:
        return default_output(element)
    return dtype_name(function, "out_dtype", out_dtype)


def stored_output(function, element, out_dtype):
    """output_name, for a D that ptxgen allocates: one of TORCH_DTYPES."""
    output = output_name(function, element, out_dtype)
    if output not in TORCH_DTYPES:
        raise refuse(f"{function}: out_dtype={echo(out_dtype)} is not a type of D: tf32 is "
                     "how float32 inputs are multiplied (dtype='tf32'); its out is 'f32'")
    return output


def _flag(function, keyword, value):
    if value is True or value is False:
        return int(value)
    raise refuse(f"{function}: {keyword}={echo(value)} is not True or False")


def _choice(function, keyword, value, legal):
    # Exact names, as the command line takes them; an unhashable value is
    # no name either.
    if (value is None or isinstance(value, str)) and value in legal:
        return legal[value]
    names = ", ".join(repr(name) for name in legal)
    raise refuse(f"{function}: {keyword}={echo(value)} is not one of {names}")


def _major(function, keyword, value, own_letter):
    # "m" for A and "n" for B say MN-major as the command line does.
    legal = dict(_library.MAJORS)
    legal[own_letter] = _library.MAJORS["mn"]
    return _choice(function, keyword, value, legal)


def scaling_value(function, value):
    """The ptxgenScaling_t of a name the library takes (ptxgenGetScalingByName:
    "none", "tensor" or "block", exactly)."""
    library, _ = _library.loaded()
    parsed = ctypes.c_int()
    # A NUL would end the name early ("none\0x" read as "none").
    if (isinstance(value, str) and value.isascii() and "\0" not in value
            and library.ptxgenGetScalingByName(value.encode(), ctypes.byref(parsed)) == 0):
        return parsed.value
    names = ", ".join(repr(name) for name in _library.SCALING_NAMES)
    raise refuse(f"{function}: scaling={echo(value)} is not one of {names} (exactly, in "
                 "lower case)")


def _is_flag(value):
    """True, False and the array libraries' booleans (numpy.bool_, a torch
    bool tensor), which operator.index takes as 0 and 1."""
    if isinstance(value, bool):
        return True
    try:
        return str(getattr(value, "dtype", "")).removeprefix("torch.") == "bool"
    except Exception:  # a dtype that raises is no flag's
        return False


def _integer(function, keyword, value):
    # A plain int first: the fast path reads addresses through here.
    if type(value) is int:
        return value
    # A flag is no count.
    if not _is_flag(value):
        try:
            return operator.index(value)
        except TypeError:
            pass
        except Exception as error:
            raise _raised(function, keyword, "__index__", error) from error
    raise refuse(f"{function}: {keyword}={echo(value)} is not an integer")


def _raised(function, name, what, error):
    """The ptxgen.Error of `error`, raised by `what` of argument `name`."""
    return refuse(f"{function}: {name}: its {what} raised {echo(error)}")


@contextlib.contextmanager
def raised_by(function, name, what, passes=()):
    """What the caller's own code (`what` of argument `name`: its dtype,
    its array interface, its __float__) raises, but for ptxgen's own errors
    and `passes`, as a ptxgen.Error naming the argument, the original its
    cause."""
    try:
        yield
    except _library.Error:
        raise
    except passes:
        raise
    except Exception as error:
        raise _raised(function, name, what, error) from error


def int64(function, keyword, value):
    number = _integer(function, keyword, value)
    if not -_INT64_MAX - 1 <= number <= _INT64_MAX:
        raise refuse(f"{function}: {keyword}={number} does not fit in 64 bits")
    return number


def address(function, keyword, value):
    """A device pointer or a CUstream: an integer below 2**64, not negative
    (ctypes would wrap a larger one and take None for NULL)."""
    number = _integer(function, keyword, value)
    if not 0 <= number < 2**64:
        raise refuse(f"{function}: {keyword}={number} is not an address (0 to 2**64-1)")
    return number


def float_value(function, keyword, value):
    """A real number (not a bool or a string) that the library's f32 holds:
    finite and, when nonzero, not rounded to 0 (the command line's rules)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise refuse(f"{function}: {keyword}={echo(value)} is not a number")
    try:
        with raised_by(function, keyword, "__float__", OverflowError):
            f32 = ctypes.c_float(float(value)).value
    except OverflowError:  # an int past float's range
        f32 = math.inf
    if not math.isfinite(f32):
        raise refuse(f"{function}: {keyword}={echo(value)} is not a finite f32: {keyword} "
                     "must be finite (inf, nan and magnitudes past 3.4e38 are refused)")
    if f32 == 0 and value != 0:
        raise refuse(f"{function}: {keyword}={echo(value)} underflows f32: a nonzero "
                     f"{keyword} must not round to 0 (magnitudes up to 2**-150, 7.0e-46, do)")
    return float(value)


def problem(function, *, m, n, k, dtype="f16", b_dtype=None, out_dtype=None,
            a_major="k", b_major="k", lda=0, ldb=0, ldc=0, ldd=0, batch=1,
            stride_a=0, stride_b=0, stride_c=0, stride_d=0, stride_bias=0,
            bias=None, bias_dtype="f32", activation=None, alpha=1.0, beta=0.0,
            scaling="none", fast_accum=False, record_amax=False, grouping=None,
            expected_m=0):
    """The ptxgenGemmProblem_t of the keywords; `function` names the caller
    in refusals. The library checks the problem's rules; this checks only
    that each keyword is one ptxgen has a value for."""
    p = _library.GemmProblem()
    for keyword, value in (("m", m), ("n", n), ("k", k), ("lda", lda), ("ldb", ldb),
                           ("ldc", ldc), ("ldd", ldd), ("batch", batch),
                           ("stride_a", stride_a), ("stride_b", stride_b),
                           ("stride_c", stride_c), ("stride_d", stride_d),
                           ("stride_bias", stride_bias), ("expected_m", expected_m)):
        setattr(p, keyword, int64(function, keyword, value))
    element = dtype_name(function, "dtype", dtype)
    b_element = element if b_dtype is None else dtype_name(function, "b_dtype", b_dtype)
    output = output_name(function, element, out_dtype)
    p.input_type = _library.DATA_TYPES[element]
    p.b_input_type = _library.DATA_TYPES[b_element]
    p.output_type = _library.DATA_TYPES[output]
    p.a_major = _major(function, "a_major", a_major, "m")
    p.b_major = _major(function, "b_major", b_major, "n")
    p.bias = _choice(function, "bias", bias, dict(_library.BIASES, none=0))
    p.bias_type = _library.DATA_TYPES[dtype_name(function, "bias_dtype", bias_dtype)]
    p.activation = _choice(function, "activation", activation,
                           dict(_library.ACTIVATIONS, none=0))
    p.alpha = float_value(function, "alpha", alpha)
    p.beta = float_value(function, "beta", beta)
    p.scaling = scaling_value(function, scaling)
    p.fast_accumulation = _flag(function, "fast_accum", fast_accum)
    p.record_amax = _flag(function, "record_amax", record_amax)
    p.grouping = _choice(function, "grouping", grouping, dict(_library.GROUPINGS, none=0))
    return p


# problem()'s keywords (ptxgen.plan's and ptxgen.spans's), in order.
PROBLEM_KEYWORDS = tuple(inspect.signature(problem).parameters)[1:]


def spans_of(p):
    """The spans of ptxgenGemmProblem_t `p` (ptxgenGemmGetSpans) as a dict
    of "a", "b", "c", "d", "bias", "scale_a" and "scale_b"."""
    library, handle = _library.loaded()
    stored = _library.GemmSpans()
    _library.check(library.ptxgenGemmGetSpans(handle, ctypes.byref(p),
                                              ctypes.byref(stored)))
    return {name: getattr(stored, name) for name, _ in stored._fields_}


def key(p):
    """The problem's bytes: equal problems, equal keys (alpha -0.0 and 0.0
    differ, as in the kernel). Of a problem made here, whose padding ctypes
    zeroed."""
    return bytes(p)
