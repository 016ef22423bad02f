"""What ptxgen.gemm reads of its arguments, under random input: DLPack
capsules (DLTensors of any ndim, shape, strides, NULLs, type codes,
devices and addresses), __cuda_array_interface__ values (dicts with keys
missing or of any value, and things that are no dict) and the keywords.
Each reader gives a well-formed array or raises ptxgen.Error, never another
exception and never a crash; a capsule's tensor is deleted once. Hypothesis
is derandomized and keeps no database: every run tries the same cases, in
a few seconds, and leaves no files."""
import contextlib

from hypothesis import HealthCheck, given, settings, strategies as st

import ptxgen
from ptxgen import _arrays, _library, _problem
from test_gemm_arguments import BASE, FakeCudaArray, Interfaced, plan_call
from test_gemm_dlpack import UNUSED, FakeDLPackArray

FUZZ = settings(derandomize=True, database=None, max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

INT64 = st.integers(-2**63, 2**63 - 1)
# Any code points, surrogates too; st.text() would cache a table of them in
# the checkout.
TEXT = st.lists(st.integers(0, 0x10FFFF).map(chr), max_size=6).map("".join)
SIZES = st.one_of(st.integers(-2, 300), INT64)
ADDRESSES = st.one_of(st.just(BASE), st.integers(0, 2**64 - 1))
# Values of no meaning for any key, keyword or element of one.
JUNK = st.one_of(
    st.none(), st.booleans(), INT64, st.integers(-2**70, 2**70), st.floats(),
    TEXT, st.binary(max_size=4),
    st.lists(st.integers(-2, 2**64), max_size=5).map(tuple), st.lists(st.integers(), max_size=3),
    st.dictionaries(TEXT, st.integers(), max_size=2))


def assert_well_formed(array):
    """What the rest of ptxgen.gemm counts on of a reader's _Array."""
    assert isinstance(array.pointer, int) and 0 <= array.pointer < 2**64
    assert isinstance(array.shape, tuple) and len(array.shape) <= 3
    assert all(type(size) is int and 0 <= size < 2**63 for size in array.shape)
    assert array.pointer != 0 or 0 in array.shape
    assert isinstance(array.strides, tuple) and len(array.strides) == len(array.shape)
    assert all(type(stride) is int for stride in array.strides)
    assert array.dtype in _library.DATA_TYPES
    assert array.stream is None or 0 <= array.stream < 2**64
    assert isinstance(array.readonly, bool)


def read_or_refuse(x):
    """describe's _Array of x, or None where it raised ptxgen.Error."""
    with contextlib.ExitStack() as holds:
        try:
            array = _arrays.describe("a", x, holds, 0)
        except ptxgen.Error:
            return None
    assert_well_formed(array)
    return array


def mostly(good, other):
    """`good` three times in four: most cases reach past the first check."""
    return st.sampled_from((good, good, good, other)).flatmap(lambda chosen: chosen)


@st.composite
def dlpack_arrays(draw):
    ndim = draw(mostly(st.integers(0, 3), st.integers(-2**31, 2**31 - 1)))
    # As long as ndim says, to 8: a reader reads none past 3.
    length = min(max(ndim, 0), 8)
    shape = draw(mostly(st.lists(st.integers(0, 300), min_size=length, max_size=length),
                        st.one_of(st.none(), st.lists(SIZES, min_size=length,
                                                      max_size=length))))
    strides = draw(st.one_of(st.none(), st.lists(st.integers(1, 2**20), min_size=length,
                                                  max_size=length),
                             st.lists(INT64, min_size=length, max_size=length)))
    dtype = draw(mostly(st.sampled_from([(2, 16, 1), (4, 16, 1), (2, 32, 1), (10, 8, 1),
                                         (12, 8, 1), (0, 8, 1), (1, 8, 1), (0, 32, 1)]),
                        st.tuples(st.integers(0, 255), st.integers(0, 255),
                                  st.integers(0, 2**16 - 1))))
    device = draw(st.tuples(mostly(st.sampled_from([2, 13]), st.integers(-2**31, 2**31 - 1)),
                            st.integers(-2**31, 2**31 - 1)))
    byte_offset = draw(mostly(st.integers(0, 2**12), st.integers(0, 2**64 - 1)))
    name = draw(mostly(st.just(UNUSED), st.just(b"dltensor_versioned")))
    data = draw(mostly(st.just(BASE), st.one_of(st.none(), ADDRESSES)))
    x = FakeDLPackArray(shape, dtype, strides, byte_offset, device, name, ndim, data)
    if draw(st.integers(0, 7)) == 0:
        x.__dlpack_device__ = lambda junk=draw(JUNK): junk
    return x


@FUZZ
@given(dlpack_arrays())
def test_a_dlpack_capsule_is_read_or_refused_and_deleted_once(x):
    read_or_refuse(x)
    x.capsules.clear()  # a capsule no reader took is deleted by its destructor
    assert x.deleted == len(x.streams)


REQUIRED = {
    "version": mostly(st.sampled_from([0, 1, 2, 3]), JUNK),
    "shape": mostly(st.lists(st.integers(0, 300), max_size=3).map(tuple),
                    st.one_of(st.lists(SIZES, max_size=4).map(tuple), JUNK)),
    "typestr": mostly(st.sampled_from(["<f2", "<f4", "|i1", "|u1", "<i4"]), JUNK),
    "data": mostly(st.tuples(ADDRESSES, st.booleans()),
                   st.one_of(st.tuples(st.one_of(ADDRESSES, JUNK), JUNK), JUNK))}
OPTIONAL = {"strides": st.one_of(st.none(), st.lists(st.integers(-8, 2**20), max_size=4)
                                 .map(tuple), JUNK),
            "stream": mostly(st.one_of(st.none(), ADDRESSES), JUNK),
            "mask": mostly(st.none(), JUNK)}


@FUZZ
@given(mostly(st.fixed_dictionaries(REQUIRED, optional=OPTIONAL),
              st.one_of(st.fixed_dictionaries({}, optional={**REQUIRED, **OPTIONAL}), JUNK)))
def test_an_interface_is_read_or_refused(interface):
    read_or_refuse(Interfaced(interface))


KEYWORDS = {"alpha": st.one_of(st.floats(), JUNK), "beta": st.one_of(st.floats(), JUNK),
            "bias_along": st.one_of(st.sampled_from(["m", "n"]), JUNK),
            "activation": st.one_of(st.sampled_from([None, "relu", "gelu"]), JUNK),
            "scaling": st.one_of(st.sampled_from([None, "none", "tensor", "block"]), JUNK),
            "dtype": st.one_of(st.sampled_from([None, "tf32"]), JUNK),
            "out_dtype": st.one_of(st.sampled_from([None, "f16", "float16"]), JUNK),
            "stream": st.one_of(st.none(), ADDRESSES, JUNK),
            "fast_accum": st.one_of(st.booleans(), JUNK)}


@FUZZ
@given(st.fixed_dictionaries({}, optional=KEYWORDS))
def test_gemms_keywords_are_read_or_refused(keywords):
    try:
        plan_call(FakeCudaArray((256, 512)), FakeCudaArray((512, 128)),
                  out=FakeCudaArray((256, 128)), c=FakeCudaArray((256, 128)),
                  bias=FakeCudaArray((128,)), **keywords)
    except ptxgen.Error:
        pass


PROBLEM_KEYWORDS = {
    **{name: st.one_of(st.integers(0, 5000), JUNK) for name in ("m", "n", "k", "batch", "lda")},
    **{name: st.one_of(st.sampled_from(["f16", "e4m3", "torch.bfloat16", "s8"]), JUNK)
       for name in ("dtype", "b_dtype", "out_dtype", "bias_dtype")},
    "a_major": st.one_of(st.sampled_from(["k", "mn", "m"]), JUNK),
    "bias": st.one_of(st.sampled_from([None, "m", "n"]), JUNK),
    "scaling": st.one_of(st.sampled_from(["none", "tensor", "block", "NONE"]), JUNK),
    "alpha": st.one_of(st.floats(), JUNK), "record_amax": st.one_of(st.booleans(), JUNK)}


@FUZZ
@given(st.fixed_dictionaries({}, optional=PROBLEM_KEYWORDS))
def test_a_problems_keywords_are_read_or_refused(keywords):
    try:
        _problem.problem("fuzz", **{"m": 64, "n": 64, "k": 64, **keywords})
    except ptxgen.Error:
        pass
