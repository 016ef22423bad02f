"""ptxgen.plan: the GEMM ptxgen.gemm would run, planned for a named device
with no GPU, and what it generated; refusals as ptxgen.Error with the
library's message."""
import os
import subprocess
import sys

import pytest

import ptxgen

# The README's problems at the size of its command-line examples.
PLAIN = dict(m=4096, n=4096, k=4096)
FUSED = dict(m=4096, n=4096, k=4096, dtype="bf16", b_major="mn", out_dtype="f32",
             bias="n", activation="gelu")


@pytest.fixture(scope="module", params=[(PLAIN, 132), (PLAIN, 66), (FUSED, 132), (FUSED, 66)],
                ids=["plain-132", "plain-66", "fused-132", "fused-66"])
def readme_plan(request):
    problem, sms = request.param
    return ptxgen.plan(**problem, sms=sms), problem, sms


def test_plans_the_readmes_problems_without_a_gpu(readme_plan):
    plan, _, sms = readme_plan
    assert isinstance(plan, ptxgen.Plan)
    assert plan.kernel_name in plan.source
    assert 'extern "C" __global__' in plan.source
    assert ".target sm_90a" in plan.ptx
    assert f".entry {plan.kernel_name}" in plan.ptx
    assert plan.cubin.startswith(b"\x7fELF")
    x, y, z, cluster = plan.grid
    assert 1 <= x <= sms and (y, z) == (1, 1) and cluster in (1, 2)


def test_shows_what_ptxas_reports_and_the_launch_needs(readme_plan):
    plan, _, _ = readme_plan
    resources = plan.resources
    assert 0 < resources["registers"] <= 255
    assert resources["spill_store_bytes"] == resources["spill_load_bytes"] == 0
    assert 0 < resources["shared_bytes"] <= 227 * 1024
    assert resources["threads_per_block"] >= 128
    assert plan.config in repr(plan)


def test_names_the_configuration_and_what_it_computes(readme_plan):
    plan, problem, _ = readme_plan
    assert plan.config.startswith(("ws ", "v1 "))
    expected = "f16.kk->f16" if problem is PLAIN else "bf16.km->f32+bias_n.f32+gelu"
    assert plan.form == expected


def test_the_same_problem_plans_the_same_text():
    first, second = ptxgen.plan(**PLAIN), ptxgen.plan(**PLAIN)
    assert first.source == second.source and first.ptx == second.ptx
    assert first.config == second.config


def test_keywords_take_the_spellings_of_torch_and_the_command_line():
    spelled = ptxgen.plan(m=4096, n=4096, k=4096, dtype="bfloat16", b_major="n",
                          out_dtype="float32", bias="n", bias_dtype="float32",
                          activation="gelu")
    assert spelled.source == ptxgen.plan(**FUSED).source
    assert ptxgen.plan(**PLAIN, activation="none").form == "f16.kk->f16"


@pytest.mark.parametrize("keywords, form", [
    (dict(dtype="e4m3"), "e4m3.kk->bf16"),
    (dict(dtype="float8_e5m2"), "e5m2.kk->bf16"),
    (dict(dtype="float8_e4m3fn", b_dtype="e5m2"), "e4m3xe5m2.kk->bf16"),
    (dict(dtype="e4m3", scaling="tensor", fast_accum=True),
     "e4m3.kk->bf16+tensor_scaled+fast_accum"),
    (dict(dtype="e5m2", b_dtype="e4m3", out_dtype="f32", scaling="tensor"),
     "e5m2xe4m3.kk->f32+tensor_scaled"),
    (dict(dtype="tf32"), "tf32.kk->f32"),
    (dict(dtype="e4m3", scaling="block"), "e4m3.kk->bf16+block_scaled"),
], ids=["e4m3", "e5m2", "mixed", "scaled-fast", "mixed-f32", "tf32", "block-scaled"])
def test_plans_fp8_and_tf32_at_their_default_outputs(keywords, form):
    plan = ptxgen.plan(**PLAIN, **keywords)
    assert plan.form == form
    assert ".target sm_90a" in plan.ptx


@pytest.mark.parametrize("keywords, form", [
    (dict(dtype="s8"), "s8.kk->s32"),
    (dict(dtype="uint8"), "u8.kk->s32"),
    (dict(dtype="int8", b_dtype="u8"), "s8xu8.kk->s32"),
    (dict(dtype="u8", b_dtype="s8", out_dtype="bf16"), "u8xs8.kk->bf16"),
    (dict(dtype="s8", out_dtype="int8", alpha=0.125), "s8.kk->s8"),
    (dict(dtype="s8", out_dtype="f32", beta=0.5, bias="n", activation="relu"),
     "s8.kk->f32+c+bias_n.f32+relu"),
], ids=["s8", "u8", "mixed", "mixed-bf16", "s8-out", "f32-epilogue"])
def test_plans_8_bit_integers_into_s32_by_default(keywords, form):
    plan = ptxgen.plan(**PLAIN, **keywords)
    assert plan.form == form
    assert ".target sm_90a" in plan.ptx


def test_the_new_keywords_reach_the_problem():
    from ptxgen import _problem
    p = _problem.problem("test", **PLAIN, dtype="e4m3", b_dtype="e5m2", out_dtype="e4m3",
                         scaling="tensor", fast_accum=True, record_amax=True)
    assert (p.input_type, p.b_input_type, p.output_type) == (3, 4, 3)
    assert (p.scaling, p.fast_accumulation, p.record_amax) == (1, 1, 1)
    integers = _problem.problem("test", **PLAIN, dtype="int8", b_dtype="u8", out_dtype="int32")
    assert (integers.input_type, integers.b_input_type, integers.output_type) == (6, 7, 8)
    assert _problem.problem("test", **PLAIN, dtype="u8").output_type == 8  # the library's s32


def expect_refused(status, rule, **keywords):
    with pytest.raises(ptxgen.Error) as refused:
        ptxgen.plan(**keywords)
    assert refused.value.status == status
    assert rule in str(refused.value)
    assert refused.value.message == str(refused.value)


def test_spans_are_what_each_operands_buffer_must_hold():
    # A [2,256,512] with rows of 528, B [2,200,512]; block scales: 4
    # k-blocks of A's 256 rows and of B's 2 column blocks (the second
    # ragged), per GEMM. With beta 0, C is not read: it spans nothing.
    spans = ptxgen.spans(m=256, n=200, k=512, dtype="e4m3", lda=528, batch=2,
                         scaling="block")
    assert spans == {"a": 256 * 528 + 255 * 528 + 512, "b": 2 * 200 * 512,
                     "c": 0, "d": 2 * 256 * 200, "bias": 0,
                     "scale_a": 2 * 4 * 256, "scale_b": 2 * 2 * 4}
    assert ptxgen.spans(m=256, n=200, k=512, dtype="e4m3", scaling="tensor")[
        "scale_a"] == 1
    with pytest.raises(ptxgen.Error) as refused:
        ptxgen.spans(m=256, n=200, k=512, scaling="block")
    assert "per-tensor or block scales and fast accumulation are for fp8 inputs, not f16" \
        in str(refused.value)


def test_refuses_problems_that_break_a_rule_with_the_librarys_message():
    invalid = "PTXGEN_STATUS_INVALID_VALUE"
    expect_refused(invalid, "ptxgenPlanGemm: GEMM: k=0 is outside 1..2147483647",
                   m=4096, n=4096, k=0)
    expect_refused(invalid, "k must be a multiple of 8", m=4096, n=4096, k=4100)
    expect_refused(invalid, "element type must be f16, bf16, e4m3, e5m2, tf32, s8 or u8, "
                   "not f32", m=4096, n=4096, k=4096, dtype="f32")
    expect_refused(invalid, "batch=0 is outside 1..65535", m=4096, n=4096, k=4096, batch=0)
    expect_refused(invalid, "lda=100 must be at least the stored row",
                   m=4096, n=4096, k=4096, lda=100)
    expect_refused(invalid, "GEMM: A and B differ in type only as e4m3 with e5m2 (fp8) or s8 "
                   "with u8, not f16 with e4m3", **PLAIN, b_dtype="e4m3")
    expect_refused(invalid, "per-tensor or block scales and fast accumulation are for fp8 inputs, "
                   "not bf16", **PLAIN, dtype="bf16", fast_accum=True)
    expect_refused(invalid, "MN-major operands need f16 or bf16 inputs", **PLAIN,
                   dtype="tf32", b_major="mn")


def test_refuses_integer_problems_that_break_a_rule_with_the_librarys_message():
    invalid = "PTXGEN_STATUS_INVALID_VALUE"
    expect_refused(invalid, "an s8 D takes no C", **PLAIN, dtype="s8", out_dtype="s8",
                   beta=1.0)
    expect_refused(invalid, "an s32 D comes from s8/u8 inputs, not f16", **PLAIN,
                   out_dtype="s32")
    expect_refused(invalid, "an s8 D comes from s8/u8 inputs, not bf16", **PLAIN,
                   dtype="bf16", out_dtype="int8")
    expect_refused(invalid, "an s32 D is the exact sums: alpha must be 1, not 2", **PLAIN,
                   dtype="s8", alpha=2.0)
    for epilogue in (dict(bias="n"), dict(activation="gelu"), dict(record_amax=True)):
        expect_refused(invalid, "an s32 D is the exact sums (alpha 1, no bias, activation or "
                       "amax)", **PLAIN, dtype="u8", **epilogue)
    expect_refused(invalid, "an s32 D takes no C", **PLAIN, dtype="s8", beta=0.5)
    expect_refused(invalid, "MN-major operands need f16 or bf16 inputs", **PLAIN,
                   dtype="s8", a_major="mn")
    expect_refused(invalid, "per-tensor or block scales and fast accumulation are for fp8 inputs, "
                   "not s8", **PLAIN, dtype="s8", scaling="tensor")
    expect_refused(invalid, "per-tensor or block scales and fast accumulation are for fp8 inputs, "
                   "not u8", **PLAIN, dtype="u8", fast_accum=True)
    expect_refused(invalid, "differ in type only as e4m3 with e5m2 (fp8) or s8 with u8, not "
                   "s8 with e4m3", **PLAIN, dtype="s8", b_dtype="e4m3")
    expect_refused(invalid, "element type must be f16, bf16, e4m3, e5m2, tf32, s8 or u8, "
                   "not s32", **PLAIN, dtype="s32")  # an output type only
    expect_refused(invalid, "the output type must be f16, bf16, f32, e4m3, e5m2, s8 or s32, "
                   "not u8", **PLAIN, dtype="u8", out_dtype="u8")


def test_refuses_targets_by_their_rules():
    expect_refused("PTXGEN_STATUS_INVALID_VALUE", "GEMM target: sm_count=0 is outside 1..1024",
                   **PLAIN, sms=0)
    expect_refused("PTXGEN_STATUS_INVALID_VALUE", "below the 49152 bytes",
                   **PLAIN, shared_bytes=16 * 1024)


def test_a_target_with_less_shared_memory_gets_a_kernel_that_fits_it():
    plan = ptxgen.plan(**PLAIN, shared_bytes=100 * 1024)
    assert 0 < plan.resources["shared_bytes"] <= 100 * 1024


def test_refuses_keywords_outside_their_values_before_the_library():
    invalid = "PTXGEN_STATUS_INVALID_VALUE"
    expect_refused(invalid, "ptxgen.plan: activation='swish' is not one of None, 'relu', "
                   "'gelu', 'gelu_tanh', 'silu'", **PLAIN, activation="swish")
    expect_refused(invalid, "a_major='x' is not one of 'k', 'mn', 'm'", **PLAIN, a_major="x")
    expect_refused(invalid, "dtype='f8' is not one of 'f16', 'bf16', 'f32', 'e4m3', 'e5m2', "
                   "'tf32', 's8', 'u8', 's32'", **PLAIN, dtype="f8")
    expect_refused(invalid, "out_dtype='int64' is not one of", **PLAIN, dtype="s8",
                   out_dtype="int64")
    expect_refused(invalid, "b_dtype='float8_e4m3fnuz' is not one of", **PLAIN,
                   b_dtype="float8_e4m3fnuz")
    expect_refused(invalid, "scaling='row' is not one of 'none', 'tensor', 'block'",
                   **PLAIN, scaling="row")
    expect_refused(invalid, "record_amax=1 is not True or False", **PLAIN, record_amax=1)
    expect_refused(invalid, "bias='k' is not one of None, 'm', 'n'", **PLAIN, bias="k")
    expect_refused(invalid, "m=4096.5 is not an integer", m=4096.5, n=4096, k=4096)
    expect_refused(invalid, f"n={2**70} does not fit in 64 bits", m=4096, n=2**70, k=4096)
    expect_refused(invalid, "alpha=inf is not a finite f32: alpha must be finite (inf, nan "
                   "and magnitudes past 3.4e38 are refused)", **PLAIN, alpha=float("inf"))
    expect_refused(invalid, f"sms={2**40} does not fit in 32 bits", **PLAIN, sms=2**40)


def test_scaling_names_are_the_librarys_exact_spellings():
    from ptxgen import _problem
    assert _problem.problem("test", **PLAIN, dtype="e4m3", scaling="block").scaling == 2
    # Not lowercased: "NONE" would otherwise pass a check for "none" first.
    for spelling in ("NONE", "None", "Tensor", " block", "none\0tensor", "nöne", None, 0):
        expect_refused("PTXGEN_STATUS_INVALID_VALUE", f"scaling={spelling!r} is not one of "
                       "'none', 'tensor', 'block' (exactly, in lower case)", **PLAIN,
                       dtype="e4m3", scaling=spelling)


def test_option_names_are_exact_and_other_values_are_refused_as_errors():
    # Unhashable values are no names either: not a TypeError.
    for keyword, value, names in (("bias", ["n"], "None, 'm', 'n'"),
                                  ("activation", {}, "None, 'relu'"),
                                  ("activation", "GELU", "None, 'relu'"),
                                  ("scaling", [], "'none', 'tensor', 'block'"),
                                  ("a_major", bytearray(b"k"), "'k', 'mn', 'm'"),
                                  ("b_major", "N", "'k', 'mn', 'n'")):
        expect_refused("PTXGEN_STATUS_INVALID_VALUE",
                       f"{keyword}={value!r} is not one of {names}", **{**PLAIN, keyword: value})


def test_a_refused_value_is_echoed_cut_short():
    # As the CLI cuts the values it echoes: a hostile value is not repeated whole.
    with pytest.raises(ptxgen.Error) as refused:
        ptxgen.plan(**{**PLAIN, "activation": "x" * 10_000_000})
    message = str(refused.value)
    assert "activation='xxxx" in message and "is not one of" in message
    assert len(message) < 300


def test_a_bool_is_not_a_count():
    for keyword in ("m", "batch", "lda", "stride_bias", "sms", "shared_bytes"):
        expect_refused("PTXGEN_STATUS_INVALID_VALUE", f"{keyword}=True is not an integer",
                       **{**PLAIN, keyword: True})


def test_alpha_and_beta_are_real_numbers_that_an_f32_holds():
    from fractions import Fraction
    from ptxgen import _problem
    p = _problem.problem("test", **PLAIN, alpha=Fraction(1, 4), beta=2)
    assert (p.alpha, p.beta) == (0.25, 2.0)
    finite = "must be finite (inf, nan and magnitudes past 3.4e38 are refused)"
    for keyword, value, rule in (("alpha", "2.5", "alpha='2.5' is not a number"),
                                 ("beta", True, "beta=True is not a number"),
                                 ("alpha", 10**400, f"is not a finite f32: alpha {finite}"),
                                 ("alpha", 1e39, f"alpha=1e+39 is not a finite f32: alpha "
                                                 f"{finite}"),
                                 ("beta", float("nan"), f"beta=nan is not a finite f32"),
                                 ("alpha", 1e-50, "alpha=1e-50 underflows f32: a nonzero "
                                                  "alpha must not round to 0"),
                                 ("beta", -7e-46, "beta=-7e-46 underflows f32")):
        expect_refused("PTXGEN_STATUS_INVALID_VALUE", rule, **{**PLAIN, keyword: value})


class _DtypeObject:
    """A dtype object of some library, known by its str()."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text


def test_dtypes_are_values_that_print_as_a_name_or_as_torchs_dtype_of_one():
    from ptxgen import _problem
    for value, name in (("bf16", "bf16"), ("bfloat16", "bf16"), ("torch.bfloat16", "bf16"),
                        (_DtypeObject("torch.bfloat16"), "bf16"),
                        (_DtypeObject("float8_e4m3fn"), "e4m3")):
        assert _problem.dtype_name("test", "dtype", value) == name
    # Nothing is read after the last dot of a name of some other module.
    for value in ("evil.module.bf16", "torch.evil.bf16", "BF16", _DtypeObject("evil.bf16"),
                  _DtypeObject("torch.torch.bf16"), None):
        expect_refused("PTXGEN_STATUS_INVALID_VALUE", f"dtype={value!r} is not one of 'f16'",
                       **PLAIN, dtype=value)


def test_a_relative_library_path_is_refused_naming_the_variable():
    # One that loads, from the folder of the current one: absolute paths only.
    library = os.environ["PTXGEN_LIBRARY"]
    script = ("import ptxgen\n"
              "try:\n    print(ptxgen.version())\n"
              "except ptxgen.Error as e:\n    print(e.status, e)\n")
    relative = "./" + os.path.basename(library)
    environment = dict(os.environ, PTXGEN_LIBRARY=relative)
    run = subprocess.run([sys.executable, "-c", script], env=environment,
                         cwd=os.path.dirname(library), capture_output=True, text=True,
                         check=True)
    assert run.stdout == (f"PTXGEN_STATUS_NO_LIBRARY ptxgen: $PTXGEN_LIBRARY={relative!r} "
                          "is not an absolute path; library paths must be absolute\n")


def test_a_missing_library_is_an_error_naming_where_it_looked():
    script = ("import ptxgen\n"
              "try:\n    ptxgen.plan(m=64, n=64, k=64)\n"
              "except ptxgen.Error as e:\n    print(e.status, e)\n")
    environment = dict(os.environ, PTXGEN_LIBRARY="/nonexistent/libptxgen.so")
    run = subprocess.run([sys.executable, "-c", script], env=environment,
                         capture_output=True, text=True, check=True)
    assert run.stdout.startswith("PTXGEN_STATUS_NO_LIBRARY ptxgen: cannot load libptxgen.so "
                                 "from /nonexistent/libptxgen.so")
    assert "tools/python_install.sh" in run.stdout


def _import_and_call(library_path, calls=2):
    """What a process prints calling ptxgen.version() `calls` times with
    $PTXGEN_LIBRARY set to `library_path`: each error's type, status and
    text."""
    script = ("import ptxgen\n"
              f"for _ in range({calls}):\n"
              "    try:\n        ptxgen.version()\n"
              "    except Exception as e:\n"
              "        print(type(e).__name__, getattr(e, 'status', ''), repr(str(e)))\n")
    environment = dict(os.environ, PTXGEN_LIBRARY=library_path)
    return subprocess.run([sys.executable, "-c", script], env=environment,
                          capture_output=True, text=True, check=True).stdout


def test_a_library_without_ptxgens_functions_is_an_error_every_call():
    # Another library, or a libptxgen.so built before the functions it lacks.
    lines = _import_and_call("/lib/x86_64-linux-gnu/libm.so.6").splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith("Error PTXGEN_STATUS_NO_LIBRARY 'ptxgen: "
                               "/lib/x86_64-linux-gnu/libm.so.6 has no ptxgen"), line
        assert "it is not a libptxgen.so of this ptxgen" in line


def test_a_newline_in_the_library_path_cannot_forge_a_line():
    printed = _import_and_call("/tmp/x\nptxgen: error: forged line", calls=1)
    assert printed.count("\n") == 1, printed
    assert "/tmp/x\\\\x0aptxgen: error: forged line" in printed, printed


def test_the_printable_form_of_outside_text_is_one_line():
    from ptxgen import _library
    assert _library.printable("a\nb\tc\x1b[2J\x9b\u00e9\udc9b") == (
        "a\\x0ab\\x09c\\x1b[2J\\x9b\u00e9\\x9b")


class NumpyBool:
    """numpy.bool_(True) as ptxgen sees it: an __index__ of 1 and a bool
    dtype."""
    dtype = "bool"

    def __index__(self):
        return 1


class RaisingIndex:
    def __index__(self):
        return 1 // 0


def test_booleans_of_any_library_are_no_sizes():
    for keyword in ("m", "batch", "expected_m"):
        with pytest.raises(ptxgen.Error, match=f"ptxgen.plan: {keyword}=.* is not an integer"):
            ptxgen.plan(**dict(PLAIN, **{keyword: NumpyBool()}))


def test_a_size_whose_index_raises_is_an_error_naming_it_with_the_cause():
    with pytest.raises(ptxgen.Error) as refused:
        ptxgen.plan(**dict(PLAIN, n=RaisingIndex()))
    assert str(refused.value) == ("ptxgen.plan: n: its __index__ raised "
                                  "ZeroDivisionError('integer division or modulo by zero')")
    assert isinstance(refused.value.__cause__, ZeroDivisionError)


def test_spans_refuses_a_keyword_no_problem_has():
    with pytest.raises(ptxgen.Error, match="ptxgen.spans: sms is not a keyword of a problem; "
                                           "it takes m, n, k, dtype"):
        ptxgen.spans(m=64, n=64, k=64, sms=132)
    with pytest.raises(ptxgen.Error, match="ptxgen.spans: k missing"):
        ptxgen.spans(m=64, n=64)


def test_importing_needs_no_library():
    environment = dict(os.environ, PTXGEN_LIBRARY="/nonexistent/libptxgen.so")
    subprocess.run([sys.executable, "-c", "import ptxgen"], env=environment, check=True)


def test_the_library_has_the_packages_version():
    assert ptxgen.version() == "0.1.0"
