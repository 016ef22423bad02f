"""ptxgen.attention on a Hopper GPU against a float64 reference computed
with PyTorch: FlashAttention's [batch, seq, heads, dim] and SDPA's
[batch, heads, seq, dim] (contiguous, and as a transposed view), grouped
query heads, causal masks with seq_q above and below seq_k (rows that see
no key: out 0, LSE +inf), an explicit scale, out= and the LSE, variable
lengths against each sequence's own reference, a repeated call prepared
once, a CUDA graph replayed with new lengths; torch.library.opcheck of
torch.ops.ptxgen.attention and attention_lse, and torch.compile
(fullgraph=True) calling ptxgen.attention. An out given is poisoned (NaN)
before the run that writes it. Skipped without PyTorch or an sm_90 GPU.

Written with unittest, which pytest runs as well, so that a GPU machine
whose image has PyTorch but no pytest runs it: `bash tools/python_install.sh
dist/python` here, then there
    PYTHONPATH=dist/python python3 -m unittest discover -s tests/python -p 'test_attention_gpu.py' -v

Inputs are uniform in [-1, 1); P is rounded to the inputs' type before
P·V and out after it, so out is bounded by its relative error by norm; the
LSE, kept in f32, more tightly.
"""
import math
import unittest

import ptxgen
from hopper import NEEDS_HOPPER, relative_error, torch, uniform
from ptxgen import _attention

OUT_BOUND = 1e-2
LSE_BOUND = 1e-3


def reference(q, k, v, causal=False, scale=None):
    """(out [batch, seq_q, heads_q, dim], lse [batch, heads_q, seq_q]) in
    float64 of q [batch, seq_q, heads_q, dim] and k, v [batch, seq_k,
    heads_kv, dim]; causal aligned to the bottom-right corner."""
    q, k, v = (x.double().transpose(1, 2) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-1, -2) * scale
    if causal:
        seq_q, seq_k = scores.shape[-2:]
        rows = torch.arange(seq_q, device=q.device)[:, None]
        keys = torch.arange(seq_k, device=q.device)[None, :]
        scores = scores.masked_fill(keys > rows + seq_k - seq_q, -math.inf)
    lse = torch.logsumexp(scores, dim=-1)
    p = torch.nan_to_num(torch.exp(scores - lse[..., None]), nan=0.0)
    lse = torch.where(torch.isinf(lse), math.inf, lse)  # no key seen: +inf
    return (p @ v).transpose(1, 2), lse


def poisoned(*shape, dtype):
    return torch.full(shape, math.nan, dtype=dtype, device="cuda")


@NEEDS_HOPPER
class AttentionAgainstTorch(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(37)

    def assertMatches(self, out, lse, expected_out, expected_lse):
        self.assertFalse(torch.isnan(out).any().item(), "NaN in out")
        self.assertLess(relative_error(out, expected_out), OUT_BOUND)
        if lse is None:
            return
        self.assertEqual(lse.dtype, torch.float32)
        infinite = torch.isinf(expected_lse)
        self.assertTrue(torch.equal(torch.isinf(lse), infinite))
        self.assertLess((lse.double() - expected_lse)[~infinite].abs().max().item(),
                        LSE_BOUND * max(1.0, expected_lse[~infinite].abs().max().item()))

    def inputs(self, batch, seq_q, seq_k, heads_q, heads_kv, dim, dtype=None):
        """q, k and v of FlashAttention's layout, bf16 unless `dtype`."""
        dtype = dtype or torch.bfloat16
        return (uniform(batch, seq_q, heads_q, dim, dtype=dtype),
                uniform(batch, seq_k, heads_kv, dim, dtype=dtype),
                uniform(batch, seq_k, heads_kv, dim, dtype=dtype))

    def test_flash_attentions_layout_with_grouped_query_heads(self):
        for dtype in (torch.float16, torch.bfloat16):
            for dim in (64, 128):
                with self.subTest(dtype=dtype, dim=dim):
                    q, k, v = self.inputs(2, 200, 328, 8, 2, dim, dtype)
                    out, lse = ptxgen.attention(q, k, v, return_lse=True)
                    self.assertEqual((out.shape, out.dtype), (q.shape, dtype))
                    self.assertEqual(lse.shape, (2, 8, 200))
                    self.assertMatches(out, lse, *reference(q, k, v))

    def test_causal_masks_align_to_the_bottom_right_corner(self):
        for seq_q, seq_k in ((200, 328), (328, 200)):  # the latter: rows that see none
            with self.subTest(seq_q=seq_q, seq_k=seq_k):
                q, k, v = self.inputs(2, seq_q, seq_k, 4, 4, 128)
                out, lse = ptxgen.attention(q, k, v, causal=True, return_lse=True)
                expected_out, expected_lse = reference(q, k, v, causal=True)
                self.assertMatches(out, lse, expected_out, expected_lse)
                if seq_q > seq_k:
                    self.assertEqual(out[:, :seq_q - seq_k].abs().max().item(), 0.0)

    def test_sdpas_layout_contiguous_and_as_a_transposed_view(self):
        q, k, v = self.inputs(2, 200, 200, 8, 2, 64)
        expected_out, expected_lse = reference(q, k, v, causal=True, scale=0.3)
        views = [x.transpose(1, 2) for x in (q, k, v)]  # bshd memory
        for name, tensors in (("contiguous", [x.contiguous() for x in views]),
                              ("view", views)):
            with self.subTest(name):
                out, lse = ptxgen.attention(*tensors, layout="bhsd", causal=True, scale=0.3,
                                            return_lse=True)
                self.assertEqual(out.shape, tensors[0].shape)
                self.assertEqual(out.stride(), tensors[0].stride())
                self.assertMatches(out.transpose(1, 2), lse, expected_out, expected_lse)
                # SDPA's own, its K/V heads repeated for each query head.
                sdpa = torch.nn.functional.scaled_dot_product_attention(
                    tensors[0], *(x.repeat_interleave(4, dim=1) for x in tensors[1:]),
                    is_causal=True, scale=0.3)
                self.assertLess(relative_error(out, sdpa.double()), OUT_BOUND)

    def test_out_is_written_in_place(self):
        q, k, v = self.inputs(1, 256, 256, 4, 4, 64)
        out = poisoned(1, 256, 4, 64, dtype=torch.bfloat16)
        self.assertIs(ptxgen.attention(q, k, v, out=out), out)
        self.assertMatches(out, None, reference(q, k, v)[0], None)

    def test_variable_lengths_match_each_sequences_own_attention(self):
        lengths_q, lengths_k = [37, 1, 128, 90], [50, 64, 128, 17]
        heads_q, heads_kv, dim = 8, 2, 128
        q = uniform(sum(lengths_q), heads_q, dim, dtype=torch.bfloat16)
        k = uniform(sum(lengths_k), heads_kv, dim, dtype=torch.bfloat16)
        v = uniform(sum(lengths_k), heads_kv, dim, dtype=torch.bfloat16)
        cu_q = torch.tensor([0] + lengths_q, device="cuda").cumsum(0).int()
        cu_k = torch.tensor([0] + lengths_k, device="cuda").cumsum(0).int()
        out, lse = ptxgen.attention(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                                    max_seqlen_q=max(lengths_q), max_seqlen_k=max(lengths_k),
                                    causal=True, return_lse=True)
        self.assertEqual(lse.shape, (heads_q, sum(lengths_q)))
        starts = zip(cu_q.tolist()[:-1], cu_k.tolist()[:-1])
        for b, (start_q, start_k) in enumerate(starts):
            with self.subTest(sequence=b):
                rows = slice(start_q, start_q + lengths_q[b])
                keys = slice(start_k, start_k + lengths_k[b])
                expected_out, expected_lse = reference(q[None, rows], k[None, keys],
                                                       v[None, keys], causal=True)
                self.assertMatches(out[None, rows], lse[None, :, rows], expected_out,
                                   expected_lse)

    def test_bad_offsets_write_nothing_outside_out(self):
        """The audit's repro (issue #48): a sequence that ends past q's
        rows is skipped, and nothing past out is written."""
        q = uniform(512, 8, 64, dtype=torch.bfloat16)
        big = torch.full((1024, 8, 64), 7.0, device="cuda", dtype=torch.bfloat16)
        out = big[256:768]
        for cu_q in ([0, 256, 600], [-64, 192, 512], [0, 300, 256]):
            with self.subTest(cu_seqlens_q=cu_q):
                big.fill_(7.0)
                ptxgen.attention(q, q, q, cu_seqlens_q=torch.tensor(cu_q, device="cuda",
                                                                    dtype=torch.int32),
                                 cu_seqlens_k=torch.tensor([0, 256, 512], device="cuda",
                                                           dtype=torch.int32),
                                 max_seqlen_q=512, max_seqlen_k=256, out=out)
                torch.cuda.synchronize()
                self.assertFalse((big[:256] != 7).any())
                self.assertFalse((big[768:] != 7).any())

    def test_an_out_sharing_an_inputs_memory_is_refused(self):
        q, k, v = self.inputs(1, 128, 128, 4, 4, 64)
        for name, out in (("K", k), ("Q", q)):
            with self.subTest(out=name):
                with self.assertRaises(ptxgen.Error) as refused:
                    ptxgen.attention(q, k, v, out=out)
                self.assertIn(f"shares memory with {name}", str(refused.exception))

    def test_a_repeated_call_prepares_nothing(self):
        q, k, v = self.inputs(2, 128, 128, 4, 4, 64)
        ptxgen.attention(q, k, v)
        prepared = len(_attention._cache)
        for _ in range(3):
            q, k, v = self.inputs(2, 128, 128, 4, 4, 64)
            self.assertMatches(ptxgen.attention(q, k, v), None, reference(q, k, v)[0], None)
        self.assertEqual(len(_attention._cache), prepared)

    def test_a_captured_call_replays_with_new_lengths(self):
        """Only the kernel reads the offsets: a graph captured once
        replays with new lengths copied into the same tensors."""
        heads, dim, total = 4, 64, 256
        q = uniform(total, heads, dim, dtype=torch.bfloat16)
        k = uniform(total, heads, dim, dtype=torch.bfloat16)
        v = uniform(total, heads, dim, dtype=torch.bfloat16)
        cu = torch.tensor([0, 100, 256], dtype=torch.int32, device="cuda")
        out = poisoned(total, heads, dim, dtype=torch.bfloat16)
        keywords = dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=total,
                        max_seqlen_k=total, causal=True, out=out)
        ptxgen.attention(q, k, v, **keywords)  # prepared outside the capture
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            ptxgen.attention(q, k, v, **keywords)
        for split in (30, 200):
            with self.subTest(split=split):
                cu.copy_(torch.tensor([0, split, total], dtype=torch.int32))
                out.fill_(math.nan)
                graph.replay()
                torch.cuda.synchronize()
                for rows in (slice(0, split), slice(split, total)):
                    expected = reference(q[None, rows], k[None, rows], v[None, rows],
                                         causal=True)[0]
                    self.assertMatches(out[None, rows], None, expected, None)


@NEEDS_HOPPER
class AttentionOperators(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(41)
        torch._dynamo.reset()

    def test_opcheck(self):
        q = uniform(2, 128, 8, 64, dtype=torch.bfloat16)
        k = uniform(2, 192, 2, 64, dtype=torch.bfloat16)
        v = uniform(2, 192, 2, 64, dtype=torch.bfloat16)
        view = [x.transpose(1, 2) for x in (q, k, v)]
        for op, arguments, keywords in (
                (torch.ops.ptxgen.attention.default, (q, k, v), dict(causal=True)),
                (torch.ops.ptxgen.attention_lse.default, (q, k, v), dict(scale=0.2)),
                (torch.ops.ptxgen.attention.default, tuple(view), dict(layout="bhsd"))):
            with self.subTest(op=str(op), keywords=keywords):
                torch.library.opcheck(op, arguments, keywords,
                                      test_utils=("test_schema", "test_faketensor"))

    def test_compiled_code_calls_the_operator_without_a_graph_break(self):
        def block(q, k, v):
            out, lse = ptxgen.attention(q * 2, k, v, causal=True, return_lse=True)
            return out * 2, lse  # exact in bf16: only the kernel's error shows

        q = uniform(2, 200, 8, 64, dtype=torch.bfloat16)
        k = uniform(2, 200, 2, 64, dtype=torch.bfloat16)
        v = uniform(2, 200, 2, 64, dtype=torch.bfloat16)
        out, lse = torch.compile(block, fullgraph=True)(q, k, v)
        expected_out, expected_lse = reference(q * 2, k, v, causal=True)
        self.assertLess(relative_error(out / 2, expected_out), OUT_BOUND)
        self.assertLess((lse.double() - expected_lse).abs().max().item(), LSE_BOUND * 10)


if __name__ == "__main__":
    unittest.main()
