"""What the GPU tests share: torch and its functional module (None on the
CPU machines, whose image has no torch), NEEDS_HOPPER, which skips a test
class without PyTorch and a Hopper GPU, and their inputs and error
measure."""
import unittest

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = None


def _hopper():
    return (torch is not None and torch.cuda.is_available()
            and torch.cuda.get_device_capability() == (9, 0))


NEEDS_HOPPER = unittest.skipUnless(_hopper(), "needs PyTorch and a Hopper (sm_90) GPU")


def quarters(*shape, dtype=None):
    """Random multiples of 1/4 in [-1, 1], exact in f16 and bf16."""
    values = torch.randint(-4, 5, shape, device="cuda", dtype=torch.float32) / 4
    return values.to(dtype or torch.float16)


def uniform(*shape, dtype=None):
    """Uniform in [-1, 1), rounded to `dtype` (float32 by default)."""
    values = torch.rand(shape, device="cuda") * 2 - 1
    return values.to(dtype or torch.float32)


def relative_error(out, expected):
    """||out - expected|| / ||expected||, in float64."""
    return ((out.double() - expected).norm() / expected.norm()).item()
