"""ptxgen's PyTorch operators on a Hopper GPU: torch.library.opcheck of
torch.ops.ptxgen.gemm and gemm_amax; torch.compile(fullgraph=True) of
functions calling ptxgen.gemm (bias and activation, scaled fp8, out= and
amax= given) with no graph break and torch's result; mode="reduce-overhead"
(CUDA-graph trees) capturing them; and capture as servers do it, warmed up
on the default stream, then torch.cuda.graph on its own capture stream,
replayed on new inputs, for a plain, a split-K and a stream-K schedule.
Every output is poisoned (NaN) before the run that writes it. Skipped
without PyTorch or without an sm_90 GPU.

Written with unittest, which pytest runs as well, so that a GPU machine
whose image has PyTorch but no pytest runs it: `bash tools/python_install.sh
dist/python` here, then there
    PYTHONPATH=dist/python python3 -m unittest discover -s tests/python -p 'test_torch_gpu.py' -v

Inputs of the 16-bit cases are multiples of 1/4 in [-1, 1], whose f32 sums
are exact, against a float64 reference: what is left to tolerate is the
epilogue's f32 arithmetic and the out's rounding. fp8 and the larger
problems take uniform inputs and bound the relative error by norm.
"""
import math
import unittest

import ptxgen
from hopper import NEEDS_HOPPER, F, quarters, relative_error, torch, uniform


def poison_allocator(*shapes):
    """Blocks big enough for an f32 array of each shape, filled with 0xff
    (NaN in every float type), then freed: torch's caching allocator serves
    the next allocations of up to that size from such free blocks, so an
    out allocated next that a kernel fails to write most likely reads NaN."""
    blocks = [torch.full((math.prod(shape) * 4,), 255, dtype=torch.uint8, device="cuda")
              for shape in shapes]
    del blocks


TOLERANCES = {torch.float32: dict(rtol=1e-5, atol=1e-4),
              torch.float16: dict(rtol=2**-10, atol=1e-3),
              torch.bfloat16: dict(rtol=2**-7, atol=1e-2)} if torch else {}


class GpuCase(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(29)
        torch._dynamo.reset()

    def assertMatches(self, out, expected):
        self.assertFalse(torch.isnan(out).any().item(), "NaN in the result")
        torch.testing.assert_close(out.double(), expected, **TOLERANCES[out.dtype])


def call_targets(graph_module):
    return [node.target for node in graph_module.graph.nodes if node.op == "call_function"]


@NEEDS_HOPPER
class Opcheck(GpuCase):
    """torch.library.opcheck: schema (a new out, nothing mutated), fake
    implementation against the real one (shape, type, strides), autograd
    registration, and a trace with dynamic shapes."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The operators, called here directly: ptxgen was imported before
        # torch, so nothing has registered them yet when this file runs alone.
        from ptxgen import _torch_ops  # noqa: F401

    def test_gemm_in_each_form(self):
        x, w = quarters(264, 520, dtype=torch.bfloat16), quarters(136, 520, dtype=torch.bfloat16)
        xh, wh = quarters(264, 520), quarters(520, 136)  # an MN-major b
        xb, wb = quarters(3, 64, 128), quarters(3, 128, 72)
        x32, w32 = uniform(264, 520), uniform(136, 520)
        cases = {
            "bf16, w.t()": ((x, w.t()), {}),
            "f16, every epilogue op": ((xh, wh), dict(
                c=quarters(264, 136), bias=quarters(136, dtype=torch.float32),
                activation="gelu", alpha=0.5, beta=1.0)),
            "bias along m, f32 out": ((x, w.t()), dict(
                bias=quarters(264, dtype=torch.float32), bias_along="m", out_dtype="f32")),
            "batch": ((xb, wb), {}),
            "tf32": ((x32, w32.t()), dict(dtype="tf32")),
        }
        for name, (args, kwargs) in cases.items():
            with self.subTest(name):
                torch.library.opcheck(torch.ops.ptxgen.gemm.default, args, kwargs)

    def test_scaled_fp8_gemm_and_gemm_amax(self):
        # Not test_schema: it compares each input before and after the op
        # with torch.allclose, which is not made for float8 tensors.
        x8 = uniform(264, 528, dtype=torch.float8_e4m3fn)
        w8 = uniform(136, 528, dtype=torch.float8_e5m2)
        scales = dict(scale_a=torch.tensor([0.5], device="cuda"),
                      scale_b=torch.tensor([4.0], device="cuda"))
        for op in (torch.ops.ptxgen.gemm.default, torch.ops.ptxgen.gemm_amax.default):
            with self.subTest(str(op)):
                torch.library.opcheck(op, (x8, w8.t()), scales,
                                      test_utils=("test_faketensor",
                                                  "test_autograd_registration",
                                                  "test_aot_dispatch_dynamic"))
        x, w = quarters(264, 520), quarters(136, 520)
        torch.library.opcheck(torch.ops.ptxgen.gemm_amax.default, (x, w.t()),
                              dict(out_dtype="f32", activation="relu"))


@NEEDS_HOPPER
class Compiled(GpuCase):
    """torch.compile of functions calling ptxgen.gemm: one graph, holding
    the operator, and torch's result."""

    def assertTracesWhole(self, function, *args):
        explanation = torch._dynamo.explain(function)(*args)
        self.assertEqual((explanation.graph_count, explanation.graph_break_count), (1, 0),
                         explanation.break_reasons)
        targets = call_targets(explanation.graphs[0])
        # Dynamo's graph names the packet (torch.ops.ptxgen.gemm), not an overload.
        self.assertTrue({torch.ops.ptxgen.gemm, torch.ops.ptxgen.gemm_amax} & set(targets),
                        targets)
        torch._dynamo.reset()

    def test_a_linear_with_bias_and_gelu_matches_torch(self):
        def linear(x, w, b):
            return ptxgen.gemm(x, w.t(), bias=b, activation="gelu")

        w, b = quarters(136, 520, dtype=torch.bfloat16), quarters(136, dtype=torch.bfloat16)
        self.assertTracesWhole(linear, quarters(264, 520, dtype=torch.bfloat16), w, b)
        compiled = torch.compile(linear, fullgraph=True)
        for _ in range(3):  # new inputs, the same graph
            x = quarters(264, 520, dtype=torch.bfloat16)
            poison_allocator((264, 136))
            out = compiled(x, w, b)
            self.assertEqual(out.dtype, torch.bfloat16)
            self.assertMatches(out, F.gelu(F.linear(x.double(), w.double(), b.double())))

    def test_a_call_that_broke_the_graph_before_traces_whole(self):
        # Dynamo traced into the eager path and met torch.Stream (#34).
        def mlp_half(x, w):
            return F.silu(ptxgen.gemm(x, w.t())) * 2

        x, w = quarters(64, 256), quarters(128, 256)
        self.assertTracesWhole(mlp_half, x, w)
        poison_allocator((64, 128))
        self.assertMatches(torch.compile(mlp_half)(x, w),
                           F.silu(x.double() @ w.double().t()) * 2)

    def test_scaled_fp8_matches_the_dequantized_reference(self):
        def scaled(x8, w8, scale_a, scale_b):
            return ptxgen.gemm(x8, w8.t(), scale_a=scale_a, scale_b=scale_b)

        x8 = uniform(264, 528, dtype=torch.float8_e4m3fn)
        w8 = uniform(136, 528, dtype=torch.float8_e4m3fn)
        scale_a = torch.tensor([0.5], device="cuda")
        scale_b = torch.tensor([4.0], device="cuda")
        self.assertTracesWhole(scaled, x8, w8, scale_a, scale_b)
        poison_allocator((264, 136))
        out = torch.compile(scaled, fullgraph=True)(x8, w8, scale_a, scale_b)
        self.assertEqual(out.dtype, torch.bfloat16)
        expected = (x8.float().double() * 0.5) @ (w8.float().double() * 4.0).t()
        self.assertLess(relative_error(out, expected), 3e-3)

    def test_out_and_amax_given_are_written(self):
        def into(x8, w8, scale_a, scale_b, out, amax):
            return ptxgen.gemm(x8, w8.t(), scale_a=scale_a, scale_b=scale_b, out=out,
                               amax=amax, out_dtype=torch.float32)

        x8 = uniform(264, 528, dtype=torch.float8_e4m3fn)
        w8 = uniform(136, 528, dtype=torch.float8_e5m2)
        scale_a = torch.tensor([0.5], device="cuda")
        scale_b = torch.tensor([4.0], device="cuda")
        out = torch.full((264, 136), math.nan, device="cuda")
        amax = torch.full((1,), math.nan, device="cuda")
        self.assertTracesWhole(into, x8, w8, scale_a, scale_b, out, amax)
        out.fill_(math.nan)
        amax.fill_(math.nan)
        returned = torch.compile(into, fullgraph=True)(x8, w8, scale_a, scale_b, out, amax)
        expected = (x8.float().double() * 0.5) @ (w8.float().double() * 4.0).t()
        # fp8 tensor cores sum each 128 k in less than f32's precision
        # (8e-5 seen here): the C++ tests' bound for types other than bf16.
        self.assertLess(relative_error(out, expected), 2e-3)
        self.assertTrue(torch.equal(returned, out))
        self.assertAlmostEqual(amax.item() / expected.abs().max().item(), 1.0, delta=2e-3)

    def test_gemm_amax_returns_amax_inside_the_graph(self):
        def with_amax(x, w):
            out, amax = torch.ops.ptxgen.gemm_amax(x, w.t(), out_dtype="f32")
            return out / amax

        x, w = quarters(264, 520), quarters(136, 520)
        self.assertTracesWhole(with_amax, x, w)
        expected = x.double() @ w.double().t()
        expected /= expected.abs().max()
        poison_allocator((264, 136), (1,))
        self.assertMatches(torch.compile(with_amax, fullgraph=True)(x, w), expected)


@NEEDS_HOPPER
class ReduceOverhead(GpuCase):
    """mode="reduce-overhead": CUDA-graph trees record the compiled graph,
    ptxgen's GEMMs in it, and replay it on new inputs; no graph skipped."""

    def test_a_decode_mlp_is_recorded_and_replayed(self):
        from torch._dynamo.utils import counters

        # m=64, n=k=4096 bf16 runs stream-K, whose workspace each run takes
        # from the allocator (the graph's pool when recorded).
        config = ptxgen.plan(m=64, n=4096, k=4096, dtype="bf16").config
        self.assertIn("sk", config.split(), config)

        def mlp(x, w_up, w_down):
            return ptxgen.gemm(F.silu(ptxgen.gemm(x, w_up.t())), w_down.t())

        w_up = uniform(4096, 4096, dtype=torch.bfloat16) / 64
        w_down = uniform(4096, 4096, dtype=torch.bfloat16) / 64
        compiled = torch.compile(mlp, mode="reduce-overhead", fullgraph=True)
        skips = counters["inductor"]["cudagraph_skips"]
        out = None
        for _ in range(4):  # warm-up, record, then replays
            x = uniform(64, 4096, dtype=torch.bfloat16)
            if out is not None:
                out.fill_(math.nan)  # the graph's static out, which the replay writes
            torch.compiler.cudagraph_mark_step_begin()
            out = compiled(x, w_up, w_down)
            up = F.silu((x.double() @ w_up.double().t()).to(torch.bfloat16).double())
            expected = up.to(torch.bfloat16).double() @ w_down.double().t()
            self.assertFalse(torch.isnan(out).any().item())
            self.assertLess(relative_error(out, expected), 1e-2)
        self.assertEqual(counters["inductor"]["cudagraph_skips"], skips)


@NEEDS_HOPPER
class CudaGraphCapture(GpuCase):
    """As servers capture: a warm-up run on the default stream, then
    torch.cuda.graph (on its own capture stream) around the same call; the
    graph replays on new values copied into its static input."""

    # (m, n, k) of f16 problems and the schedule ptxgen picks for each on
    # an H200, named in its configuration: split-K as "k<slices>", stream-K
    # as "sk".
    SCHEDULES = {"plain": ((256, 256, 256), None),
                 "split-K": ((128, 256, 4096), "k4"),
                 "stream-K": ((64, 4096, 4096), "sk")}

    def test_replays_on_new_inputs_in_every_schedule(self):
        for name, ((m, n, k), word) in self.SCHEDULES.items():
            with self.subTest(name):
                words = ptxgen.plan(m=m, n=n, k=k).config.split()
                if word is None:
                    self.assertFalse([w for w in words if w == "sk" or w[0] == "k"], words)
                else:
                    self.assertIn(word, words)
                x, w = quarters(m, k), quarters(n, k)
                self.assertMatches(ptxgen.gemm(x, w.t()), x.double() @ w.double().t())
                torch.cuda.synchronize()
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    out = ptxgen.gemm(x, w.t())
                for _ in range(3):
                    x.copy_(quarters(m, k))
                    out.fill_(math.nan)
                    graph.replay()
                    torch.cuda.synchronize()
                    self.assertMatches(out, x.double() @ w.double().t())

    def test_graphs_of_every_schedule_share_a_capture_workspace_zeroed_once(self):
        # Each capture keeps one workspace for its GEMMs, zeroed once in the
        # graph; a replay re-zeroes it before they run, though the capture's
        # block went back to the graph's pool at the eager call in between.
        problems = [shape for shape, _ in self.SCHEDULES.values()] + [(16, 4096, 4096)]
        inputs = [(quarters(m, k), quarters(n, k)) for m, n, k in problems]
        for x, w in inputs:
            ptxgen.gemm(x, w.t())  # prepared outside the capture
        torch.cuda.synchronize()
        graphs = []
        for _ in range(2):  # two captures on torch's capture stream in turn
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                outs = [ptxgen.gemm(x, w.t()) for x, w in inputs]
            graphs.append((graph, outs))
        for _ in range(3):
            for graph, outs in graphs:
                for x, _ in inputs:
                    x.copy_(quarters(*x.shape))
                for out in outs:
                    out.fill_(math.nan)
                eager_x, eager_w = inputs[0]
                ptxgen.gemm(eager_x, eager_w.t())  # an eager call between
                poison_allocator((4096, 4096))
                graph.replay()
                torch.cuda.synchronize()
                for (x, w), out in zip(inputs, outs):
                    self.assertMatches(out, x.double() @ w.double().t())

    def test_a_compiled_function_is_captured_too(self):
        def linear(x, w, b):
            return ptxgen.gemm(x, w.t(), bias=b, activation="silu")

        compiled = torch.compile(linear, fullgraph=True)
        x, w = quarters(64, 4096), quarters(4096, 4096)
        b = quarters(4096, dtype=torch.float32)
        compiled(x, w, b)  # compiles, and warms up on the default stream
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = compiled(x, w, b)
        for _ in range(3):
            x.copy_(quarters(64, 4096))
            out.fill_(math.nan)
            graph.replay()
            torch.cuda.synchronize()
            self.assertMatches(out, F.silu(F.linear(x.double(), w.double(), b.double())))


if __name__ == "__main__":
    unittest.main()
