"""ptxgen's PyTorch operators without a GPU: the rule their fake (meta)
implementations follow for the out's shape and type, how ptxgen.gemm
(and grouped_gemm) chooses between its eager path and the operators, and,
where PyTorch is installed, the operators' registration: their schemas, their meta
kernels, and a whole trace by torch.compile on meta tensors. Those last
skip without PyTorch (the CPU machines' image has none).

Written with unittest, which pytest runs as well, so that a machine with
PyTorch but no pytest runs it:
    PYTHONPATH=dist/python python3 -m unittest discover -s tests/python -p 'test_torch_ops.py' -v
"""
import inspect
import os
import pathlib
import subprocess
import sys
import types
import unittest
from unittest import mock

import ptxgen
from ptxgen import _gemm, _grouped
from ptxgen import _torch_ops  # before any stand-in torch: registers the real one's

try:
    import torch
except ImportError:
    torch = None

NEEDS_TORCH = unittest.skipIf(torch is None, "needs PyTorch (the CPU machines' image has none)")
ROOT = pathlib.Path(__file__).resolve().parents[2]


class Symbolic:
    """A size that refuses to be compared, as a symbolic size would add a
    guard (a condition on its value) to a compiled graph when compared."""

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        raise AssertionError(f"{self.name} was compared")

    __ne__ = __lt__ = __gt__ = __le__ = __ge__ = __eq__
    __hash__ = object.__hash__

    def __bool__(self):
        raise AssertionError(f"{self.name} was tested")


class OutputOf(unittest.TestCase):
    """output_of(a_shape, a_dtype, b_shape, out_dtype, dtype): the out
    ptxgen.gemm allocates, which the fake implementations return."""

    def test_a_product_is_m_by_n_of_the_librarys_type_for_the_inputs(self):
        for a_dtype, out in (("torch.float16", "float16"), ("torch.bfloat16", "bfloat16"),
                             ("torch.float8_e4m3fn", "bfloat16"),
                             ("torch.float8_e5m2", "bfloat16"),
                             ("torch.int8", "int32"), ("torch.uint8", "int32")):
            with self.subTest(a_dtype=a_dtype):
                self.assertEqual(_torch_ops.output_of((5, 7), a_dtype, (7, 3)),
                                 ((5, 3), out))

    def test_tf32_multiplies_float32_into_float32(self):
        self.assertEqual(_torch_ops.output_of((5, 7), "torch.float32", (7, 3), dtype="tf32"),
                         ((5, 3), "float32"))

    def test_a_batch_keeps_its_batch(self):
        self.assertEqual(_torch_ops.output_of((4, 5, 7), "bf16", (4, 7, 3)),
                         ((4, 5, 3), "bfloat16"))

    def test_out_dtype_is_read_in_every_spelling_ptxgen_takes(self):
        for out_dtype, out in (("f32", "float32"), ("float32", "float32"),
                               ("torch.float32", "float32"), ("e4m3", "float8_e4m3fn"),
                               ("torch.float8_e5m2", "float8_e5m2"), ("s8", "int8"),
                               ("bf16", "bfloat16")):
            with self.subTest(out_dtype=out_dtype):
                self.assertEqual(
                    _torch_ops.output_of((5, 7), "e4m3", (7, 3), out_dtype=out_dtype),
                    ((5, 3), out))

    def test_sizes_are_carried_not_compared(self):
        m, k, n, batch = (Symbolic(name) for name in ("m", "k", "n", "batch"))
        shape, _ = _torch_ops.output_of((batch, m, k), "bf16", (batch, k, n))
        self.assertEqual([size.name for size in shape], ["batch", "m", "n"])

    def test_refuses_what_has_no_such_out_naming_the_rule(self):
        for arguments, keywords, words in (
                (((5,), "bf16", (5, 3)), {}, "has shape (5,) and b (5, 3)"),
                (((2, 2, 5, 7), "bf16", (2, 2, 7, 3)), {}, "[batch,m,k] and [batch,k,n]"),
                (((5, 7), "bf16", (2, 7, 3)), {}, "[m,k] and [k,n]"),
                (((5, 7), "torch.float64", (7, 3)), {}, "a.dtype='torch.float64'"),
                (((5, 7), "bf16", (7, 3)), {"out_dtype": "f64"}, "out_dtype='f64'"),
                (((5, 7), "torch.float32", (7, 3)), {"out_dtype": "tf32"}, "its out is 'f32'")):
            with self.subTest(arguments=arguments, keywords=keywords):
                with self.assertRaises(ptxgen.Error) as refusal:
                    _torch_ops.output_of(*arguments, **keywords)
                self.assertEqual(refusal.exception.status, "PTXGEN_STATUS_INVALID_VALUE")
                self.assertIn("ptxgen.gemm: ", str(refusal.exception))
                self.assertIn(words, str(refusal.exception))


class Recorder:
    """A stand-in for a gemm: keeps its arguments, returns a marker."""

    def __init__(self, marker):
        self.marker = marker
        self.calls = []

    def __call__(self, *args, **keywords):
        self.calls.append((args, keywords))
        return self.marker


def stand_in_torch(compiling):
    """A module named torch whose torch.compiler.is_compiling() answers
    `compiling`, as ptxgen.gemm reads it."""
    module = types.ModuleType("torch")
    module.compiler = types.SimpleNamespace(is_compiling=lambda: compiling)
    return module


KEYWORDS = dict(out="out", c="c", bias="bias", bias_along="m", activation="silu",
                alpha=0.5, beta=2.0, out_dtype="f32", stream=7, dtype="tf32",
                scale_a="sa", scale_b="sb", scale_d="sd", amax="amax", fast_accum=True,
                scaling="tensor")


class PublicGemm(unittest.TestCase):
    """ptxgen.gemm: the eager path unless torch is imported and tracing, then
    the operators' adapter; either is given every argument unchanged."""

    def run_with(self, torch_module):
        eager, traced = Recorder("eager"), Recorder("traced")
        with mock.patch.dict(sys.modules), mock.patch.object(_gemm, "gemm", eager), \
                mock.patch.object(_torch_ops, "gemm", traced):
            sys.modules.pop("torch", None)
            if torch_module is not None:
                sys.modules["torch"] = torch_module
            result = ptxgen.gemm("a", "b", **KEYWORDS)
        return result, eager.calls + traced.calls

    def test_without_torch_it_runs_the_eager_path(self):
        self.assertEqual(self.run_with(None), ("eager", [(("a", "b"), KEYWORDS)]))

    def test_torch_imported_but_not_tracing_runs_the_eager_path(self):
        self.assertEqual(self.run_with(stand_in_torch(False)),
                         ("eager", [(("a", "b"), KEYWORDS)]))

    def test_code_torch_compile_traces_calls_the_operators(self):
        self.assertEqual(self.run_with(stand_in_torch(True)),
                         ("traced", [(("a", "b"), KEYWORDS)]))

    def test_both_paths_take_the_keywords_of_the_eager_gemm(self):
        eager = inspect.signature(_gemm.gemm)
        self.assertEqual(inspect.signature(ptxgen.gemm), eager)
        self.assertEqual(inspect.signature(_torch_ops.gemm), eager)
        self.assertIn("gelu_tanh", ptxgen.gemm.__doc__)  # the whole contract, here

    def test_traced_code_is_refused_a_stream(self):
        with self.assertRaises(ptxgen.Error) as refusal:
            _torch_ops.gemm("a", "b", stream=7)
        self.assertIn("stream= is not taken in code torch.compile traces", str(refusal.exception))

    def test_importing_ptxgen_imports_no_torch(self):
        run = subprocess.run([sys.executable, "-c", "import sys, ptxgen\n"
                              "ptxgen.plan(m=64, n=64, k=64)\n"
                              "print(sorted(name for name in sys.modules if name == 'torch' or "
                              "name.startswith('torch.')))"],
                             capture_output=True, text=True, check=True, env=os.environ)
        self.assertEqual(run.stdout.strip(), "[]")


GROUPED_KEYWORDS = dict(masked_m="m", expected_m=16, bias="bias", out_dtype="f32",
                       activation="silu", alpha=0.5, scale_a="sa", scale_b="sb", out="out",
                       stream=7, dtype="tf32", fast_accum=True, scaling="tensor")


class PublicGroupedGemm(unittest.TestCase):
    """ptxgen.grouped_gemm chooses its path as ptxgen.gemm does."""

    def run_with(self, torch_module):
        eager, traced = Recorder("eager"), Recorder("traced")
        with mock.patch.dict(sys.modules), \
                mock.patch.object(_grouped, "grouped_gemm", eager), \
                mock.patch.object(_torch_ops, "grouped_gemm", traced):
            sys.modules.pop("torch", None)
            if torch_module is not None:
                sys.modules["torch"] = torch_module
            result = ptxgen.grouped_gemm("a", "b", "offs", **GROUPED_KEYWORDS)
        return result, eager.calls + traced.calls

    def test_eager_without_torch_or_tracing_the_operator_when_traced(self):
        call = [(("a", "b", "offs"), GROUPED_KEYWORDS)]
        self.assertEqual(self.run_with(None), ("eager", call))
        self.assertEqual(self.run_with(stand_in_torch(False)), ("eager", call))
        self.assertEqual(self.run_with(stand_in_torch(True)), ("traced", call))

    def test_both_paths_take_the_keywords_of_the_eager_grouped_gemm(self):
        eager = inspect.signature(_grouped.grouped_gemm)
        self.assertEqual(inspect.signature(ptxgen.grouped_gemm), eager)
        self.assertEqual(inspect.signature(_torch_ops.grouped_gemm), eager)
        self.assertIn("masked_m", ptxgen.grouped_gemm.__doc__)

    def test_traced_code_is_refused_a_stream(self):
        with self.assertRaises(ptxgen.Error) as refusal:
            _torch_ops.grouped_gemm("a", "b", "offs", stream=7)
        self.assertIn("ptxgen.grouped_gemm: stream= is not taken", str(refusal.exception))


def fake_tensors(*specs):
    """Meta tensors (shape, dtype): no memory, no device; the operators run
    their fake implementations on them."""
    return [torch.empty(shape, dtype=dtype, device="meta") for shape, dtype in specs]


@NEEDS_TORCH
class Registration(unittest.TestCase):
    """torch.ops.ptxgen.gemm and gemm_amax as PyTorch sees them."""

    ARGUMENTS = ["a", "b", "c", "bias", "scale_a", "scale_b", "scale_d", "bias_along",
                 "activation", "alpha", "beta", "out_dtype", "dtype", "fast_accum", "scaling"]

    def test_both_are_functional_with_ptxgen_gemms_arguments(self):
        for op, returns in ((torch.ops.ptxgen.gemm.default, 1),
                            (torch.ops.ptxgen.gemm_amax.default, 2)):
            with self.subTest(op=str(op)):
                schema = op._schema
                self.assertEqual([argument.name for argument in schema.arguments],
                                 self.ARGUMENTS)
                self.assertFalse(schema.is_mutable)
                self.assertEqual(len(schema.returns), returns)
        eager = inspect.signature(_gemm.gemm).parameters
        for argument in torch.ops.ptxgen.gemm.default._schema.arguments[2:]:
            self.assertEqual(argument.default_value, eager[argument.name].default,
                             argument.name)

    def test_meta_tensors_get_the_out_ptxgen_allocates(self):
        a, b = fake_tensors(((5, 7), torch.bfloat16), ((3, 7), torch.bfloat16))
        out = torch.ops.ptxgen.gemm(a, b.t())
        self.assertEqual((out.shape, out.dtype, out.device.type, out.stride()),
                         ((5, 3), torch.bfloat16, "meta", (3, 1)))
        out = torch.ops.ptxgen.gemm(a, b.t(), out_dtype="f32")
        self.assertEqual(out.dtype, torch.float32)
        a8, b8 = fake_tensors(((2, 5, 32), torch.float8_e4m3fn), ((2, 32, 16), torch.float8_e5m2))
        out, amax = torch.ops.ptxgen.gemm_amax(a8, b8)
        self.assertEqual((out.shape, out.dtype), ((2, 5, 16), torch.bfloat16))
        self.assertEqual((amax.shape, amax.dtype), ((), torch.float32))

    def test_the_fake_refuses_as_ptxgen_does(self):
        a, b = fake_tensors(((5, 7), torch.float64), ((7, 3), torch.float64))
        with self.assertRaises(ptxgen.Error) as refusal:
            torch.ops.ptxgen.gemm(a, b)
        self.assertIn("a.dtype=torch.float64", str(refusal.exception))

    def test_torch_compile_traces_ptxgen_gemm_whole_on_meta_tensors(self):
        graphs = []

        def backend(graph, example_inputs):
            graphs.append(graph)
            return graph.forward

        def linear(x, w, b):
            return ptxgen.gemm(x, w.t(), bias=b, activation="gelu", out_dtype=torch.float32)

        torch._dynamo.reset()
        compiled = torch.compile(linear, backend=backend, fullgraph=True, dynamic=True)
        x, w, b = fake_tensors(((5, 64), torch.bfloat16), ((48, 64), torch.bfloat16),
                               ((48,), torch.float32))
        out = compiled(x, w, b)
        self.assertEqual((out.shape, out.dtype), ((5, 48), torch.float32))
        (x,) = fake_tensors(((9, 64), torch.bfloat16))
        self.assertEqual(compiled(x, w, b).shape, (9, 48))  # dynamic m, no new graph
        self.assertEqual(len(graphs), 1)
        targets = [node.target for node in graphs[0].graph.nodes if node.op == "call_function"]
        self.assertIn(torch.ops.ptxgen.gemm, targets)  # Dynamo names the packet


@NEEDS_TORCH
class GroupedRegistration(unittest.TestCase):
    """torch.ops.ptxgen.grouped_gemm as PyTorch sees it."""

    ARGUMENTS = ["a", "b", "offs", "masked_m", "bias", "scale_a", "scale_b", "expected_m",
                 "activation", "alpha", "out_dtype", "dtype", "fast_accum", "scaling"]

    def test_it_is_functional_with_grouped_gemms_arguments(self):
        schema = torch.ops.ptxgen.grouped_gemm.default._schema
        self.assertEqual([argument.name for argument in schema.arguments], self.ARGUMENTS)
        self.assertFalse(schema.is_mutable)
        self.assertEqual(len(schema.returns), 1)
        eager = inspect.signature(_grouped.grouped_gemm).parameters
        for argument in schema.arguments[2:]:
            self.assertEqual(argument.default_value, eager[argument.name].default,
                             argument.name)

    def test_meta_tensors_get_the_out_ptxgen_allocates(self):
        a, b, offs = fake_tensors(((1000, 128), torch.bfloat16), ((8, 128, 256), torch.bfloat16),
                                  ((8,), torch.int32))
        out = torch.ops.ptxgen.grouped_gemm(a, b, offs)
        self.assertEqual((out.shape, out.dtype, out.device.type), ((1000, 256), torch.bfloat16,
                                                                   "meta"))
        a3, = fake_tensors(((8, 64, 128), torch.bfloat16))
        out = torch.ops.ptxgen.grouped_gemm(a3, b, masked_m=offs, out_dtype="f32")
        self.assertEqual((out.shape, out.dtype), ((8, 64, 256), torch.float32))

    def test_torch_compile_traces_grouped_gemm_whole_on_meta_tensors(self):
        graphs = []

        def backend(graph, example_inputs):
            graphs.append(graph)
            return graph.forward

        def experts(x, w, offs):
            return ptxgen.grouped_gemm(x, w.transpose(1, 2), offs, activation="silu")

        torch._dynamo.reset()
        compiled = torch.compile(experts, backend=backend, fullgraph=True)
        x, w, offs = fake_tensors(((96, 64), torch.bfloat16), ((4, 48, 64), torch.bfloat16),
                                  ((4,), torch.int32))
        self.assertEqual(compiled(x, w, offs).shape, (96, 48))
        targets = [node.target for node in graphs[0].graph.nodes if node.op == "call_function"]
        self.assertIn(torch.ops.ptxgen.grouped_gemm, targets)


@NEEDS_TORCH
class ImportOrder(unittest.TestCase):
    """The operators exist whichever of torch and ptxgen is imported first."""

    SCRIPT = """
import sys
{imports}
registered = hasattr(torch.ops.ptxgen, "gemm")
def f(x, w):
    return ptxgen.gemm(x, w.t())
x = torch.empty(4, 32, dtype=torch.float16, device="meta")
w = torch.empty(8, 32, dtype=torch.float16, device="meta")
out = torch.compile(f, backend="eager", fullgraph=True)(x, w)
print(registered, tuple(out.shape))
"""

    def run_script(self, imports):
        return subprocess.run([sys.executable, "-c", self.SCRIPT.format(imports=imports)],
                              capture_output=True, text=True, check=True,
                              env=os.environ).stdout.strip()

    def test_torch_first_registers_them_at_import(self):
        self.assertEqual(self.run_script("import torch\nimport ptxgen"), "True (4, 8)")

    def test_ptxgen_first_registers_them_when_compiled_code_first_calls_gemm(self):
        self.assertEqual(self.run_script("import ptxgen\nimport torch"), "False (4, 8)")


if __name__ == "__main__":
    unittest.main()
