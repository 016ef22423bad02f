"""How ptxgen.grouped_gemm reads its arguments, without a GPU: the grouped
problem built from arrays shaped as torch._grouped_mm's (contiguous, with
offs) or DeepGEMM's masked ones (masked_m), what cannot be computed refused
naming the rule, the counts never read on the host, and the fast path of
ptxgen.gemm taking a repeated call. The device's half of the library is
faked as test_gemm_fast_path fakes it."""
import contextlib

import pytest

import ptxgen
from ptxgen import _grouped, _library, _torch_ops
from test_gemm_arguments import BASE, FakeCudaArray, f32, s32
from test_gemm_fast_path import FakeTensor, library, torch  # noqa: F401

K, MN = 0, 1  # ptxgenMajor_t
CONTIGUOUS, MASKED = 1, 2  # ptxgenGrouping_t


def plan_call(a, b, offs=None, **keywords):
    with contextlib.ExitStack() as holds:
        return _grouped.plan_call(a, b, offs, holds=holds, **keywords)


def problem_of(a, b, offs=None, **keywords):
    problem, _, _, _ = plan_call(a, b, offs, **keywords)
    return {name: getattr(problem, name) for name, _ in problem._fields_}


def stacked(groups, k, n, typestr="<f2"):
    """b [groups, k, n] contiguous along n, as torch.stack of [k, n]."""
    return FakeCudaArray((groups, k, n), typestr)


def weights_t(groups, k, n, typestr="<f2"):
    """w.transpose(1, 2) of [groups, n, k] weights: [groups, k, n],
    contiguous along k."""
    return FakeCudaArray((groups, k, n), typestr, strides=(n * k, 1, k))


def expect_refused(rule, a, b, offs=None, **keywords):
    with pytest.raises(ptxgen.Error) as refused:
        plan_call(a, b, offs, **keywords)
    assert refused.value.status == "PTXGEN_STATUS_INVALID_VALUE"
    assert rule in str(refused.value), str(refused.value)
    assert str(refused.value).startswith("ptxgen.grouped_gemm: "), str(refused.value)


def test_contiguous_groups_of_stacked_b_are_mn_major_b():
    p = problem_of(FakeCudaArray((1000, 128)), stacked(8, 128, 256), s32(8),
                   out=FakeCudaArray((1000, 256)))
    assert (p["grouping"], p["batch"], p["expected_m"]) == (CONTIGUOUS, 8, 0)
    assert (p["m"], p["n"], p["k"]) == (1000, 256, 128)
    assert (p["a_major"], p["lda"], p["stride_a"]) == (K, 128, 0)
    assert (p["b_major"], p["ldb"], p["stride_b"]) == (MN, 256, 128 * 256)
    assert (p["ldd"], p["stride_d"]) == (256, 0)  # one D of every group's rows


def test_a_transposed_view_of_linear_weights_is_k_major_b():
    p = problem_of(FakeCudaArray((1000, 128)), weights_t(8, 128, 256), s32(8),
                   out=FakeCudaArray((1000, 256)))
    assert (p["b_major"], p["ldb"], p["stride_b"]) == (K, 128, 256 * 128)


def test_masked_groups_are_a_batch_of_a_and_d_with_their_hint():
    p = problem_of(FakeCudaArray((8, 64, 128)), weights_t(8, 128, 256), masked_m=s32(8),
                   out=FakeCudaArray((8, 64, 256)), expected_m=16)
    assert (p["grouping"], p["batch"], p["m"], p["expected_m"]) == (MASKED, 8, 64, 16)
    assert (p["stride_a"], p["stride_d"]) == (64 * 128, 64 * 256)


def test_the_counts_are_the_group_rows_operand():
    _, arrays, _, _ = plan_call(FakeCudaArray((1000, 128)), stacked(8, 128, 256),
                                s32(8, offset=0x40), out=FakeCudaArray((1000, 256)))
    assert arrays["group_rows"].pointer == BASE + 0x40
    assert arrays["group_rows"].dtype == "s32"


def test_the_bias_is_a_row_per_group_or_one_shared():
    a, b, offs, out = (FakeCudaArray((1000, 128)), stacked(8, 128, 256), s32(8),
                       FakeCudaArray((1000, 256)))
    per_group = problem_of(a, b, offs, out=out, bias=f32(8, 256))
    assert (per_group["bias"], per_group["bias_type"], per_group["stride_bias"]) == (2, 2, 256)
    padded = problem_of(a, b, offs, out=out, bias=f32(8, 256, strides=(264, 1)))
    assert padded["stride_bias"] == 264
    shared = problem_of(a, b, offs, out=out, bias=FakeCudaArray((256,)))
    assert (shared["bias_type"], shared["stride_bias"]) == (0, 0)  # f16, one for all
    expect_refused("bias has shape (7, 256) and strides (256, 1); it needs [groups, n] = "
                   "(8, 256)", a, b, offs, out=out, bias=f32(7, 256))


def test_options_reach_the_problem():
    p = problem_of(FakeCudaArray((1000, 128)), stacked(8, 128, 256), s32(8),
                   out=FakeCudaArray((1000, 256), "<f4"), activation="silu", alpha=0.5,
                   expected_m=100)
    assert (p["activation"], p["alpha"], p["output_type"], p["expected_m"]) == (4, 0.5, 2, 100)


def test_scales_ask_for_per_tensor_scaling():
    problem, arrays, _, _ = plan_call(FakeCudaArray((1000, 128)), weights_t(8, 128, 256),
                                      s32(8), out=FakeCudaArray((1000, 256)),
                                      scale_a=f32(1), scale_b=f32(1, offset=16))
    assert problem.scaling == 1
    assert arrays["scale_b"].pointer == BASE + 16
    expect_refused("scale_a must be one float32 element", FakeCudaArray((1000, 128)),
                   weights_t(8, 128, 256), s32(8), out=FakeCudaArray((1000, 256)),
                   scale_a=f32(2), scale_b=f32(1))


def test_refuses_what_no_grouped_gemm_reads_naming_the_rule():
    a, b, offs, out = (FakeCudaArray((1000, 128)), stacked(8, 128, 256), s32(8),
                       FakeCudaArray((1000, 256)))
    expect_refused("give offs (contiguous groups, a [total_m, k]) or masked_m (masked "
                   "groups, a [groups, max_m, k]): neither was given", a, b, out=out)
    expect_refused("not both", a, b, offs, masked_m=offs, out=out)
    expect_refused("a has shape (8, 125, 128); with offs it is [total_m, k] (2-D)",
                   FakeCudaArray((8, 125, 128)), b, offs, out=out)
    expect_refused("a has shape (1000, 128); with masked_m it is [groups, max_m, k] (3-D)",
                   a, b, masked_m=offs, out=out)
    expect_refused("b has shape (128, 256); it is [groups, k, n] (3-D)", a,
                   FakeCudaArray((128, 256)), offs, out=out)
    expect_refused("a (1000, 128) and b (8, 64, 256) do not multiply: b must be [groups, k, "
                   "n] with k=128", a, stacked(8, 64, 256), offs, out=out)
    expect_refused("do not multiply: b must be [groups, k, n] with k=128 and groups=4",
                   FakeCudaArray((4, 64, 128)), b, masked_m=s32(8),
                   out=FakeCudaArray((4, 64, 256)))
    expect_refused("offs must be int32 (torch.int32), not f32", a, b, f32(8), out=out)
    expect_refused("offs has shape (7,) and strides (1,); it needs one int32 per group of b, "
                   "8 contiguous values", a, b, s32(7), out=out)
    expect_refused("masked_m has shape (8,) and strides (2,)", FakeCudaArray((8, 64, 128)),
                   b, masked_m=s32(8, strides=(2,)), out=FakeCudaArray((8, 64, 256)))
    expect_refused("masked_m has shape (8, 1)", FakeCudaArray((8, 64, 128)), b,
                   masked_m=s32(8, 1), out=FakeCudaArray((8, 64, 256)))
    expect_refused("out has shape (1000, 128), not (1000, 256)", a, b, offs,
                   out=FakeCudaArray((1000, 128)))
    expect_refused("out has shape (1000, 256); with a of 3 dimensions it needs 3",
                   FakeCudaArray((8, 64, 128)), b, masked_m=offs, out=out)
    expect_refused("out has shape (8, 32, 256), not (8, 64, 256)", FakeCudaArray((8, 64, 128)),
                   b, masked_m=offs, out=FakeCudaArray((8, 32, 256)))
    expect_refused("give out= for a f16 result of arrays other than torch tensors", a, b, offs)
    expect_refused("activation='tanh' is not one of", a, b, offs, out=out, activation="tanh")
    expect_refused("expected_m='16' is not an integer", a, b, offs, out=out, expected_m="16")


# Calls of the shapes of a valid one (VALID) that break a rule, each with
# the refusal's words: refused as a first call and after the valid one,
# whose signature the fast path then knows.
VALID = dict(a=FakeCudaArray((1000, 128)), b=stacked(8, 128, 256), offs=s32(8),
             out=FakeCudaArray((1000, 256)))
REFUSED_AFTER_ANY_CALL = [
    (dict(masked_m=s32(8)), "not both"),
    (dict(masked_m="junk"), "not both"),
    (dict(offs=None), "neither was given"),
    (dict(offs=f32(8)), "offs must be int32"),
    (dict(offs=s32(7)), "offs has shape (7,)"),
    (dict(expected_m="16"), "expected_m='16' is not an integer"),
    (dict(activation="tanh"), "activation='tanh' is not one of"),
    (dict(out=FakeCudaArray((1000, 128))), "out has shape (1000, 128)"),
]


@pytest.mark.parametrize("change, rule", REFUSED_AFTER_ANY_CALL)
def test_a_refusal_holds_as_a_first_call_and_after_a_valid_one(library, change, rule):
    from ptxgen import _gemm
    call = dict(VALID, **change)
    for first in (True, False):
        _gemm._fast.clear()
        if not first:
            ptxgen.grouped_gemm(**VALID)
        with pytest.raises(ptxgen.Error) as refused:
            ptxgen.grouped_gemm(**call)
        assert rule in str(refused.value), (first, str(refused.value))
    assert len(library.runs) == 1  # the valid call's alone


class Int64Counts(FakeCudaArray):
    """torch.int64 counts, as torch.cumsum gives them by default."""
    dtype = "torch.int64"


def test_counts_of_another_type_are_refused_before_they_are_read():
    expect_refused("offs must be int32 (torch.int32), not 'torch.int64'",
                   FakeCudaArray((1000, 128)), stacked(8, 128, 256),
                   Int64Counts((8,), typestr="<i8"), out=FakeCudaArray((1000, 256)))


def test_the_librarys_rules_come_before_any_device_is_looked_for():
    # The library validates the problem in ptxgenGemmPrepare first.
    a, b, offs, out = (FakeCudaArray((1000, 128)), stacked(8, 128, 256), s32(8),
                       FakeCudaArray((1000, 256)))
    for rule, keywords in (
            ("expected_m=1001 is outside 0..m (1000)", dict(expected_m=1001)),
            ("A and B differ in type only as e4m3 with e5m2", dict(b=stacked(8, 128, 256,
                                                                            "<f4")))):
        with pytest.raises(ptxgen.Error) as refused:
            ptxgen.grouped_gemm(a, keywords.pop("b", b), offs, out=out, **keywords)
        assert refused.value.status == "PTXGEN_STATUS_INVALID_VALUE"
        assert f"ptxgenGemmPrepare: GEMM: {rule}" in str(refused.value), str(refused.value)


def test_refusals_of_the_readers_name_grouped_gemm():
    with pytest.raises(ptxgen.Error) as refused:
        ptxgen.grouped_gemm([[1.0]], stacked(8, 128, 256), s32(8))
    assert str(refused.value).startswith("ptxgen.grouped_gemm: a (a list) is neither a torch "
                                         "tensor"), str(refused.value)


def test_plan_and_spans_take_the_grouping():
    spans = ptxgen.spans(m=1000, n=256, k=128, dtype="bf16", batch=8, grouping="contiguous",
                         b_major="mn", bias="n", stride_bias=256)
    assert (spans["a"], spans["b"], spans["d"], spans["bias"]) == (
        1000 * 128, 8 * 128 * 256, 1000 * 256, 8 * 256)
    masked = ptxgen.spans(m=64, n=256, k=128, batch=8, grouping="masked", expected_m=4)
    assert (masked["a"], masked["d"]) == (8 * 64 * 128, 8 * 64 * 256)
    with pytest.raises(ptxgen.Error, match="grouping='ragged' is not one of"):
        ptxgen.spans(m=64, n=256, k=128, batch=8, grouping="ragged")


def test_plans_a_contiguous_grouped_gemm_without_a_gpu():
    plan = ptxgen.plan(m=4096, n=4096, k=7168, dtype="bf16", batch=8, grouping="contiguous",
                       b_major="mn")
    assert plan.form == "bf16.km->bf16+contiguous_groups"
    assert f".entry {plan.kernel_name}" in plan.ptx


class NoHostReads(FakeTensor):
    """Counts whose values cannot be read on the host: any attempt fails."""
    __module__ = "torch"

    def _refused(self, *_, **__):
        raise AssertionError("the counts were read on the host")

    item = cpu = tolist = numpy = __getitem__ = __iter__ = __int__ = _refused


def grouped_tensors(torch, address=BASE):
    a = torch.tensor(1000, 128, address=address)
    b = torch.tensor(8, 128, 256)
    return a, b, NoHostReads((8,), torch.module.int32, address=BASE + 0x40)


@pytest.fixture
def planned(monkeypatch):
    """The calls of _grouped.plan_call, counted."""
    calls = []
    real = _grouped.plan_call

    def counted(*arguments, **keywords):
        calls.append(1)
        return real(*arguments, **keywords)

    monkeypatch.setattr(_grouped, "plan_call", counted)
    return calls


def test_a_repeated_call_takes_the_fast_path_and_reads_no_counts(library, torch, planned):
    outs = []
    for address in (BASE, BASE + 0x4000, BASE + 0x8000):
        a, b, offs = grouped_tensors(torch, address)
        outs.append(ptxgen.grouped_gemm(a, b, offs))
    assert len(planned) == 1
    assert len(library.prepares) == 1
    assert [run["a"] for run in library.runs] == [BASE, BASE + 0x4000, BASE + 0x8000]
    assert {run["group_rows"] for run in library.runs} == {BASE + 0x40}
    assert len({run["d"] for run in library.runs}) == 3  # a new out each call
    assert [out.shape for out in outs] == [(1000, 256)] * 3
    problem = library.prepares[0][1]
    assert (problem["grouping"], problem["b_major"], problem["batch"]) == (CONTIGUOUS, MN, 8)


def test_a_change_of_the_counts_or_the_grouping_plans_again(library, torch, planned):
    a, b, offs = grouped_tensors(torch)
    ptxgen.grouped_gemm(a, b, offs)
    ptxgen.grouped_gemm(a, b, offs)
    assert len(planned) == 1
    ptxgen.grouped_gemm(a, b, torch.tensor(8, dtype="int32", address=BASE + 0x40), expected_m=64)
    assert len(planned) == 2
    masked_a = torch.tensor(8, 125, 128)
    ptxgen.grouped_gemm(masked_a, b, masked_m=offs)
    ptxgen.grouped_gemm(masked_a, b, masked_m=offs)
    assert len(planned) == 3
    assert [p["grouping"] for _, p in library.prepares] == [CONTIGUOUS, CONTIGUOUS, MASKED]
    with pytest.raises(ptxgen.Error, match="offs must be int32"):
        ptxgen.grouped_gemm(a, b, torch.tensor(8, dtype="float32"))


@pytest.mark.parametrize("a_shape, b_shape, masked, out", [
    ((1000, 128), (8, 128, 256), False, ((1000, 256), "bfloat16")),
    ((8, 64, 128), (8, 128, 256), True, ((8, 64, 256), "bfloat16")),
])
def test_grouped_output_of_is_the_out_allocated(a_shape, b_shape, masked, out):
    assert _torch_ops.grouped_output_of(a_shape, "torch.bfloat16", b_shape, masked) == out
    assert _torch_ops.grouped_output_of(a_shape, "bf16", b_shape, masked,
                                        out_dtype="f32")[1] == "float32"


def test_grouped_output_of_refuses_what_has_no_such_out():
    for a_shape, b_shape, masked in (((8, 64, 128), (8, 128, 256), False),
                                     ((1000, 128), (8, 128, 256), True),
                                     ((1000, 128), (128, 256), False)):
        with pytest.raises(ptxgen.Error, match="ptxgen.grouped_gemm: a has shape"):
            _torch_ops.grouped_output_of(a_shape, "bf16", b_shape, masked)


def test_group_rows_is_the_last_operand_field():
    # ptxgenGemmOperands_t grew at its end; the struct mirrors the header.
    assert [name for name, _ in _library.GemmOperands._fields_][-1] == "group_rows"
    assert [name for name, _ in _library.GemmProblem._fields_][-2:] == ["grouping",
                                                                         "expected_m"]


def test_counts_on_the_host_are_refused_not_copied(library, torch):
    a, b, _ = grouped_tensors(torch)
    on_host = NoHostReads((8,), torch.module.int32, device=None)
    with pytest.raises(ptxgen.Error, match="ptxgen.grouped_gemm: offs is on .*cpu.*, not on "
                                           "a CUDA device"):
        ptxgen.grouped_gemm(a, b, on_host)
    assert library.runs == []
