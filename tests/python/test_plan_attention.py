"""ptxgen.plan_attention: the attention ptxgen.attention would run, planned
for a named device with no GPU, and what it generated; refusals as
ptxgen.Error with the library's message."""
import pytest

import ptxgen
from test_plan import NumpyBool, RaisingIndex

# The CLI example of the README: GQA 4:1, causal.
CAUSAL = dict(batch=2, heads=32, kv_heads=8, seq=4096, head_dim=128, causal=True)


@pytest.fixture(scope="module")
def causal_plan():
    return ptxgen.plan_attention(**CAUSAL)


def test_plans_an_attention_without_a_gpu(causal_plan):
    plan = causal_plan
    assert isinstance(plan, ptxgen.Plan)
    assert "attention_bf16_d128_causal" in plan.kernel_name
    assert plan.kernel_name in plan.source
    assert f".entry {plan.kernel_name}" in plan.ptx
    assert plan.cubin.startswith(b"\x7fELF")
    assert plan.form == "attention.bf16.d128+causal"
    resources = plan.resources
    assert resources["spill_store_bytes"] == resources["spill_load_bytes"] == 0
    assert 0 < resources["shared_bytes"] <= 227 * 1024


def test_the_grid_is_persistent_with_fixed_lengths_and_a_cta_a_tile_with_variable():
    # 2 x 32 heads x 32 blocks of 128 rows, causal: 1024 turns of two tiles.
    assert ptxgen.plan_attention(**CAUSAL).grid == (132, 1, 1, 1)
    assert ptxgen.plan_attention(**CAUSAL, sms=66).grid == (66, 1, 1, 1)
    # 4 sequences of up to 512 rows, 8 heads, head dim 64 (blocks of 192
    # rows): 3 blocks each, a CTA a tile.
    varlen = ptxgen.plan_attention(batch=4, heads=8, seq=512, head_dim=64, dtype="f16",
                                   total_q=1500, total_k=1500)
    assert varlen.grid == (96, 1, 1, 1)
    assert varlen.form == "attention.f16.d64+varlen"


def test_dtype_takes_the_spellings_ptxgen_plan_takes():
    for spelling in ("bf16", "bfloat16", "torch.bfloat16", _Dtype("bfloat16")):
        assert ptxgen.plan_attention(**dict(CAUSAL, dtype=spelling)).form.startswith(
            "attention.bf16")
    assert ptxgen.plan_attention(**dict(CAUSAL, dtype="float16")).form.startswith(
        "attention.f16")


class _Dtype:
    """A dtype object as torch and NumPy print theirs."""

    def __init__(self, name):
        self._name = name

    def __str__(self):
        return self._name


def test_the_same_problem_plans_the_same_text(causal_plan):
    assert ptxgen.plan_attention(**CAUSAL).source == causal_plan.source


def test_refuses_problems_and_targets_that_break_a_rule_with_the_librarys_message():
    cases = [
        (dict(CAUSAL, head_dim=72), "head_dim"),
        (dict(CAUSAL, kv_heads=7), "heads"),
        (dict(CAUSAL, dtype="e4m3"), "f16 or bf16"),
        (dict(CAUSAL, sms=0), "attention target: sm_count=0 is outside"),
        (dict(CAUSAL, scale=3e38), "attention: scale=3e\\+38 is too large"),
        (dict(CAUSAL, total_q=100, total_k=100), "seq_q=4096 \\(the longest sequence\\) "
                                                 "is more than total_q=100"),
    ]
    for problem, rule in cases:
        with pytest.raises(ptxgen.Error, match=rule):
            ptxgen.plan_attention(**problem)


def test_refuses_keywords_outside_their_values_before_the_library():
    cases = [
        (dict(CAUSAL, dtype="float16x"), "dtype='float16x' is not one of 'f16', 'bf16' "
                                         "\\(f16 or bf16"),
        (dict(CAUSAL, dtype="f32"), "dtype='f32' is not one of 'f16', 'bf16'"),
        (dict(CAUSAL, kv_heads=0), "kv_heads=0 names no heads"),
        (dict(CAUSAL, seq=NumpyBool()), "seq=.* is not an integer"),
        (dict(CAUSAL, heads=RaisingIndex()), "heads: its __index__ raised "
                                         "ZeroDivisionError"),
        (dict(CAUSAL, layout="sbhd"), "layout='sbhd' is not one of"),
        (dict(CAUSAL, causal=1), "causal=1 is not True or False"),
        (dict(CAUSAL, seq=True), "seq=True is not an integer"),
        (dict(CAUSAL, scale=0), "scale=0"),
        (dict(CAUSAL, total_q=100), "both total_q and total_k"),
        (dict(CAUSAL, sms=2**31), "sms=2147483648 does not fit in 32 bits"),
    ]
    for problem, message in cases:
        with pytest.raises(ptxgen.Error, match=message) as raised:
            ptxgen.plan_attention(**problem)
        assert str(raised.value).startswith("ptxgen.plan_attention: ")
