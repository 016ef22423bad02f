"""ptxgen.grouped_gemm on a Hopper GPU against a float64 torch reference:
contiguous groups (torch._grouped_mm's layout, b stacked along n or a
transposed view of linear weights) with skewed and empty groups, a bias
per group and an activation; masked groups, rows past each count left as
they were; torch._grouped_mm's own result where this torch has it; CUDA
graphs captured once and replayed with new counts (which only the kernel
reads); the operator through torch.library.opcheck and torch.compile.
Skipped without PyTorch or without an sm_90 GPU.

Written with unittest, which pytest runs as well, so that a GPU machine
whose image has PyTorch but no pytest runs it: `bash tools/python_install.sh
dist/python` here, then there
    PYTHONPATH=dist/python python3 -m unittest discover -s tests/python -p 'test_grouped_gpu.py' -v

Inputs are multiples of 1/4 in [-1, 1], whose f32 sums are exact: what is
left to tolerate is the epilogue's f32 arithmetic and the out's rounding.
"""
import math
import unittest

import ptxgen
from hopper import NEEDS_HOPPER, F, quarters, relative_error, torch

# Rows per group: empty groups, one of a single row, one far past the rest.
SKEWED = (0, 300, 17, 0, 129, 1, 64, 489)
K, N = 256, 384
BF16 = dict(rtol=2**-7, atol=1e-2)


def offsets(rows):
    """torch._grouped_mm's offs of `rows`: cumulative row ends, int32."""
    return torch.tensor(rows, device="cuda").cumsum(0).to(torch.int32)


def contiguous_reference(a, b, rows, bias=None, activation=None):
    """Each group's rows of a times its b, in float64, group after group."""
    parts, start = [], 0
    for g, count in enumerate(rows):
        part = a[start:start + count].double() @ b[g].double()
        if bias is not None:
            part = part + bias[g].double()
        parts.append(part if activation is None else activation(part))
        start += count
    return torch.cat(parts)


@NEEDS_HOPPER
class Contiguous(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(31)

    def assertMatches(self, out, expected):
        self.assertFalse(torch.isnan(out).any().item(), "NaN in the result")
        torch.testing.assert_close(out.double(), expected, **BF16)

    def test_skewed_and_empty_groups_with_b_stacked_or_a_transposed_view(self):
        a = quarters(sum(SKEWED), K, dtype=torch.bfloat16)
        stacked = quarters(len(SKEWED), K, N, dtype=torch.bfloat16)  # [groups, k, n]
        weights = quarters(len(SKEWED), N, K, dtype=torch.bfloat16)  # [groups, n, k]
        offs = offsets(SKEWED)
        for name, b in (("stacked", stacked), ("transposed view", weights.transpose(1, 2))):
            with self.subTest(name):
                out = ptxgen.grouped_gemm(a, b, offs)
                self.assertEqual((out.shape, out.dtype), ((sum(SKEWED), N), torch.bfloat16))
                self.assertMatches(out, contiguous_reference(a, b, SKEWED))

    def test_a_bias_per_group_and_an_activation_into_f32(self):
        rows = (64, 0, 200, 36)
        a = quarters(sum(rows), K, dtype=torch.bfloat16)
        b = quarters(len(rows), N, K, dtype=torch.bfloat16).transpose(1, 2)
        bias = quarters(len(rows), N, dtype=torch.float32)
        out = ptxgen.grouped_gemm(a, b, offsets(rows), bias=bias, activation="silu",
                                  out_dtype=torch.float32)
        expected = contiguous_reference(a, b, rows, bias, F.silu)
        torch.testing.assert_close(out.double(), expected, rtol=1e-5, atol=1e-4)

    def test_the_same_as_torch_grouped_mm(self):
        if not hasattr(torch, "_grouped_mm"):
            self.skipTest("this torch has no _grouped_mm")
        a = torch.randn(sum(SKEWED), K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(len(SKEWED), N, K, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        offs = offsets(SKEWED)
        expected = torch._grouped_mm(a, b, offs)
        self.assertLess(relative_error(ptxgen.grouped_gemm(a, b, offs), expected.double()),
                        1e-2)

    def test_a_graph_replays_with_new_offsets(self):
        a = quarters(sum(SKEWED), K, dtype=torch.bfloat16)
        b = quarters(len(SKEWED), K, N, dtype=torch.bfloat16)
        offs = offsets(SKEWED)
        ptxgen.grouped_gemm(a, b, offs)  # prepared outside the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = ptxgen.grouped_gemm(a, b, offs)
        for rows in ((125,) * 8, (1000, 0, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 0, 1000)):
            offs.copy_(offsets(rows))
            a.copy_(quarters(*a.shape, dtype=torch.bfloat16))
            out.fill_(math.nan)
            graph.replay()
            torch.cuda.synchronize()
            self.assertMatches(out, contiguous_reference(a, b, rows))


@NEEDS_HOPPER
class Masked(unittest.TestCase):
    GROUPS, MAX_M = 6, 128
    COUNTS = (0, 128, 5, 77, 1, 64)

    def setUp(self):
        torch.manual_seed(37)

    def assertValidRows(self, out, a, b, counts):
        """Each group's first counts[g] rows its product, the rest NaN as
        they were before the run."""
        for g, count in enumerate(counts):
            expected = a[g, :count].double() @ b[g].double()
            torch.testing.assert_close(out[g, :count].double(), expected, **BF16)
            self.assertTrue(torch.isnan(out[g, count:]).all().item(),
                            f"group {g} wrote past its {count} rows")

    def inputs(self):
        a = quarters(self.GROUPS, self.MAX_M, K, dtype=torch.bfloat16)
        b = quarters(self.GROUPS, N, K, dtype=torch.bfloat16).transpose(1, 2)
        out = torch.full((self.GROUPS, self.MAX_M, N), math.nan, device="cuda",
                         dtype=torch.bfloat16)
        return a, b, out

    def test_each_group_computes_its_count_of_rows(self):
        a, b, out = self.inputs()
        masked_m = torch.tensor(self.COUNTS, device="cuda", dtype=torch.int32)
        for expected_m in (None, 1, 32, self.MAX_M):
            with self.subTest(expected_m=expected_m):
                out.fill_(math.nan)
                returned = ptxgen.grouped_gemm(a, b, masked_m=masked_m, out=out,
                                               expected_m=expected_m)
                self.assertIs(returned, out)
                self.assertValidRows(out, a, b, self.COUNTS)

    def test_counts_past_the_room_are_clipped(self):
        a, b, out = self.inputs()
        masked_m = torch.tensor((500, -3, 128, 0, 2**31 - 1, 7), device="cuda",
                                dtype=torch.int32)
        ptxgen.grouped_gemm(a, b, masked_m=masked_m, out=out)
        self.assertValidRows(out, a, b, (128, 0, 128, 0, 128, 7))

    def test_a_graph_captured_once_replays_with_new_counts(self):
        a, b, out = self.inputs()
        masked_m = torch.tensor(self.COUNTS, device="cuda", dtype=torch.int32)
        ptxgen.grouped_gemm(a, b, masked_m=masked_m, out=out, expected_m=16)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            ptxgen.grouped_gemm(a, b, masked_m=masked_m, out=out, expected_m=16)
        for counts in ((16,) * 6, (128, 0, 0, 0, 0, 3), (1, 2, 3, 4, 5, 6)):
            masked_m.copy_(torch.tensor(counts, dtype=torch.int32))
            a.copy_(quarters(*a.shape, dtype=torch.bfloat16))
            out.fill_(math.nan)
            graph.replay()
            torch.cuda.synchronize()
            self.assertValidRows(out, a, b, counts)


@NEEDS_HOPPER
class Operator(unittest.TestCase):
    """torch.ops.ptxgen.grouped_gemm: opcheck (every row covered, so that
    the compared outs are all written) and a compiled function."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        from ptxgen import _torch_ops  # noqa: F401  (ptxgen was imported before torch)

    def test_opcheck_of_both_groupings(self):
        rows = (96, 0, 160)
        a2 = quarters(sum(rows), K, dtype=torch.bfloat16)
        a3 = quarters(3, 64, K, dtype=torch.bfloat16)
        b = quarters(3, K, N, dtype=torch.bfloat16)
        cases = {"contiguous": ((a2, b, offsets(rows)), {}),
                 "masked": ((a3, b), dict(masked_m=torch.full((3,), 64, device="cuda",
                                                               dtype=torch.int32)))}
        for name, (args, kwargs) in cases.items():
            with self.subTest(name):
                torch.library.opcheck(torch.ops.ptxgen.grouped_gemm.default, args, kwargs)

    def test_compiled_experts_trace_whole(self):
        def experts(x, w, offs):
            return ptxgen.grouped_gemm(x, w.transpose(1, 2), offs, activation="relu")

        torch._dynamo.reset()
        compiled = torch.compile(experts, fullgraph=True)
        rows = (10, 0, 54, 128)
        x = quarters(sum(rows), K, dtype=torch.bfloat16)
        w = quarters(len(rows), N, K, dtype=torch.bfloat16)
        out = compiled(x, w, offsets(rows))
        expected = contiguous_reference(x, w.transpose(1, 2), rows, activation=F.relu)
        torch.testing.assert_close(out.double(), expected, **BF16)


if __name__ == "__main__":
    unittest.main()
