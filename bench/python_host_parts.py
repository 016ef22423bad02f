"""Where the host time of a warm ptxgen.gemm call goes, from PyTorch on a
Hopper GPU: the whole call beside F.linear and torch.mm, then its parts
(the run of the prepared GEMM, the C call alone with and without stream-K's
memset, the allocation of out, the current stream's query).

    PYTHONPATH=<package> python3 bench/python_host_parts.py

Each row: the median over 5 runs of the host time per call of 2000 calls
back to back (python_overhead.host_microseconds), bf16, x [16,256],
w [256,256] (the host-time problem of bench/python_overhead.py). The parts
reach into ptxgen's private modules: they measure this version's layout,
not an API.
"""
import ctypes

import torch
import torch.nn.functional as F

import ptxgen
from ptxgen import _gemm, _library
from python_overhead import host_microseconds  # bench/, this script's folder


def main():
    x = torch.randn(16, 256, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    wt = w.t()
    out = ptxgen.gemm(x, wt)
    print("config:", ptxgen.plan(m=16, n=256, k=256, dtype="bf16").config)
    entry = next(iter(_gemm._fast.values()))
    api, kernel = entry.api, entry.kernel
    stream = api.current_stream(0)
    addresses = [x.data_ptr(), wt.data_ptr(), None, out.data_ptr(), None, None, None, None,
                 None]
    operands = _library.GemmOperands(*addresses)
    library, handle = _library.loaded()
    size = kernel.workspace_bytes
    block, _ = api.workspace(max(size, 1), 0, stream)

    def c_call(run):
        return lambda: run(handle, kernel.pointer, ctypes.byref(operands), block.data_ptr(),
                           size, stream)

    rows = [
        ("ptxgen.gemm(x, w.t())", lambda: ptxgen.gemm(x, wt)),
        ("ptxgen.gemm(x, w.t(), out=out)", lambda: ptxgen.gemm(x, wt, out=out)),
        ("F.linear(x, w)", lambda: F.linear(x, w)),
        ("torch.mm(x, w.t())", lambda: torch.mm(x, wt)),
        ("the prepared GEMM's run", lambda: kernel.run(_library.GemmOperands(*addresses),
                                                       stream, api, 0)),
        ("C call, zeroed workspace", c_call(library.ptxgenGemmRunWithZeroedWorkspace)),
        ("C call, workspace zeroed per run", c_call(library.ptxgenGemmRunWithWorkspace)),
        ("out's allocation", lambda: api.empty((16, 256), (256, 1), torch.bfloat16, 0)),
        ("the current stream", lambda: api.current_stream(0)),
    ]
    for name, call in rows:
        call()
        print(f"{name:34s} {host_microseconds(call, 5):7.2f} us", flush=True)


if __name__ == "__main__":
    main()
