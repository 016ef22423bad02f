"""ptxgen.gemm on a Hopper GPU against PyTorch: every layout (from the
tensors' strides), output type, bias and activation, alpha and beta with C
(C as the output too), batches, padded leading dimensions, the caller's
stream, the same tensors seen only through DLPack, and the refusals only
the device path reaches; fp8 with per-tensor scales (e4m3, e4m3 x e5m2) and
tf32 against a float64 reference of the inputs as stored; int8 and uint8
into int32 exactly, into int8 and into float outputs. Skipped without
PyTorch or without an sm_90 GPU.

Written with unittest, which pytest runs as well, so that a GPU machine
whose image has PyTorch but no pytest runs it: `bash tools/python_install.sh
dist/python` here (the package, libptxgen.so and the Abseil libraries it
links), then there
    PYTHONPATH=dist/python python3 -m unittest discover -s tests/python -p 'test_gemm_gpu.py' -v

Inputs are multiples of 1/4 in [-1, 1] and the reference is computed in
float64: the f32 accumulation of such products is exact, so what is left
to tolerate is the epilogue's f32 arithmetic and D's rounding. The fp8 and
tf32 cases take uniform random inputs instead and bound the relative error
by norm. Integer sums are compared exactly with torch's int64 matmul on the
CPU.
"""
import unittest

import ptxgen
from hopper import NEEDS_HOPPER, F, quarters, relative_error, torch, uniform


ACTIVATIONS = {
    None: lambda v: v,
    "relu": F.relu if torch else None,
    "gelu": (lambda v: F.gelu(v)) if torch else None,
    "gelu_tanh": (lambda v: F.gelu(v, approximate="tanh")) if torch else None,
    "silu": F.silu if torch else None,
}


def reference(a, b, *, alpha=1.0, beta=0.0, c=None, bias=None, bias_along="n",
              activation=None):
    value = alpha * torch.matmul(a.double(), b.double())
    if c is not None:
        value = value + beta * c.double()
    if bias is not None:
        vector = bias.double()
        if bias_along == "n":
            value = value + (vector.unsqueeze(-2) if vector.dim() == 2 else vector)
        else:
            value = value + vector.unsqueeze(-1)
    return ACTIVATIONS[activation](value)


# D's rounding (half an ulp) and the epilogue's f32 functions.
TOLERANCES = {torch.float32: dict(rtol=1e-5, atol=1e-4),
              torch.float16: dict(rtol=2**-10, atol=1e-3),
              torch.bfloat16: dict(rtol=2**-7, atol=1e-2)} if torch else {}


class DLPackOnly:
    """A torch tensor as ptxgen sees an array of a library it does not know:
    __dlpack__ and __dlpack_device__ only; the streams asked for are kept."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.tensor.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


@NEEDS_HOPPER
class GemmAgainstTorch(unittest.TestCase):
    # Multiples of 8 (TMA rows of 16 bytes for either major), not of the
    # tiles: edges are exercised.
    M, N, K = 264, 136, 520

    def setUp(self):
        torch.manual_seed(19)

    def assertMatches(self, out, expected):
        self.assertFalse(torch.isnan(out).any().item(), "NaN in the result")
        torch.testing.assert_close(out.double(), expected, **TOLERANCES[out.dtype])

    def operands(self, dtype, a_major, b_major, m=None, n=None, k=None):
        """a [m,k] and b [k,n], each stored K-major or MN-major."""
        m, n, k = m or self.M, n or self.N, k or self.K
        a = quarters(m, k, dtype=dtype) if a_major == "k" else quarters(k, m, dtype=dtype).t()
        b = quarters(n, k, dtype=dtype).t() if b_major == "k" else quarters(k, n, dtype=dtype)
        return a, b

    def test_every_layout_matches_matmul(self):
        for dtype in (torch.float16, torch.bfloat16):
            for a_major in ("k", "mn"):
                for b_major in ("k", "mn"):
                    with self.subTest(dtype=dtype, a_major=a_major, b_major=b_major):
                        a, b = self.operands(dtype, a_major, b_major)
                        out = ptxgen.gemm(a, b)
                        self.assertEqual(out.shape, (self.M, self.N))
                        self.assertEqual(out.dtype, dtype)
                        self.assertMatches(out, reference(a, b))

    def test_large_square_problems_match_matmul(self):
        # The heuristic's persistent, stream-K and 2-CTA configurations.
        for size in (4096, 8192):
            with self.subTest(size=size):
                a, b = self.operands(torch.float16, "k", "k", size, size, size)
                self.assertMatches(ptxgen.gemm(a, b), reference(a, b))

    def test_linear_with_every_bias_type_activation_and_output_type(self):
        x = quarters(self.M, self.K)
        w = quarters(self.N, self.K)
        for out_dtype in (torch.float16, torch.bfloat16, torch.float32):
            for bias_dtype in (torch.float16, torch.bfloat16, torch.float32):
                for activation in ACTIVATIONS:
                    with self.subTest(out=out_dtype, bias=bias_dtype, activation=activation):
                        bias = quarters(self.N, dtype=bias_dtype)
                        out = ptxgen.gemm(x, w.t(), bias=bias, activation=activation,
                                          out_dtype=str(out_dtype))
                        self.assertEqual(out.dtype, out_dtype)
                        expected = ACTIVATIONS[activation](
                            F.linear(x.double(), w.double(), bias.double()))
                        self.assertMatches(out, expected)

    def test_a_bias_along_m_is_one_value_per_row(self):
        a, b = self.operands(torch.bfloat16, "k", "mn")
        bias = quarters(self.M, dtype=torch.float32)
        out = ptxgen.gemm(a, b, bias=bias, bias_along="m", activation="relu")
        self.assertMatches(out, reference(a, b, bias=bias, bias_along="m", activation="relu"))

    def test_alpha_and_beta_with_c_and_c_as_out(self):
        a, b = self.operands(torch.float16, "mn", "k")
        c = quarters(self.M, self.N, dtype=torch.float32)
        expected = reference(a, b, alpha=0.5, beta=0.25, c=c)
        self.assertMatches(ptxgen.gemm(a, b, c=c, alpha=0.5, beta=0.25, out_dtype="f32"),
                           expected)
        in_place = c.clone()
        ptxgen.gemm(a, b, c=in_place, out=in_place, alpha=0.5, beta=0.25)
        self.assertMatches(in_place, expected)

    def test_three_dimensional_tensors_are_a_batch_like_bmm(self):
        batch = 3
        a = quarters(batch, self.M, self.K)
        b = quarters(batch, self.K, self.N)
        self.assertMatches(ptxgen.gemm(a, b), reference(a, b))
        shared = quarters(self.N, dtype=torch.float32)
        self.assertMatches(ptxgen.gemm(a, b, bias=shared), reference(a, b, bias=shared))
        each = quarters(batch, self.N, dtype=torch.float32)
        self.assertMatches(ptxgen.gemm(a, b, bias=each), reference(a, b, bias=each))
        weights_t = quarters(batch, self.N, self.K).transpose(1, 2)  # K-major B per batch
        self.assertMatches(ptxgen.gemm(a, weights_t), reference(a, weights_t))

    def test_slices_of_wider_tensors_keep_their_leading_dimensions(self):
        a = quarters(self.M, self.K + 64)[:, :self.K]
        b = quarters(self.K, self.N + 24)[:, :self.N]
        wide_out = torch.full((self.M, self.N + 8), float("nan"), device="cuda",
                              dtype=torch.float16)
        out = wide_out[:, :self.N]
        ptxgen.gemm(a, b, out=out)
        self.assertMatches(out, reference(a, b))
        self.assertTrue(torch.isnan(wide_out[:, self.N:]).all().item(),
                        "wrote past the slice")

    def test_runs_on_the_current_torch_stream(self):
        a, b = self.operands(torch.float16, "k", "k", 4096, 4096, 4096)
        expected = reference(a, b)
        streams = [torch.cuda.Stream(), torch.cuda.Stream()]
        outs = []
        for stream in streams:  # the same problem at once on two streams
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                outs.append([ptxgen.gemm(a, b) for _ in range(4)])
        for stream, results in zip(streams, outs):
            torch.cuda.current_stream().wait_stream(stream)
            for out in results:
                out.record_stream(torch.cuda.current_stream())
                self.assertMatches(out, expected)
        explicit = torch.empty(4096, 4096, device="cuda", dtype=torch.float16)
        ptxgen.gemm(a, b, out=explicit, stream=streams[0])
        streams[0].synchronize()
        self.assertMatches(explicit, expected)

    def test_dlpack_arrays_match_matmul_in_every_layout(self):
        for dtype in (torch.float16, torch.bfloat16):
            for a_major in ("k", "mn"):
                for b_major in ("k", "mn"):  # "mn" A and "k" B are transposed views
                    with self.subTest(dtype=dtype, a_major=a_major, b_major=b_major):
                        a, b = self.operands(dtype, a_major, b_major)
                        out = DLPackOnly(torch.empty(self.M, self.N, device="cuda",
                                                     dtype=dtype))
                        self.assertIs(ptxgen.gemm(DLPackOnly(a), DLPackOnly(b), out=out), out)
                        self.assertEqual(out.streams, [1])  # the legacy default stream
                        self.assertMatches(out.tensor, reference(a, b))

    def test_dlpack_arrays_mix_with_torch_tensors(self):
        x = quarters(self.M, self.K, dtype=torch.bfloat16)
        w = quarters(self.N, self.K, dtype=torch.bfloat16)
        bias = quarters(self.N, dtype=torch.float32)
        out = ptxgen.gemm(x, DLPackOnly(w.t()), bias=DLPackOnly(bias), activation="gelu",
                          out_dtype="f32")
        self.assertEqual(out.dtype, torch.float32)
        self.assertMatches(out, F.gelu(F.linear(x.double(), w.double(), bias.double())))

    def test_dlpack_arrays_are_exported_for_the_callers_stream(self):
        a, b = self.operands(torch.float16, "mn", "k", 4096, 4096, 4096)
        out = DLPackOnly(torch.empty(4096, 4096, device="cuda", dtype=torch.float16))
        stream = torch.cuda.Stream()  # waits for a and b, made on the current one
        ptxgen.gemm(DLPackOnly(a), DLPackOnly(b), out=out, stream=stream)
        self.assertEqual(out.streams, [stream.cuda_stream])
        stream.synchronize()
        self.assertMatches(out.tensor, reference(a, b))

    def test_refuses_what_the_device_path_checks(self):
        a, b = self.operands(torch.float16, "k", "mn")
        wide = quarters(self.M, self.K + 8)
        with self.assertRaises(ptxgen.Error) as misaligned:  # starts 2 bytes in
            ptxgen.gemm(wide[:, 1:self.K + 1], b)
        self.assertEqual(misaligned.exception.status, "PTXGEN_STATUS_INVALID_VALUE")
        self.assertIn("16-byte", str(misaligned.exception))
        with self.assertRaises(ptxgen.Error) as odd:
            ptxgen.gemm(quarters(self.M, 100), quarters(100, self.N))
        self.assertIn("multiple of 8", str(odd.exception))
        with self.assertRaises(ptxgen.Error) as on_cpu:
            ptxgen.gemm(a.cpu(), b)
        self.assertIn("not on a CUDA device", str(on_cpu.exception))
        with self.assertRaises(ptxgen.Error) as on_cpu:
            ptxgen.gemm(DLPackOnly(a.cpu()), DLPackOnly(b),
                        out=DLPackOnly(torch.empty(self.M, self.N, device="cuda")))
        self.assertIn("a is on kDLCPU (device type 1), not on a CUDA device",
                      str(on_cpu.exception))
        square = quarters(self.M, self.M)
        with self.assertRaises(ptxgen.Error) as out_is_a:  # D would overwrite A
            ptxgen.gemm(square, quarters(self.M, self.M), out=square)
        self.assertIn("D (at 0x", str(out_is_a.exception))
        self.assertIn("shares memory with A", str(out_is_a.exception))


@NEEDS_HOPPER
class Fp8AndTf32AgainstFloat64(unittest.TestCase):
    # Multiples of 16 (TMA rows of 16 bytes for fp8), not of the tiles.
    M, N, K = 264, 136, 528

    def setUp(self):
        torch.manual_seed(23)

    def test_scaled_fp8_matches_the_dequantized_reference(self):
        scale_a = torch.tensor([0.5], device="cuda")
        scale_b = torch.tensor([4.0], device="cuda")
        for b_dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            with self.subTest(b=b_dtype):
                x = uniform(self.M, self.K, dtype=torch.float8_e4m3fn)
                w = uniform(self.N, self.K, dtype=b_dtype)  # K-major b = w.t()
                out = ptxgen.gemm(x, w.t(), scale_a=scale_a, scale_b=scale_b)
                self.assertEqual(out.dtype, torch.bfloat16)  # fp8's default output
                expected = (x.float().double() * 0.5) @ (w.float().double() * 4.0).t()
                self.assertLess(relative_error(out, expected), 3e-3)

    def test_block_scaled_fp8_matches_the_dequantized_reference(self):
        # DeepGEMM's layout (ptxgen.spans counts it): A's scales [k_blocks, m],
        # B's [n_blocks, k_blocks], blocks of 128, the last ragged.
        x = uniform(self.M, self.K, dtype=torch.float8_e4m3fn)
        w = uniform(self.N, self.K, dtype=torch.float8_e4m3fn)
        k_blocks, n_blocks = -(-self.K // 128), -(-self.N // 128)
        spans = ptxgen.spans(m=self.M, n=self.N, k=self.K, dtype="e4m3", scaling="block")
        self.assertEqual((spans["scale_a"], spans["scale_b"]),
                         (k_blocks * self.M, n_blocks * k_blocks))
        scale_a = torch.rand(k_blocks, self.M, device="cuda") + 0.5
        scale_b = torch.rand(n_blocks, k_blocks, device="cuda") + 0.5
        out = ptxgen.gemm(x, w.t(), scaling="block", scale_a=scale_a, scale_b=scale_b)
        k_block = torch.arange(self.K, device="cuda") // 128
        n_block = torch.arange(self.N, device="cuda") // 128
        a = x.float().double() * scale_a.double()[k_block].t()
        b = w.float().double() * scale_b.double()[n_block][:, k_block]
        self.assertLess(relative_error(out, a @ b.t()), 3e-3)

    def test_tf32_matches_the_float32_reference(self):
        a = uniform(self.M, self.K)
        w = uniform(self.N, self.K)
        out = ptxgen.gemm(a, w.t(), dtype="tf32")
        self.assertEqual(out.dtype, torch.float32)
        expected = a.double() @ w.double().t()
        self.assertLess(relative_error(out, expected), 5e-3)

    def test_a_scaled_gemm_needs_both_scales(self):
        x = uniform(self.M, self.K, dtype=torch.float8_e4m3fn)
        w = uniform(self.N, self.K, dtype=torch.float8_e4m3fn)
        with self.assertRaises(ptxgen.Error) as one_scale:
            ptxgen.gemm(x, w.t(), scale_a=torch.tensor([1.0], device="cuda"))
        self.assertEqual(one_scale.exception.status, "PTXGEN_STATUS_INVALID_VALUE")
        self.assertIn("scale_b is a null pointer", str(one_scale.exception))


def small_integers(*shape, dtype):
    """Random int8 in [-8, 8] or uint8 in [0, 16]: sums of a few thousand,
    which an s8 out of alpha 1/8 both rounds and saturates."""
    low = 0 if dtype == torch.uint8 else -8
    return torch.randint(low, low + 17, shape, device="cuda", dtype=dtype)


def integer_product(a, b):
    """a @ b in int64 on the CPU: the exact sums (CUDA has no int64 matmul)."""
    return torch.matmul(a.cpu().long(), b.cpu().long())


@NEEDS_HOPPER
class IntegersAgainstInt64(unittest.TestCase):
    # Multiples of 16 (TMA rows of 16 bytes for 8-bit types), not of the tiles.
    M, N, K = 264, 136, 528

    def setUp(self):
        torch.manual_seed(29)

    def assertExact(self, out, expected):
        torch.testing.assert_close(out.cpu().long(), expected, rtol=0, atol=0)

    def test_s8_and_u8_sum_exactly_into_int32(self):
        for a_dtype, b_dtype in ((torch.int8, torch.int8), (torch.uint8, torch.int8),
                                 (torch.int8, torch.uint8), (torch.uint8, torch.uint8)):
            with self.subTest(a=a_dtype, b=b_dtype):
                x = small_integers(self.M, self.K, dtype=a_dtype)
                w = small_integers(self.N, self.K, dtype=b_dtype)  # K-major b = w.t()
                out = ptxgen.gemm(x, w.t())
                self.assertEqual(out.dtype, torch.int32)  # s8/u8's default output
                self.assertEqual(out.shape, (self.M, self.N))
                self.assertExact(out, integer_product(x, w.t()))

    def test_sums_beyond_f32s_24_bits_are_exact(self):
        x = torch.randint(-128, 128, (self.M, 4096), device="cuda", dtype=torch.int8)
        w = torch.randint(-128, 128, (self.N, 4096), device="cuda", dtype=torch.int8)
        x[0], w[0], w[0, 0] = 127, 127, 126
        expected = integer_product(x, w.t())
        # Odd and above 2^25, where f32 holds multiples of 4 only.
        self.assertEqual(expected[0, 0].item(), 127 * (127 * 4095 + 126))
        self.assertNotEqual(expected[0, 0].float().long().item(), expected[0, 0].item())
        self.assertExact(ptxgen.gemm(x, w.t()), expected)

    def test_batches_and_dlpack_arrays_sum_exactly(self):
        x = small_integers(3, self.M, self.K, dtype=torch.int8)
        w = small_integers(3, self.N, self.K, dtype=torch.int8)
        weights_t = w.transpose(1, 2)  # K-major B per batch
        self.assertExact(ptxgen.gemm(x, weights_t), integer_product(x, weights_t))
        out = DLPackOnly(torch.empty(self.M, self.N, device="cuda", dtype=torch.int32))
        ptxgen.gemm(DLPackOnly(x[0]), DLPackOnly(w[0].t()), out=out)
        self.assertExact(out.tensor, integer_product(x[0], w[0].t()))

    def test_an_int8_out_is_alpha_times_the_sums_rounded_to_even_and_saturated(self):
        x = small_integers(self.M, self.K, dtype=torch.int8)
        w = small_integers(self.N, self.K, dtype=torch.uint8)
        # A power of two: alpha times a sum is exact in f32, and a sum of
        # 4 mod 8 is a tie.
        out = ptxgen.gemm(x, w.t(), out_dtype="s8", alpha=0.125)
        self.assertEqual(out.dtype, torch.int8)
        sums = integer_product(x, w.t())
        self.assertTrue((sums % 8 == 4).any().item() and (sums.abs() > 8 * 128).any().item(),
                        "the reference has no ties or nothing to saturate")
        expected = torch.round(sums.double() / 8).clamp(-128, 127)  # ties to even
        self.assertExact(out, expected.long())

    def test_float_outputs_take_the_whole_epilogue(self):
        x = small_integers(self.M, self.K, dtype=torch.uint8)
        w = small_integers(self.N, self.K, dtype=torch.int8)
        b = w.t()
        bias = quarters(self.N, dtype=torch.float32)
        c = quarters(self.M, self.N, dtype=torch.float32)
        out = ptxgen.gemm(x, b, c=c, alpha=0.5, beta=0.25, bias=bias, activation="relu",
                          out_dtype="f32")
        self.assertEqual(out.dtype, torch.float32)
        torch.testing.assert_close(
            out.double(), reference(x, b, alpha=0.5, beta=0.25, c=c, bias=bias,
                                    activation="relu"), **TOLERANCES[torch.float32])
        out = ptxgen.gemm(x, b, bias=bias, activation="gelu", out_dtype=torch.bfloat16)
        self.assertEqual(out.dtype, torch.bfloat16)
        torch.testing.assert_close(out.double(), reference(x, b, bias=bias, activation="gelu"),
                                   **TOLERANCES[torch.bfloat16])

    def test_refuses_what_integers_do_not_take(self):
        x = small_integers(self.M, self.K, dtype=torch.int8)
        w = small_integers(self.N, self.K, dtype=torch.int8)
        one = torch.tensor([1.0], device="cuda")
        for rule, call in (
                ("MN-major operands need f16 or bf16 inputs",
                 lambda: ptxgen.gemm(x, w.t().contiguous())),
                ("per-tensor or block scales and fast accumulation are for fp8 inputs",
                 lambda: ptxgen.gemm(x, w.t(), scale_a=one, scale_b=one)),
                ("an s32 D is the exact sums", lambda: ptxgen.gemm(x, w.t(), activation="relu")),
                ("an s8 D takes no C",
                 lambda: ptxgen.gemm(x, w.t(), c=torch.zeros(self.M, self.N, device="cuda",
                                                             dtype=torch.int8),
                                     beta=1.0, out_dtype=torch.int8)),
                ("a.dtype=torch.int64 is not one of", lambda: ptxgen.gemm(x.long(), w.t()))):
            with self.subTest(rule=rule):
                with self.assertRaises(ptxgen.Error) as refused:
                    call()
                self.assertEqual(refused.exception.status, "PTXGEN_STATUS_INVALID_VALUE")
                self.assertIn(rule, str(refused.exception))


if __name__ == "__main__":
    unittest.main()
