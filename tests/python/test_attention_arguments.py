"""How ptxgen.attention reads its arguments, without a GPU: the attention
problem built from arrays shaped as FlashAttention's ([batch, seq, heads,
dim]), as scaled_dot_product_attention's ([batch, heads, seq, dim]) or
packed with variable lengths ([total, heads, dim]); strides and the memory
layout found from the arrays (views included); what cannot be computed
refused naming the rule, in Python or by the library; the out and LSE it
allocates (the operators' fake implementations follow the same rule); and
a repeated problem prepared once. Arrays come through
__cuda_array_interface__ (test_gemm_arguments' fakes) and as fake torch
tensors; the library's device half is faked where a run is needed."""
import contextlib
import ctypes
import os
import subprocess
import sys

import pytest

import ptxgen
from ptxgen import _arrays, _attention, _library
from test_gemm_arguments import BASE, FakeCudaArray, f32, s32
from test_gemm_fast_path import FakeTensor, FakeTorch
from test_plan import RaisingIndex

BSHD, BHSD = 0, 1  # ptxgenAttentionLayout_t


def compact(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return tuple(strides)


def bshd(batch, seq, heads, dim=64, **keywords):
    """A packed [batch, seq, heads, dim] f16 array."""
    return FakeCudaArray((batch, seq, heads, dim), **keywords)


def bhsd_view(batch, seq, heads, dim=64, **keywords):
    """x.view(batch, seq, heads, dim).transpose(1, 2): a [batch, heads, seq,
    dim] view of [batch, seq, heads, dim] memory, as attention code makes
    for scaled_dot_product_attention."""
    strides = compact((batch, seq, heads, dim))
    return FakeCudaArray((batch, heads, seq, dim),
                         strides=(strides[0], strides[2], strides[1], strides[3]), **keywords)


def plan_call(q, k, v, **keywords):
    with contextlib.ExitStack() as holds:
        return _attention.plan_call(q, k, v, holds=holds, **keywords)


def problem_of(q, k, v, **keywords):
    """The problem's fields, each tensor's strides as (batch, seq, head)."""
    if "out" not in keywords:
        keywords["out"] = FakeCudaArray(q.__cuda_array_interface__["shape"],
                                        strides=_strides_of(q))
    problem = plan_call(q, k, v, **keywords)[0]
    fields = {name: getattr(problem, name) for name, _ in problem._fields_}
    for name in ("q_stride", "k_stride", "v_stride", "o_stride"):
        stride = fields[name]
        fields[name] = (stride.batch, stride.seq, stride.head)
    return fields


def _strides_of(array):
    interface = array.__cuda_array_interface__
    strides = interface["strides"]
    item = int(interface["typestr"][2:])
    return None if strides is None else tuple(s // item for s in strides)


def expect_refused(rule, q, k, v, **keywords):
    with pytest.raises(ptxgen.Error) as refused:
        plan_call(q, k, v, **keywords)
    assert refused.value.status == "PTXGEN_STATUS_INVALID_VALUE"
    assert rule in str(refused.value), str(refused.value)
    assert str(refused.value).startswith("ptxgen.attention: "), str(refused.value)


class _RaisingDtype(FakeCudaArray):
    """Offsets whose dtype property raises, as a caller's bug would."""

    @property
    def dtype(self):
        raise KeyError("no dtype")


class _RaisingInterface:
    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("not on the device")


def test_what_a_callers_own_code_raises_is_an_error_naming_the_argument():
    q = FakeCudaArray((512, 8, 64))
    varlen = dict(cu_seqlens_q=s32(3), cu_seqlens_k=s32(3), max_seqlen_q=256,
                  max_seqlen_k=256, out=FakeCudaArray((512, 8, 64)))
    for change, words, cause in (
            (dict(max_seqlen_q=RaisingIndex()), "max_seqlen_q: its __index__ raised "
                                                 "ZeroDivisionError", ZeroDivisionError),
            (dict(cu_seqlens_k=_RaisingDtype((3,), "<i4")), "cu_seqlens_k: its dtype raised "
                                                           "KeyError", KeyError),
            (dict(out=_RaisingInterface()), "out: its array interface raised "
                                            "RuntimeError", RuntimeError)):
        with pytest.raises(ptxgen.Error) as refused:
            plan_call(q, q, q, **dict(varlen, **change))
        assert words in str(refused.value), str(refused.value)
        assert str(refused.value).startswith("ptxgen.attention: ")
        assert isinstance(refused.value.__cause__, cause)


def test_flash_attentions_shapes_are_the_packed_bshd_problem():
    p = problem_of(bshd(2, 256, 32, 128), bshd(2, 512, 8, 128), bshd(2, 512, 8, 128))
    assert (p["batch"], p["heads_q"], p["heads_kv"]) == (2, 32, 8)
    assert (p["seq_q"], p["seq_k"], p["head_dim"]) == (256, 512, 128)
    assert (p["layout"], p["variable_lengths"], p["total_q"], p["total_k"]) == (BSHD, 0, 0, 0)
    assert p["element_type"] == _library.DATA_TYPES["f16"]
    assert p["q_stride"] == (256 * 32 * 128, 32 * 128, 128)
    assert p["k_stride"] == p["v_stride"] == (512 * 8 * 128, 8 * 128, 128)
    assert p["o_stride"] == p["q_stride"]
    assert (p["causal"], p["scale"]) == (0, 0.0)  # 0: 1/sqrt(head_dim), the library's


def test_sdpas_contiguous_shapes_are_the_bhsd_problem():
    q = FakeCudaArray((2, 32, 256, 64))
    k = FakeCudaArray((2, 8, 512, 64))
    p = problem_of(q, k, FakeCudaArray((2, 8, 512, 64)), layout="bhsd")
    assert (p["heads_q"], p["heads_kv"], p["seq_q"], p["seq_k"]) == (32, 8, 256, 512)
    assert p["layout"] == BHSD
    assert p["q_stride"] == (32 * 256 * 64, 64, 256 * 64)
    assert p["k_stride"] == (8 * 512 * 64, 64, 512 * 64)


def test_a_transposed_view_is_read_as_the_memory_it_is():
    q, k, v = bhsd_view(2, 256, 32), bhsd_view(2, 512, 8), bhsd_view(2, 512, 8)
    p = problem_of(q, k, v, layout="bhsd")
    assert (p["heads_q"], p["seq_q"], p["seq_k"]) == (32, 256, 512)
    assert p["layout"] == BSHD  # heads inside rows, by the strides
    assert p["q_stride"] == (256 * 32 * 64, 32 * 64, 64)


def test_padded_and_sliced_tensors_keep_their_strides():
    # q, k and v sliced from one [batch, seq, 3, heads, dim] projection.
    qkv = dict(strides=(256 * 3 * 8 * 64, 3 * 8 * 64, 64, 1))
    p = problem_of(bshd(2, 256, 8, **qkv), bshd(2, 256, 8, offset=1024, **qkv),
                   bshd(2, 256, 8, offset=2048, **qkv), causal=True, scale=0.5)
    assert p["q_stride"] == p["k_stride"] == (256 * 3 * 8 * 64, 3 * 8 * 64, 64)
    assert p["o_stride"] == p["q_stride"]  # out given with q's strides
    assert (p["causal"], p["scale"]) == (1, 0.5)


def test_a_dimension_of_one_is_packed_whatever_its_stride():
    # Decoding: one query row per sequence, one sequence, one K/V head.
    q = FakeCudaArray((1, 1, 8, 64), strides=(12345, 999, 64, 1))
    k = FakeCudaArray((1, 300, 1, 64), strides=(7, 64, 5, 1))
    p = problem_of(q, k, k)
    assert p["q_stride"] == (0, 0, 64)
    assert p["k_stride"] == (0, 64, 0)
    assert p["layout"] == BSHD  # no tensor has more than one row and head


def test_variable_lengths_are_packed_rows_placed_by_the_offsets():
    q, k = FakeCudaArray((1000, 32, 128)), FakeCudaArray((3000, 8, 128))
    p = problem_of(q, k, FakeCudaArray((3000, 8, 128)), cu_seqlens_q=s32(5),
                   cu_seqlens_k=s32(5), max_seqlen_q=400, max_seqlen_k=1024, causal=True)
    assert (p["variable_lengths"], p["batch"], p["seq_q"], p["seq_k"]) == (1, 4, 400, 1024)
    assert (p["total_q"], p["total_k"]) == (1000, 3000)
    assert (p["heads_q"], p["heads_kv"], p["head_dim"]) == (32, 8, 128)
    assert p["q_stride"] == (0, 32 * 128, 128)
    assert p["k_stride"] == (0, 8 * 128, 128)


def test_every_array_is_passed_in_ptxgenAttentionRuns_order():
    q, k, v = bshd(1, 64, 4), bshd(1, 64, 4, offset=0x10000), bshd(1, 64, 4, offset=0x20000)
    out = bshd(1, 64, 4, offset=0x30000)
    _, arrays, given, lse, _ = plan_call(q, k, v, out=out)
    assert given is out and lse is None
    assert [arrays[name].pointer for name in ("q", "k", "v", "out")] == [
        BASE, BASE + 0x10000, BASE + 0x20000, BASE + 0x30000]


@pytest.mark.parametrize("keywords, rule", [
    (dict(layout="BSHD"), "layout='BSHD' is not one of 'bshd', 'bhsd'"),
    (dict(layout=None), "layout=None is not one of 'bshd', 'bhsd'"),
    (dict(causal=1), "causal=1 is not True or False"),
    (dict(return_lse="yes"), "return_lse='yes' is not True or False"),
    (dict(scale=0), "scale=0.0 must be finite and positive (None: 1/sqrt(head_dim))"),
    (dict(scale=float("nan")), "scale=nan is not a finite f32"),
    (dict(scale="0.5"), "scale='0.5' is not a number"),
    (dict(scale=1e-50), "scale=1e-50 underflows f32"),
    (dict(max_seqlen_q=128), "max_seqlen_q is for variable lengths; give cu_seqlens_q and "
                             "cu_seqlens_k with it"),
    (dict(cu_seqlens_q=s32(3)), "variable lengths need both cu_seqlens_q and cu_seqlens_k"),
    (dict(stream=-1), "stream=-1 is not an address"),
])
def test_keywords_are_checked_before_the_arrays_are_used(keywords, rule):
    expect_refused(rule, bshd(2, 64, 8), bshd(2, 64, 8), bshd(2, 64, 8),
                   out=bshd(2, 64, 8), **keywords)


@pytest.mark.parametrize("arrays, keywords, rule", [
    ((bshd(2, 64, 8), FakeCudaArray((2, 64, 8)), bshd(2, 64, 8)), {},
     "k has shape (2, 64, 8); with layout='bshd' it is [batch, seq, heads, head_dim] (or "
     "give cu_seqlens_q and cu_seqlens_k for [total, heads, head_dim])"),
    ((FakeCudaArray((2, 64, 8, 64), strides=(64 * 8 * 128, 8 * 128, 128, 2)),
      bshd(2, 64, 8), bshd(2, 64, 8)), {},
     "q has strides (65536, 1024, 128, 2); its head_dim (the last dimension) must be "
     "contiguous, stride 1 (call .contiguous())"),
    ((bshd(2, 64, 8), bshd(2, 64, 8), bshd(2, 32, 8)), {},
     "q (2, 64, 8, 64), k (2, 64, 8, 64) and v (2, 32, 8, 64) do not match: k and v are "
     "both [batch, seq, heads, head_dim] with q's batch=2 and head_dim=64"),
    ((bshd(2, 64, 8), bshd(3, 64, 8), bshd(3, 64, 8)), {}, "with q's batch=2"),
    ((bshd(2, 64, 8), bshd(2, 64, 8, 128), bshd(2, 64, 8, 128)), {}, "head_dim=64"),
    ((bshd(2, 64, 8), bshd(2, 64, 8), FakeCudaArray((2, 64, 8, 64), "<f4")), {},
     "v is f32; q, k, v and out are of one type, q's f16"),
    ((bshd(2, 64, 8), bshd(2, 64, 8), bshd(2, 64, 8)), dict(out=bshd(2, 64, 4)),
     "out has shape (2, 64, 4, 64) of f16, not q's (2, 64, 8, 64) of f16"),
    ((bshd(2, 64, 8), bshd(2, 64, 8), bshd(2, 64, 8)), dict(out=bshd(2, 64, 8, readonly=True)),
     "out is read-only"),
    # The layout orders every shape: an SDPA-shaped k among bshd ones.
    ((bshd(2, 64, 8), bhsd_view(2, 64, 8), bshd(2, 64, 8)), dict(layout="bshd"),
     "k (2, 8, 64, 64) and v (2, 64, 8, 64) do not match"),
    ((bshd(2, 64, 8), FakeCudaArray((2, 64, 8, 64), strides=(64 * 8 * 64, 64, 64 * 64, 1)),
      bshd(2, 64, 8)), {},
     "q stores its heads inside its rows and k its rows inside its heads (by their "
     "strides); q, k, v and out must nest them alike (call .contiguous())"),
    ((bshd(2, 64, 8), bshd(2, 64, 8), bshd(2, 64, 8)), dict(out=FakeCudaArray(
        (2, 64, 8, 64), strides=(64 * 8 * 64, 64, 64 * 64, 1))), "and out its rows inside"),
    ((FakeCudaArray((2, 8, 64, 64)), bhsd_view(2, 64, 8), bhsd_view(2, 64, 8)),
     dict(layout="bhsd"), "k stores its heads inside its rows and q its rows inside"),
    ((bshd(2, 64, 8), bshd(2, 64, 8), bshd(2, 64, 8)), {},
     "give out= for a f16 result of arrays other than torch tensors and CuPy arrays"),
])
def test_arrays_that_do_not_make_an_attention_are_refused(arrays, keywords, rule):
    expect_refused(rule, *arrays, **keywords)


def varlen(**keywords):
    """plan_call's keywords of a variable-length problem of 4 sequences,
    each changed by `keywords`."""
    arguments = dict(q=FakeCudaArray((1000, 8, 64)), k=FakeCudaArray((3000, 8, 64)),
                     v=FakeCudaArray((3000, 8, 64)), out=FakeCudaArray((1000, 8, 64)),
                     cu_seqlens_q=s32(5), cu_seqlens_k=s32(5), max_seqlen_q=400,
                     max_seqlen_k=1024)
    arguments.update(keywords)
    return arguments


@pytest.mark.parametrize("keywords, rule", [
    (dict(layout="bhsd"), "layout='bhsd' with cu_seqlens: variable lengths take q, k and "
                          "v [total, heads, head_dim] (layout 'bshd')"),
    (dict(max_seqlen_k=None), "max_seqlen_k is needed with cu_seqlens: the longest sequence"),
    (dict(max_seqlen_q=400.0), "max_seqlen_q=400.0 is not an integer"),
    (dict(q=bshd(1, 1000, 8)), "q has shape (1, 1000, 8, 64); with cu_seqlens it is "
                               "[total, heads, head_dim]"),
    (dict(cu_seqlens_q=f32(5)), "cu_seqlens_q must be int32 (torch.int32), not f32"),
    (dict(cu_seqlens_k=s32(1)), "cu_seqlens_k has shape (1,) and strides (1,); it needs "
                                "batch + 1 (at least 2) contiguous int32 offsets"),
    (dict(cu_seqlens_k=FakeCudaArray((5,), "<i4", strides=(2,))),
     "cu_seqlens_k has shape (5,) and strides (2,)"),
    (dict(cu_seqlens_k=s32(4)), "cu_seqlens_q has shape (5,) and cu_seqlens_k (4,): batch "
                                "+ 1 offsets each"),
    (dict(k=FakeCudaArray((3000, 8, 32)), v=FakeCudaArray((3000, 8, 32))),
     "k and v are both [total, heads, head_dim] with q's head_dim=64"),
])
def test_variable_lengths_are_refused_by_their_rules(keywords, rule):
    arguments = varlen(**keywords)
    expect_refused(rule, arguments.pop("q"), arguments.pop("k"), arguments.pop("v"),
                   **arguments)


def test_return_lse_needs_a_library_to_allocate_it_beside_q():
    expect_refused("return_lse allocates the LSE beside q, which takes torch tensors or "
                   "CuPy arrays", bshd(2, 64, 8), bshd(2, 64, 8), bshd(2, 64, 8),
                   out=bshd(2, 64, 8), return_lse=True)


@pytest.mark.parametrize("arrays, keywords, rule", [
    ((bshd(2, 64, 8, 72), bshd(2, 64, 8, 72), bshd(2, 64, 8, 72)), {},
     "attention: head_dim=72 must be a multiple of 16 and at most 256"),
    ((bshd(2, 64, 8), bshd(2, 64, 3), bshd(2, 64, 3)), {},
     "attention: heads_q=8 must be a multiple of heads_kv=3"),
    ((bshd(2, 64, 8), bshd(2, 64, 8), bshd(2, 64, 8)), dict(scale=-1.0),
     "attention: scale=-1 must be finite and positive"),
    ((FakeCudaArray((2, 64, 8, 64), "<f4"), FakeCudaArray((2, 64, 8, 64), "<f4"),
      FakeCudaArray((2, 64, 8, 64), "<f4")), {},
     "attention: element must be f16 or bf16, not f32"),
    ((FakeCudaArray((2, 64, 8, 64), strides=(64 * 8 * 68, 8 * 68, 68, 1)),
      bshd(2, 64, 8), bshd(2, 64, 8)), {},
     "attention: q_stride.head=68 steps 136 bytes: TMA needs each of Q's heads to start on "
     "a 16-byte boundary"),
    ((FakeCudaArray((1000, 8, 64)), FakeCudaArray((3000, 8, 64)),
      FakeCudaArray((3000, 8, 64))),
     dict(cu_seqlens_q=s32(5), cu_seqlens_k=s32(5), max_seqlen_q=0, max_seqlen_k=1024),
     "attention: seq_q=0 is outside 1..2147483647"),
])
def test_the_librarys_rules_are_refused_before_any_device_is_looked_for(arrays, keywords,
                                                                         rule):
    q = arrays[0]
    with pytest.raises(ptxgen.Error) as refused:
        ptxgen.attention(*arrays, out=FakeCudaArray(q.__cuda_array_interface__["shape"],
                                                    q.__cuda_array_interface__["typestr"],
                                                    strides=_strides_of(q)), **keywords)
    assert refused.value.status == "PTXGEN_STATUS_INVALID_VALUE"
    assert f"ptxgenAttentionPrepare: {rule}" in str(refused.value), str(refused.value)


def test_without_a_device_the_library_refuses_with_no_device():
    script = """
import ptxgen, test_attention_arguments as t
q = t.bshd(2, 64, 8)
try:
    ptxgen.attention(q, t.bshd(2, 64, 8), t.bshd(2, 64, 8), out=t.bshd(2, 64, 8))
except ptxgen.Error as e:
    print(e.status, e)
"""
    environment = dict(os.environ, PTXGEN_LIBCUDA="/nonexistent/libcuda.so.1")
    environment["PYTHONPATH"] += os.pathsep + os.path.dirname(__file__)
    run = subprocess.run([sys.executable, "-c", script], env=environment,
                         capture_output=True, text=True, check=True)
    assert run.stdout.startswith("PTXGEN_STATUS_NO_DEVICE ptxgenAttentionPrepare: no CUDA "
                                 "driver found"), run.stdout


def spans_of(problem):
    """ptxgenAttentionGetSpans of a problem built here: the library reads
    the struct as ctypes lays it out."""
    library, handle = _library.loaded()
    spans = (ctypes.c_int64 * 5)()
    _library.check(library.ptxgenAttentionGetSpans(handle, ctypes.byref(problem),
                                                   ctypes.byref(spans)))
    return dict(zip(("q", "k", "v", "o", "lse"), spans))


def test_the_library_reads_the_problem_as_it_was_built():
    padded = dict(strides=(256 * 8 * 80, 8 * 80, 80, 1))  # heads padded to 80
    problem = plan_call(bshd(2, 256, 8, **padded), bshd(2, 512, 2), bshd(2, 512, 2),
                        out=bshd(2, 256, 8, **padded))[0]
    assert spans_of(problem) == {"q": 2 * 256 * 8 * 80 - 16, "k": 2 * 512 * 2 * 64,
                                 "v": 2 * 512 * 2 * 64, "o": 2 * 256 * 8 * 80 - 16,
                                 "lse": 2 * 8 * 256}
    arguments = varlen()
    problem = plan_call(arguments.pop("q"), arguments.pop("k"), arguments.pop("v"),
                        **arguments)[0]
    assert spans_of(problem) == {"q": 1000 * 8 * 64, "k": 3000 * 8 * 64, "v": 3000 * 8 * 64,
                                 "o": 1000 * 8 * 64, "lse": 8 * 1000}


class FakeAttentionLibrary:
    """libptxgen.so with the attention's device half faked: a prepare
    refuses what ptxgenAttentionGetSpans refuses (the problem's rules) and
    records the problem; a run records its pointers and stream."""

    def __init__(self, real):
        self._real = real
        self.prepares = []
        self.runs = []
        self.destroyed = 0

    def __getattr__(self, name):
        return getattr(self._real, name)

    def ptxgenAttentionPrepare(self, handle, problem, attention):
        spans = ctypes.c_int64 * 5
        status = self._real.ptxgenAttentionGetSpans(handle, problem, ctypes.byref(spans()))
        if status == 0:
            attention._obj.value = 0xA70000 + 16 * len(self.prepares)
            self.prepares.append(bytes(problem._obj))
        return status

    def ptxgenAttentionRun(self, handle, attention, *pointers):
        *operands, stream = pointers
        self.runs.append({"attention": attention.value, "stream": stream,
                          **dict(zip(("q", "k", "v", "o", "lse", "cu_seqlens_q",
                                      "cu_seqlens_k"), operands))})
        return 0

    def ptxgenAttentionDestroy(self, attention):
        self.destroyed += 1
        return 0


@pytest.fixture
def library(monkeypatch):
    """The FakeAttentionLibrary in the library's place; no prepared
    attention, and no array library's API (FakeTorch's are each test's)."""
    real, handle = _library.loaded()
    fake = FakeAttentionLibrary(real)
    monkeypatch.setattr(_library, "_loaded", (fake, handle))
    monkeypatch.setattr(_arrays, "_apis", {})
    _attention._cache.clear()
    yield fake
    _attention._cache.clear()


def test_a_repeated_problem_is_prepared_once_and_run_with_each_calls_arrays(library):
    for offset in (0, 0x100000, 0x200000):
        q = bshd(2, 64, 8, offset=offset)
        out = bshd(2, 64, 8, offset=offset + 0x40000)
        assert ptxgen.attention(q, bshd(2, 64, 8), bshd(2, 64, 8), out=out,
                                causal=True) is out
    assert len(library.prepares) == 1
    assert [run["q"] for run in library.runs] == [BASE, BASE + 0x100000, BASE + 0x200000]
    assert [run["o"] for run in library.runs] == [BASE + 0x40000, BASE + 0x140000,
                                                  BASE + 0x240000]
    assert {run["lse"] for run in library.runs} == {None}
    # Another problem (another scale) is prepared anew.
    ptxgen.attention(bshd(2, 64, 8), bshd(2, 64, 8), bshd(2, 64, 8), out=bshd(2, 64, 8),
                     causal=True, scale=0.25)
    assert len(library.prepares) == 2


def test_a_run_takes_the_offsets_and_the_given_stream(library):
    arguments = varlen()
    ptxgen.attention(arguments.pop("q"), arguments.pop("k"), arguments.pop("v"), stream=0x77,
                     **arguments)
    (run,) = library.runs
    assert run["stream"] == 0x77
    assert run["cu_seqlens_q"] == run["cu_seqlens_k"] == BASE


@pytest.fixture
def torch(monkeypatch):
    fake = FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", fake.module)
    return fake


def tensor(torch, shape, strides=None, dtype="bfloat16"):
    return FakeTensor(shape, getattr(torch.module, dtype), strides)


def swapaxes(self, first, second):
    """torch.Tensor.swapaxes of a FakeTensor."""
    axes = list(range(len(self.shape)))
    axes[first], axes[second] = second, first
    return FakeTensor([self.shape[axis] for axis in axes], self.dtype,
                      [self._strides[axis] for axis in axes], self._device, self._address)


def test_out_and_the_lse_are_allocated_beside_q_on_its_stream(library, torch):
    torch.streams[0] = 0x55
    q = tensor(torch, (2, 128, 8, 64))
    out, lse = ptxgen.attention(q, tensor(torch, (2, 256, 2, 64)),
                                tensor(torch, (2, 256, 2, 64)), return_lse=True)
    assert (out.shape, out.stride(), out.dtype.name) == ((2, 128, 8, 64),
                                                         compact((2, 128, 8, 64)), "bfloat16")
    assert (lse.shape, lse.dtype.name) == ((2, 8, 128), "float32")
    (run,) = library.runs
    assert (run["o"], run["lse"], run["stream"]) == (out.data_ptr(), lse.data_ptr(), 0x55)
    assert [allocation["stream"] for allocation in torch.allocations] == [0x55, 0x55]


def test_out_of_a_transposed_view_nests_as_q_does(library, torch, monkeypatch):
    """A [batch, heads, seq, dim] view of [batch, seq, heads, dim] memory
    gets an out of q's shape whose memory nests as q's, so that the problem
    has one layout."""
    monkeypatch.setattr(FakeTensor, "swapaxes", swapaxes, raising=False)
    memory = compact((2, 128, 8, 64))
    view = (memory[0], memory[2], memory[1], memory[3])
    kv = compact((2, 256, 8, 64))
    kv_view = (kv[0], kv[2], kv[1], kv[3])
    out = ptxgen.attention(tensor(torch, (2, 8, 128, 64), view),
                           tensor(torch, (2, 8, 256, 64), kv_view),
                           tensor(torch, (2, 8, 256, 64), kv_view), layout="bhsd")
    assert (tuple(out.shape), out.stride()) == ((2, 8, 128, 64), view)
    assert torch.allocations[0]["shape"] == (2, 128, 8, 64)  # in memory's order
    assert library.runs[0]["o"] == out.data_ptr()


@pytest.mark.parametrize("q, k, layout, varlen, out_strides, lse_shape", [
    ((2, 128, 8, 64), (2, 256, 2, 64), "bshd", False, compact((2, 128, 8, 64)), (2, 8, 128)),
    ((2, 8, 128, 64), (2, 2, 256, 64), "bhsd", False, compact((2, 8, 128, 64)), (2, 8, 128)),
    ((1000, 8, 64), (3000, 2, 64), "bshd", True, compact((1000, 8, 64)), (8, 1000)),
])
def test_outputs_of_is_what_the_eager_path_allocates(q, k, layout, varlen, out_strides,
                                                     lse_shape):
    assert _attention.outputs_of(q, compact(q), k, compact(k), k, compact(k), layout,
                                 varlen) == (out_strides, lse_shape)


def test_outputs_of_a_transposed_view_nests_as_its_memory():
    memory = compact((2, 128, 8, 64))
    view = (memory[0], memory[2], memory[1], memory[3])
    kv = compact((2, 256, 2, 64))
    kv_view = (kv[0], kv[2], kv[1], kv[3])
    assert _attention.outputs_of((2, 8, 128, 64), view, (2, 2, 256, 64), kv_view,
                                 (2, 2, 256, 64), kv_view, "bhsd") == (view, (2, 8, 128))
