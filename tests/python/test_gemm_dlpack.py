"""How ptxgen.gemm reads DLPack arrays (__dlpack__ and __dlpack_device__),
without a GPU: capsules made here with ctypes as a producer makes them, read
into what __cuda_array_interface__ gives (pointer, shape, strides, type),
what ptxgen cannot take refused, and each capsule taken over as the
protocol says: renamed "used_dltensor", its deleter called once, by ptxgen,
when the call is done, and never again by the capsule's destructor."""
import contextlib
import ctypes
import os
import subprocess
import sys

import pytest

import ptxgen
from ptxgen import _arrays, _dlpack, _gemm
from test_gemm_arguments import BASE, FakeCudaArray, plan_call, problem_of

# DLDataType (code, bits, lanes) and DLDeviceType, as dlpack.h has them.
F16, BF16, F32 = (2, 16, 1), (4, 16, 1), (2, 32, 1)
E4M3, E5M2 = (10, 8, 1), (12, 8, 1)  # kDLFloat8_e4m3fn, kDLFloat8_e5m2
S8, U8, S32 = (0, 8, 1), (1, 8, 1), (0, 32, 1)  # kDLInt, kDLUInt
KDL_CPU, KDL_CUDA, KDL_CUDA_MANAGED = 1, 2, 13

# The producer's side of the capsule. The destructor takes the capsule as a
# bare address: made into an object it would be revived while freed.
_Destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 _Destructor)(("PyCapsule_New", ctypes.pythonapi))
_name_at = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_GetName", ctypes.pythonapi))
_pointer_at = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
# PyCapsule_New keeps the name's pointer: constants outlive the capsules.
UNUSED, USED = b"dltensor", b"used_dltensor"


@_Destructor
def _destroy_capsule(capsule):
    """As the protocol asks of producers: the tensor is deleted here only
    when no consumer took it over (renamed it "used_dltensor")."""
    name = _name_at(capsule)
    if name != USED:
        managed = ctypes.cast(_pointer_at(capsule, name), ctypes.POINTER(_dlpack.DLManagedTensor))
        managed.contents.deleter(managed)


def name_of(capsule):
    return _name_at(id(capsule))  # a PyObject* is its id() in CPython


class FakeDLPackArray:
    """A DLPack producer of a tensor with no memory behind it: each
    __dlpack__ gives a new capsule of one ctypes DLManagedTensor, whose
    deleter counts its calls; the streams asked for and the capsules given
    are kept to look at."""

    def __init__(self, shape, dtype=F16, strides=None, byte_offset=0,
                 device=(KDL_CUDA, 0), capsule_name=UNUSED, ndim=None, data=BASE):
        """shape None: a NULL shape; ndim: the DLTensor's, len(shape) unless given."""
        self.device = device
        self.capsule_name = capsule_name
        self.streams, self.capsules = [], []
        self._shape = None if shape is None else (ctypes.c_int64 * len(shape))(*shape)
        self._strides = None if strides is None else (ctypes.c_int64 * len(strides))(*strides)
        # The deleter holds the list, not self: no cycle, so the array and its
        # capsules go when the test drops them, their destructor still there.
        deletions = self._deletions = []
        self._deleter = _dlpack.Deleter(
            lambda managed: deletions.append(ctypes.addressof(managed.contents)))
        int64s = ctypes.POINTER(ctypes.c_int64)
        tensor = _dlpack.DLTensor(
            data, _dlpack.DLDevice(*device), len(shape) if ndim is None else ndim,
            _dlpack.DLDataType(*dtype),
            ctypes.cast(self._shape, int64s), ctypes.cast(self._strides, int64s), byte_offset)
        self._managed = _dlpack.DLManagedTensor(tensor, None, self._deleter)

    @property
    def deleted(self):
        """How often the deleter was called, each time for this tensor."""
        assert set(self._deletions) <= {ctypes.addressof(self._managed)}
        return len(self._deletions)

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        capsule = _capsule_new(ctypes.addressof(self._managed), self.capsule_name,
                               _destroy_capsule)
        self.capsules.append(capsule)
        return capsule


def seen(array):
    """What the rest of ptxgen.gemm reads of an argument."""
    return array.pointer, array.shape, array.strides, array.dtype


def described(x, stream=0):
    """describe_dlpack's _Array of x, its capsule given back."""
    with contextlib.ExitStack() as holds:
        return _arrays.describe_dlpack("a", x, holds, stream)


@pytest.mark.parametrize("shape, strides, offset, dtype, typestr", [
    ((256, 512), None, 0, F16, "<f2"),
    ((256, 512), (1, 256), 64, F16, "<f2"),  # a.t() of a [512, 256]
    ((2, 256, 520), (256 * 528, 528, 1), 16, F32, "<f4"),  # padded rows, a batch
])
def test_pointer_shape_strides_and_type_are_read_as_the_interface_gives_them(
        shape, strides, offset, dtype, typestr):
    dlpack = described(FakeDLPackArray(shape, dtype, strides, byte_offset=offset))
    with contextlib.ExitStack() as holds:
        interface = _arrays.describe("a", FakeCudaArray(shape, typestr, strides, offset), holds, 0)
    assert seen(dlpack) == seen(interface)
    assert dlpack.pointer == BASE + offset
    assert (dlpack.library, dlpack.device, dlpack.readonly) == (None, 0, False)


def test_null_strides_are_row_major():
    assert described(FakeDLPackArray((2, 3, 4))).strides == (12, 4, 1)


def test_element_types_are_read_by_code_and_bits():
    assert [described(FakeDLPackArray((8, 8), dtype)).dtype
            for dtype in (F16, BF16, F32, E4M3, E5M2, S8, U8, S32)] == [
                "f16", "bf16", "f32", "e4m3", "e5m2", "s8", "u8", "s32"]


def eight_bit_operands(a_type, b_type, out_type=BF16):
    """a [256,512] and b = w.t() of a [128,512] w (K-major, as fp8 and s8/u8 need)."""
    return (FakeDLPackArray((256, 512), a_type), FakeDLPackArray((512, 128), b_type, (1, 512)),
            FakeDLPackArray((256, 128), out_type))


def test_fp8_arrays_are_e4m3_or_e5m2_and_b_keeps_its_own_type():
    same = problem_of(*eight_bit_operands(E4M3, E4M3))
    assert (same["input_type"], same["b_input_type"], same["output_type"]) == (3, 3, 1)
    mixed = problem_of(*eight_bit_operands(E4M3, E5M2, out_type=E4M3))
    assert (mixed["input_type"], mixed["b_input_type"], mixed["output_type"]) == (3, 4, 3)
    assert (mixed["b_major"], mixed["ldb"]) == (0, 512)  # K-major


def test_block_scales_are_compact_float32_arrays_of_the_librarys_counts():
    # k=512: 4 k-blocks of A's 256 rows; n=128: one column block of B.
    a, b, out = eight_bit_operands(E4M3, E4M3)
    scale_a, scale_b = FakeDLPackArray((4, 256), F32), FakeDLPackArray((4,), F32)
    block = problem_of(a, b, out, scaling="block", scale_a=scale_a, scale_b=scale_b)
    assert block["scaling"] == 2  # PTXGEN_SCALING_BLOCK
    expect_refused("with scaling='block', scale_a must be 1024 contiguous float32 "
                   "elements (ptxgen.spans), not shape (1,) of f32", a, b, out=out,
                   scaling="block", scale_a=FakeDLPackArray((1,), F32), scale_b=scale_b)
    expect_refused("scale_b must be 4 contiguous float32 elements (ptxgen.spans), not "
                   "shape (4,) of f32 with strides (2,)", a, b, out=out, scaling="block",
                   scale_a=scale_a, scale_b=FakeDLPackArray((4,), F32, strides=(2,)))
    expect_refused("scale_b must be 4 contiguous float32 elements", a, b, out=out,
                   scaling="block", scale_a=scale_a, scale_b=FakeDLPackArray((4,), F16))
    expect_refused("scale_a given with scaling='none', which reads no scales", a, b,
                   out=out, scaling="none", scale_a=scale_a)
    # Scales given without scaling= are per-tensor ones: one float each.
    expect_refused("scale_a must be one float32 element, not shape (4, 256)", a, b,
                   out=out, scale_a=scale_a, scale_b=scale_b)


def test_an_fp8_result_is_allocated_only_for_torch_and_names_the_default_type():
    a, b, _ = eight_bit_operands(E5M2, E5M2)
    expect_refused("give out= for a bf16 result", a, b, out=None)


def test_integer_arrays_are_s8_or_u8_into_s32_or_s8():
    exact = problem_of(*eight_bit_operands(U8, S8, out_type=S32))
    assert (exact["input_type"], exact["b_input_type"], exact["output_type"]) == (7, 6, 8)
    requantized = problem_of(*eight_bit_operands(S8, S8, out_type=S8), alpha=0.25)
    assert (requantized["input_type"], requantized["output_type"]) == (6, 6)
    a, b, _ = eight_bit_operands(S8, U8)
    expect_refused("give out= for a s32 result", a, b, out=None)


def test_the_device_is_the_tensors_and_managed_memory_is_taken():
    array = described(FakeDLPackArray((8, 8), device=(KDL_CUDA_MANAGED, 3)))
    assert array.device == 3


def test_layouts_come_from_the_strides_as_through_the_interface():
    def transposed_operands(fake, element):
        return (fake((256, 512), element, (1, 256)),  # MN-major A
                fake((512, 128), element, (1, 512)),  # K-major B, as w.t()
                fake((256, 128), element))
    through_dlpack = problem_of(*transposed_operands(FakeDLPackArray, F16),
                                bias=FakeDLPackArray((128,), F32))
    through_interface = problem_of(*transposed_operands(FakeCudaArray, "<f2"),
                                   bias=FakeCudaArray((128,), "<f4"))
    assert through_dlpack == through_interface
    assert (through_dlpack["a_major"], through_dlpack["lda"]) == (1, 256)  # MN-major
    assert (through_dlpack["b_major"], through_dlpack["ldb"]) == (0, 512)  # K-major
    bf16 = problem_of(*transposed_operands(FakeDLPackArray, BF16))
    assert (bf16["input_type"], bf16["output_type"]) == (1, 1)


def expect_refused(rule, *arrays, **keywords):
    with pytest.raises(ptxgen.Error) as refused:
        plan_call(*arrays, **keywords)
    assert refused.value.status == "PTXGEN_STATUS_INVALID_VALUE"
    assert rule in str(refused.value), str(refused.value)


def operands(**a_keywords):
    return (FakeDLPackArray((256, 512), **a_keywords), FakeDLPackArray((512, 128)),
            FakeDLPackArray((256, 128)))


def test_refuses_a_tensor_on_another_device_naming_it_before_it_is_exported():
    for device, found in (((KDL_CPU, 0), "kDLCPU (device type 1)"),
                          ((10, 0), "kDLROCM (device type 10)"),
                          ((99, 0), "an unknown DLDeviceType (device type 99)")):
        a, b, out = operands(device=device)
        expect_refused(f"ptxgen.gemm: a is on {found}, not on a CUDA device "
                       "(kDLCUDA or kDLCUDAManaged)", a, b, out=out)
        assert (a.streams, a.deleted) == ([], 0)


def test_refuses_what_ptxgen_does_not_read_and_gives_the_tensor_back():
    for dtype, rule in (((2, 16, 2), "a has vector elements of 2 lanes; ptxgen takes "
                                     "DLPack elements of 1 lane"),
                        ((0, 64, 1), "a has elements of DLPack type code 0, 64 bits; ptxgen "
                                     "takes float16 (2, 16), bfloat16 (4, 16), float32 (2, 32), "
                                     "float8_e4m3fn (10, 8), float8_e5m2 (12, 8), int8 (0, 8), "
                                     "uint8 (1, 8) and int32 (0, 32)"),
                        ((1, 32, 1), "a has elements of DLPack type code 1, 32 bits"),  # uint32
                        ((11, 8, 1), "a has elements of DLPack type code 11, 8 bits"),  # fnuz
                        ((2, 64, 1), "a has elements of DLPack type code 2, 64 bits")):
        a, b, out = operands(dtype=dtype)
        expect_refused(rule, a, b, out=out)
        assert a.deleted == 1
        assert name_of(a.capsules[0]) == USED
    a, b, out = operands(strides=(0, 1))  # a row expanded
    expect_refused("a has shape (256, 512) and strides (0, 1); ptxgen reads arrays whose "
                   "elements each have memory of their own", a, b, out=out)
    a, b, out = operands(strides=(1024, 2))
    expect_refused("ptxgen reads matrices with one of them 1", a, b, out=out)
    assert (a.deleted, b.deleted, out.streams) == (1, 1, [])  # refused before out was read
    a, b, out = operands()
    expect_refused("the arrays are on different devices (a on a CUDA array device 0, b on "
                   "a CUDA array device 1", a, FakeDLPackArray((512, 128), device=(KDL_CUDA, 1)),
                   out=out)


def test_a_capsule_is_held_for_the_call_renamed_and_deleted_once():
    a, b, out = operands()
    with contextlib.ExitStack() as holds:
        _gemm.plan_call(a, b, out=out, holds=holds)
        assert (a.deleted, b.deleted, out.deleted) == (0, 0, 0)  # still in use
    assert (a.deleted, b.deleted, out.deleted) == (1, 1, 1)
    assert [name_of(x.capsules[0]) for x in (a, b, out)] == [USED] * 3
    for x in (a, b, out):
        x.capsules.clear()  # the capsules' destructors run, finding them used
    assert (a.deleted, b.deleted, out.deleted) == (1, 1, 1)


def test_a_capsule_no_consumer_took_is_deleted_by_its_destructor():
    # What the rename above spares: a second call of the deleter.
    x = FakeDLPackArray((8, 8))
    x.__dlpack__()
    x.capsules.clear()  # the capsule's destructor runs
    assert x.deleted == 1


def test_refuses_a_capsule_of_another_name_and_leaves_it_to_its_destructor():
    a, b, out = operands(capsule_name=b"dltensor_versioned")
    expect_refused("ptxgen.gemm: a.__dlpack__() gave no capsule named 'dltensor'",
                   a, b, out=out)
    assert (a.deleted, name_of(a.capsules[0])) == (0, b"dltensor_versioned")
    a.capsules.clear()
    assert a.deleted == 1


def test_arrays_are_exported_for_the_stream_the_gemm_runs_on():
    for stream, exported in ((None, 1), (0, 1), (2, 2), (0x1234, 0x1234)):
        a, b, out = operands()
        assert plan_call(a, b, out=out, stream=stream)[3] == (stream or 0)
        assert a.streams == b.streams == out.streams == [exported]  # 1: the legacy default

    class TorchLikeStream:
        cuda_stream = 0x5678

    a, b, out = operands()
    plan_call(a, b, out=out, stream=TorchLikeStream())
    assert a.streams == b.streams == out.streams == [0x5678]


class FakeArrayOfBoth(FakeDLPackArray):
    """An array with __cuda_array_interface__ and DLPack, as CuPy's."""

    def __init__(self, shape):
        super().__init__(shape)
        self.__cuda_array_interface__ = FakeCudaArray(shape).__cuda_array_interface__


def test_the_interface_is_read_where_both_are_and_dlpack_can_be_forced():
    both = FakeArrayOfBoth((256, 512))
    with contextlib.ExitStack() as holds:
        interface = _arrays.describe("a", both, holds, 0)
    assert both.streams == []
    assert seen(described(both)) == seen(interface)
    assert (both.streams, both.deleted) == ([1], 1)


def refusals_in_a_process(arrays):
    """The messages of describe_dlpack's refusals of the FakeDLPackArrays
    that the expression `arrays` makes, read in a process of their own: a
    shape read unchecked can be a segmentation fault."""
    script = f"""
import ptxgen, test_gemm_dlpack as t
for x in {arrays}:
    try:
        t.described(x)
    except ptxgen.Error as e:
        print(e)
    x.capsules.clear()
"""
    environment = dict(os.environ)
    environment["PYTHONPATH"] += os.pathsep + os.path.dirname(__file__)
    run = subprocess.run([sys.executable, "-c", script], env=environment,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def test_a_null_shape_is_refused_not_read():
    assert refusals_in_a_process("(t.FakeDLPackArray(None, ndim=2), "
                                 "t.FakeDLPackArray(None, strides=(512, 1), ndim=2))") == [
        "ptxgen.gemm: a's DLPack shape is NULL, with ndim 2"] * 2


def test_ndim_is_checked_before_the_shape_is_read():
    # Read, 1000 would print words past the shape array, 2**31-1 run out of memory.
    ndims = (4, 1000, 2**31 - 1, -1, -2**31)
    assert refusals_in_a_process(f"(t.FakeDLPackArray((256, 512), ndim=n) for n in {ndims})") == [
        f"ptxgen.gemm: a has {ndim} dimensions (DLPack ndim); ptxgen reads arrays of 0 to 3"
        for ndim in ndims]


def test_a_scalar_may_have_a_null_shape():
    assert described(FakeDLPackArray(None, F32, ndim=0)).shape == ()


@pytest.mark.parametrize("data, offset, rule", [
    (None, 0, "a has elements but its address is 0 (NULL)"),
    (2**64 - 16, 32, f"a's address={2**64 + 16} is not an address (0 to 2**64-1)"),
])
def test_the_data_pointer_and_offset_make_an_address(data, offset, rule):
    _, b, out = operands()
    expect_refused(rule, FakeDLPackArray((256, 512), data=data, byte_offset=offset), b,
                   out=out)


@pytest.mark.parametrize("device, rule", [
    (None, "a.__dlpack_device__() gave None, not a pair (device type, device id)"),
    ((KDL_CUDA,), "a.__dlpack_device__() gave (2,), not a pair"),
    ((KDL_CUDA, 0, 0), "not a pair"),
    (("cuda", 0), "a's DLPack device type='cuda' is not an integer"),
    ((KDL_CUDA, 0.5), "a's DLPack device id=0.5 is not an integer"),
])
def test_a_device_that_is_no_pair_of_integers_is_refused_before_export(device, rule):
    a, b, out = operands()
    a.__dlpack_device__ = lambda: device
    expect_refused(rule, a, b, out=out)
    assert a.streams == []


def test_a_failing_gemm_gives_its_tensors_back():
    script = """
import ptxgen, test_gemm_dlpack as t
a, b, out = t.operands()
try:
    ptxgen.gemm(a, b, out=out)
except ptxgen.Error as e:
    print(e.status, a.deleted, b.deleted, out.deleted)
for x in (a, b, out):  # while their destructor is there to call
    x.capsules.clear()
"""
    # The driver is hidden in a process of its own: it is looked for once.
    environment = dict(os.environ, PTXGEN_LIBCUDA="/nonexistent/libcuda.so.1")
    environment["PYTHONPATH"] += os.pathsep + os.path.dirname(__file__)
    run = subprocess.run([sys.executable, "-c", script], env=environment,
                         capture_output=True, text=True, check=True)
    assert run.stdout == "PTXGEN_STATUS_NO_DEVICE 1 1 1\n", run.stdout + run.stderr
