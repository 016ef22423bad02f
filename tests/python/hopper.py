"""What the GPU tests share: torch and its functional module (None on the
CPU machines, whose image has no torch), and NEEDS_HOPPER, which skips a
test class without PyTorch and a Hopper GPU."""
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
