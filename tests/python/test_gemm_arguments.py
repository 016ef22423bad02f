"""How ptxgen.gemm reads its arguments, without a GPU: arrays given through
__cuda_array_interface__ (as CuPy, Numba and PyTorch give them), their
layouts found from their strides, what cannot be computed refused before
the library is asked, and, with no device, the library's refusal."""
import contextlib
import os
import subprocess
import sys

import pytest

import ptxgen
from ptxgen import _arrays, _gemm

BASE = 0x7F0000000000  # fake device addresses, 16-byte aligned


class FakeCudaArray:
    """The interface of a device array, with no memory behind it."""

    def __init__(self, shape, typestr="<f2", strides=None, offset=0, readonly=False):
        item = int(typestr[2:])
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "version": 3,
            "data": (BASE + offset, readonly),
            "strides": None if strides is None else tuple(s * item for s in strides),
            "stream": None,
        }


def f32(*shape, **keywords):
    return FakeCudaArray(shape, typestr="<f4", **keywords)


def s8(*shape, **keywords):
    return FakeCudaArray(shape, typestr="|i1", **keywords)


def s32(*shape, **keywords):
    return FakeCudaArray(shape, typestr="<i4", **keywords)


def transposed(rows, columns, **keywords):
    """The .T of a contiguous [columns, rows] array: [rows, columns] with
    stride 1 along the rows."""
    return FakeCudaArray((rows, columns), strides=(1, rows), **keywords)


def plan_call(a, b, **keywords):
    """_gemm.plan_call, with what it holds given back as gemm gives it back."""
    with contextlib.ExitStack() as holds:
        return _gemm.plan_call(a, b, holds=holds, **keywords)


def problem_of(a, b, out, **keywords):
    problem, _, _, _ = plan_call(a, b, out=out, **keywords)
    return {name: getattr(problem, name) for name, _ in problem._fields_}


K, MN = 0, 1  # ptxgenMajor_t


def test_contiguous_a_is_k_major_and_contiguous_b_is_mn_major_as_in_matmul():
    p = problem_of(FakeCudaArray((256, 512)), FakeCudaArray((512, 128)), FakeCudaArray((256, 128)))
    assert (p["m"], p["n"], p["k"]) == (256, 128, 512)
    assert (p["a_major"], p["lda"]) == (K, 512)
    assert (p["b_major"], p["ldb"]) == (MN, 128)
    assert (p["ldd"], p["batch"]) == (128, 1)


def test_a_transposed_weight_is_k_major_b_as_in_linear():
    weight_t = transposed(512, 128)  # w.t() of a [128, 512] weight
    p = problem_of(FakeCudaArray((256, 512)), weight_t, FakeCudaArray((256, 128)))
    assert (p["b_major"], p["ldb"]) == (K, 512)


def test_a_transposed_a_is_mn_major():
    p = problem_of(transposed(256, 512), FakeCudaArray((512, 128)), FakeCudaArray((256, 128)))
    assert (p["a_major"], p["lda"]) == (MN, 256)


def test_leading_dimensions_are_the_row_strides_of_padded_arrays():
    a = FakeCudaArray((256, 512), strides=(520, 1))
    b = FakeCudaArray((512, 128), strides=(136, 1))
    out = FakeCudaArray((256, 128), typestr="<f4", strides=(144, 1))
    p = problem_of(a, b, out)
    assert (p["lda"], p["ldb"], p["ldd"]) == (520, 136, 144)
    assert p["output_type"] == 2  # f32


def test_three_dimensional_arrays_are_a_strided_batch():
    a = FakeCudaArray((4, 256, 512))
    b = FakeCudaArray((4, 512, 128))
    out = FakeCudaArray((4, 256, 128))
    p = problem_of(a, b, out)
    assert p["batch"] == 4
    assert (p["stride_a"], p["stride_b"], p["stride_d"]) == (256 * 512, 512 * 128, 256 * 128)


def test_the_epilogue_comes_from_the_keywords_and_the_bias_from_its_array():
    out = FakeCudaArray((256, 128))
    p = problem_of(FakeCudaArray((256, 512)), FakeCudaArray((512, 128)), out,
                   c=out, beta=0.5, alpha=2.0, bias=FakeCudaArray((128,), typestr="<f4"),
                   activation="gelu_tanh")
    assert (p["alpha"], p["beta"], p["ldc"]) == (2.0, 0.5, 128)
    assert (p["bias"], p["bias_type"], p["activation"]) == (2, 2, 3)  # along n, f32, gelu_tanh
    rows = problem_of(FakeCudaArray((256, 512)), FakeCudaArray((512, 128)), out,
                      bias=FakeCudaArray((256,)), bias_along="m")
    assert (rows["bias"], rows["bias_type"]) == (1, 0)  # along m, f16
    batched = problem_of(FakeCudaArray((2, 256, 512)), FakeCudaArray((2, 512, 128)),
                         FakeCudaArray((2, 256, 128)), bias=FakeCudaArray((2, 128)))
    assert batched["stride_bias"] == 128


def expect_refused(rule, a, b, out, **keywords):
    with pytest.raises(ptxgen.Error) as refused:
        plan_call(a, b, out=out, **keywords)
    assert refused.value.status == "PTXGEN_STATUS_INVALID_VALUE"
    assert rule in str(refused.value), str(refused.value)


def test_refuses_what_no_kernel_reads_before_asking_the_library():
    a, b, out = FakeCudaArray((256, 512)), FakeCudaArray((512, 128)), FakeCudaArray((256, 128))
    expect_refused("a (256, 512) and b (384, 128) do not multiply", a,
                   FakeCudaArray((384, 128)), out)
    expect_refused("out has shape (128, 256), not (256, 128)", a, b, FakeCudaArray((128, 256)))
    expect_refused("out must be row-major", a, b, transposed(256, 128))
    expect_refused("ptxgen reads matrices with one of them 1", FakeCudaArray((256, 512), strides=(1024, 2)), b, out)
    expect_refused("has elements of type '<i8'; ptxgen takes '<f2' (f16), '<f4' (f32), '|i1' "
                   "(s8), '|u1' (u8) and '<i4' (s32)", FakeCudaArray((256, 512), typestr="<i8"),
                   b, out)
    expect_refused("beta=1.0 reads C: give c=", a, b, out, beta=1.0)
    expect_refused("c is f32; it must have out's type, f16", a, b, out, beta=1.0,
                   c=FakeCudaArray((256, 128), typestr="<f4"))
    expect_refused("bias along n has shape (256,)", a, b, out, bias=FakeCudaArray((256,)))
    expect_refused("bias_along='k' is not one of 'm', 'n'", a, b, out,
                   bias=FakeCudaArray((128,)), bias_along="k")
    expect_refused("activation='tanh' is not one of", a, b, out, activation="tanh")
    expect_refused("out is read-only", a, b, FakeCudaArray((256, 128), readonly=True))
    expect_refused("a has shape (4, 2, 256, 512)", FakeCudaArray((4, 2, 256, 512)), b, out)
    expect_refused("b has shape (512, 128); with a of 3 dimensions it needs 3",
                   FakeCudaArray((2, 256, 512)), b, out)
    expect_refused("b has shape (512, 128) and strides (0, 1); ptxgen reads arrays whose "
                   "elements each have memory of their own, stored with positive strides: "
                   "not broadcasts (stride 0)", a,
                   FakeCudaArray((512, 128), strides=(0, 1)), out)  # a row expanded
    # An empty array stores nothing: its sizes meet the library's own rule
    # (m 1 or more), not this one.
    assert problem_of(FakeCudaArray((0, 512), strides=(0, 1)), b,
                      FakeCudaArray((0, 128)))["m"] == 0
    expect_refused("not broadcasts", FakeCudaArray((2, 256, 512), strides=(0, 512, 1)),
                   FakeCudaArray((2, 512, 128)), FakeCudaArray((2, 256, 128)))
    expect_refused("give out= for a f16 result of arrays other than torch tensors", a, b, None)
    expect_refused("a (a list) is neither a torch tensor nor an object with "
                   "__cuda_array_interface__ or DLPack's __dlpack__ and __dlpack_device__",
                   [[1.0]], b, out)


def test_float32_arrays_with_dtype_tf32_are_a_tf32_gemm_into_f32():
    a, weight_t = f32(256, 512), transposed(512, 128, typestr="<f4")
    p = problem_of(a, weight_t, f32(256, 128), dtype="tf32")
    assert (p["input_type"], p["b_input_type"], p["output_type"]) == (5, 5, 2)  # tf32, f32
    assert (p["b_major"], p["ldb"]) == (K, 512)
    # Without out=, the library's default output type is named.
    expect_refused("give out= for a f32 result", a, weight_t, None, dtype="tf32")


def test_scales_ask_for_per_tensor_scaling_and_amax_for_its_recording():
    a, b, out = FakeCudaArray((256, 512)), transposed(512, 128), FakeCudaArray((256, 128))
    plain = problem_of(a, b, out)
    assert (plain["scaling"], plain["fast_accumulation"], plain["record_amax"]) == (0, 0, 0)
    problem, arrays, _, _ = plan_call(a, b, out=out, scale_a=f32(1), scale_b=f32(),
                                      amax=f32(1, 1, offset=16), fast_accum=True)
    assert (problem.scaling, problem.fast_accumulation, problem.record_amax) == (1, 1, 1)
    assert arrays["scale_a"].pointer == arrays["scale_b"].pointer == BASE
    assert arrays["amax"].pointer == BASE + 16


def test_refuses_scales_and_types_that_make_no_sense_before_the_library():
    a, b, out = FakeCudaArray((256, 512)), transposed(512, 128), FakeCudaArray((256, 128))
    expect_refused("scale_a must be one float32 element, not shape (2,) of f32", a, b, out,
                   scale_a=f32(2))
    expect_refused("scale_b must be one float32 element, not shape (1,) of f16", a, b, out,
                   scale_b=FakeCudaArray((1,)))
    expect_refused("scale_d scales an e4m3 or e5m2 out, not f16", a, b, out, scale_d=f32(1))
    expect_refused("amax is read-only", a, b, out, amax=f32(1, readonly=True))
    expect_refused("fast_accum='yes' is not True or False", a, b, out, fast_accum="yes")
    expect_refused("dtype='tf32' multiplies float32 arrays with tf32 tensor cores; a is f16",
                   a, b, out, dtype="tf32")
    expect_refused("dtype='f16' is not None (the arrays' types) or 'tf32'", a, b, out,
                   dtype="f16")


def test_types_that_do_not_mix_are_refused_by_the_librarys_rule():
    # Before any device is looked for: the problem's rules come first.
    with pytest.raises(ptxgen.Error) as refused:
        ptxgen.gemm(FakeCudaArray((256, 512)), transposed(512, 128, typestr="<f4"),
                    out=FakeCudaArray((256, 128)))
    assert refused.value.status == "PTXGEN_STATUS_INVALID_VALUE"
    assert ("ptxgenGemmPrepare: GEMM: A and B differ in type only as e4m3 with e5m2 (fp8) "
            "or s8 with u8, not f16 with f32") in str(refused.value)


def test_8_bit_integer_arrays_are_s8_or_u8_into_s32():
    weight_t = transposed(512, 128, typestr="|u1")  # w.t() of a [128, 512] uint8 w
    p = problem_of(s8(256, 512), weight_t, s32(256, 128))
    assert (p["input_type"], p["b_input_type"], p["output_type"]) == (6, 7, 8)  # s8, u8, s32
    assert (p["b_major"], p["ldb"], p["ldd"]) == (K, 512, 128)
    requantized = problem_of(s8(256, 512), weight_t, s8(256, 128), alpha=0.125)
    assert (requantized["output_type"], requantized["alpha"]) == (6, 0.125)
    # Without out=, the library's default output type (s32) is named.
    expect_refused("give out= for a s32 result", s8(256, 512), weight_t, None)
    expect_refused("give out= for a s8 result", s8(256, 512), weight_t, None, out_dtype="int8")
    expect_refused("out is s32, not out_dtype 'f32'", s8(256, 512), weight_t, s32(256, 128),
                   out_dtype="f32")


def test_tf32_is_no_out_dtype():
    # tf32 names how float32 inputs are multiplied; no array stores it.
    expect_refused("out_dtype='tf32' is not a type of D", FakeCudaArray((256, 512), "<f4"),
                   transposed(512, 128, typestr="<f4"), None, dtype="tf32", out_dtype="tf32")


def test_integer_rules_are_the_librarys():
    # Refused by ptxgenGemmPrepare before any device is looked for.
    a, weight_t, out = s8(256, 512), transposed(512, 128, typestr="|i1"), s32(256, 128)
    for rule, b, keywords in (
            ("MN-major operands need f16 or bf16 inputs", s8(512, 128), {}),
            ("an s32 D takes no C", weight_t, dict(c=out, beta=1.0)),
            ("an s32 D is the exact sums: alpha must be 1, not 0.5", weight_t,
             dict(alpha=0.5)),
            ("an s32 D is the exact sums (alpha 1, no bias, activation or amax)", weight_t,
             dict(bias=f32(128))),
            ("per-tensor or block scales and fast accumulation are for fp8 inputs, not s8", weight_t,
             dict(scale_a=f32(1), scale_b=f32(1)))):
        with pytest.raises(ptxgen.Error) as refused:
            ptxgen.gemm(a, b, out=out, **keywords)
        assert refused.value.status == "PTXGEN_STATUS_INVALID_VALUE"
        assert f"ptxgenGemmPrepare: GEMM: {rule}" in str(refused.value), str(refused.value)


def test_the_stream_is_the_callers():
    array = _arrays.describe("a", FakeCudaArray((8, 8)), contextlib.ExitStack(), None)
    assert _arrays.stream_of(None, array) == 0  # the default stream
    assert _arrays.stream_of(0x1234, array) == 0x1234

    class TorchLikeStream:
        cuda_stream = 0x5678

    assert _arrays.stream_of(TorchLikeStream(), array) == 0x5678
    array.stream = 2  # the interface's per-thread default stream
    assert _arrays.stream_of(None, array) == 2


def test_without_a_device_the_library_refuses_with_no_device():
    script = """
import ptxgen, test_gemm_arguments as t
a, b, out = t.FakeCudaArray((256, 512)), t.FakeCudaArray((512, 128)), t.FakeCudaArray((256, 128))
try:
    ptxgen.gemm(a, b, out=out)
except ptxgen.Error as e:
    print(e.status, e)
"""
    # The driver is hidden in a process of its own: it is looked for once.
    environment = dict(os.environ, PTXGEN_LIBCUDA="/nonexistent/libcuda.so.1")
    environment["PYTHONPATH"] += os.pathsep + os.path.dirname(__file__)
    run = subprocess.run([sys.executable, "-c", script], env=environment,
                         capture_output=True, text=True, check=True)
    assert run.stdout.startswith("PTXGEN_STATUS_NO_DEVICE ptxgenGemmPrepare: no CUDA driver "
                                 "found: cannot load /nonexistent/libcuda.so.1"), run.stdout


class Interfaced:
    """An object whose __cuda_array_interface__ is whatever it is given."""

    def __init__(self, interface):
        self.__cuda_array_interface__ = interface


MISSING = object()


def interface_of(**changes):
    """A's valid interface, [256, 512] of f16, with `changes` made to it
    (MISSING: the key removed)."""
    interface = dict(FakeCudaArray((256, 512)).__cuda_array_interface__, **changes)
    return Interfaced({key: value for key, value in interface.items() if value is not MISSING})


@pytest.mark.parametrize("a, rule", [
    (Interfaced(None), "a.__cuda_array_interface__ is a NoneType, not a dict"),
    (Interfaced([]), "a.__cuda_array_interface__ is a list, not a dict"),
    (interface_of(data=MISSING), "a.__cuda_array_interface__ has no 'data', which the "
                                 "interface requires"),
    (interface_of(shape=MISSING), "has no 'shape'"),
    (interface_of(typestr=MISSING), "has no 'typestr'"),
    (interface_of(version=MISSING), "has no 'version'"),
    (interface_of(version=99), "a.__cuda_array_interface__ is of version 99; ptxgen reads "
                               "versions 0 to 3"),
    (interface_of(version="3"), "a's interface version='3' is not an integer"),
    (interface_of(typestr=["<f2"]), "a has elements of type ['<f2']; ptxgen takes '<f2'"),
    (interface_of(data=()), "a's interface data=() is not a pair (pointer, read-only flag)"),
    (interface_of(data=(BASE, "no")), "is not a pair (pointer, read-only flag)"),
    (interface_of(shape=256), "a's interface shape 256 is not a tuple of integers"),
    (interface_of(shape=(256, "512")), "a's interface shape='512' is not an integer"),
    (interface_of(shape=(256, True)), "a's interface shape=True is not an integer"),
    (interface_of(shape=(256, -512), strides=(2, 2)), "a has shape (256, -512); ptxgen "
                                                      "reads arrays of at most 3 dimensions, "
                                                      "of sizes 0 or more"),
    (interface_of(strides=(1024,)), "a has shape (256, 512) but strides (1024,): one "
                                    "stride per dimension"),
    (interface_of(strides=(1024, 2, 2)), "one stride per dimension"),
    (interface_of(strides=(1024, 2.0)), "a's interface strides=2.0 is not an integer"),
    (interface_of(stream="0x10"), "a's interface stream='0x10' is not an integer"),
    (interface_of(stream=-1), "a's interface stream=-1 is not an address (0 to 2**64-1)"),
], ids=lambda case: case if isinstance(case, str) else None)
def test_an_interface_that_breaks_the_protocol_is_refused_naming_what_it_lacks(a, rule):
    expect_refused(rule, a, FakeCudaArray((512, 128)), FakeCudaArray((256, 128)))


@pytest.mark.parametrize("pointer, rule", [
    (None, "a's address=None is not an integer"),
    (2**64 + BASE, f"a's address={2**64 + BASE} is not an address (0 to 2**64-1)"),
    (-BASE, f"a's address={-BASE} is not an address"),
    (0, "a has elements but its address is 0 (NULL)"),
])
def test_pointers_ctypes_would_change_are_refused_before_any_kernel_is_prepared(
        pointer, rule, monkeypatch):
    monkeypatch.setattr(_gemm, "prepared", lambda *_: pytest.fail("a kernel was prepared"))
    with pytest.raises(ptxgen.Error) as refused:
        ptxgen.gemm(interface_of(data=(pointer, False)), FakeCudaArray((512, 128)),
                    out=FakeCudaArray((256, 128)))
    assert rule in str(refused.value)


def test_an_empty_array_may_be_at_null():
    empty = _arrays.describe("a", interface_of(shape=(0, 512), data=(0, False)),
                           contextlib.ExitStack(), None)
    assert (empty.pointer, empty.shape) == (0, (0, 512))


class StreamOf:
    """A stream object as torch's (cuda_stream) with any handle."""

    def __init__(self, handle):
        self.cuda_stream = handle


@pytest.mark.parametrize("stream, rule", [
    (StreamOf("0x10"), "stream.cuda_stream='0x10' is not an integer"),
    (StreamOf(None), "stream.cuda_stream=None is not an integer"),
    (StreamOf(2**64), f"stream.cuda_stream={2**64} is not an address (0 to 2**64-1)"),
    (True, "stream=True is not an integer"),
    (-1, "stream=-1 is not an address"),
])
def test_streams_are_handles_checked_before_any_kernel_is_prepared(stream, rule, monkeypatch):
    monkeypatch.setattr(_gemm, "prepared", lambda *_: pytest.fail("a kernel was prepared"))
    with pytest.raises(ptxgen.Error) as refused:
        ptxgen.gemm(FakeCudaArray((256, 512)), FakeCudaArray((512, 128)),
                    out=FakeCudaArray((256, 128)), stream=stream)
    assert rule in str(refused.value)


def test_scaling_is_an_exact_name_before_the_scales_are_checked_against_it():
    a, b, out = FakeCudaArray((256, 512)), transposed(512, 128), FakeCudaArray((256, 128))
    for spelling in ("NONE", "None", []):
        # "NONE" lowercased after the check would run an unscaled GEMM.
        expect_refused(f"scaling={spelling!r} is not one of 'none', 'tensor', 'block' "
                       "(exactly, in lower case)", a, b, out, scaling=spelling,
                       scale_a=f32(1), scale_b=f32(1))


def test_keywords_that_are_no_names_are_refused_as_errors():
    a, b, out = FakeCudaArray((256, 512)), FakeCudaArray((512, 128)), FakeCudaArray((256, 128))
    expect_refused("bias_along=['n'] is not one of 'm', 'n'", a, b, out,
                   bias=FakeCudaArray((128,)), bias_along=["n"])
    expect_refused("activation={} is not one of", a, b, out, activation={})
    expect_refused("alpha=1e-50 underflows f32", a, b, out, alpha=1e-50)
    expect_refused("alpha=100000000000000000...0000000000000000000 is not a finite f32",
                   a, b, out, alpha=10**400)  # echoed cut short
    expect_refused("beta='0.5' is not a number", a, b, out, beta="0.5")
