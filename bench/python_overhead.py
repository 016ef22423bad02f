"""ptxgen.gemm against torch's F.linear from Python on a Hopper GPU: the
host time a call costs, and the time per call of decode-sized GEMMs run
back to back, one at a time, and replayed from a CUDA graph.

    bash tools/python_install.sh dist/python      # the package, on any machine
    PYTHONPATH=dist/python python3 bench/python_overhead.py [--repeats 5]

1. Host time: ptxgen.gemm(x, w.t()) and F.linear(x, w), bf16, x [16,256],
   w [256,256], warm; each time.perf_counter over 2000 calls back to back
   (the device keeps up, so this is the host's time), the median of
   --repeats runs. The issue's target: ptxgen at most 1.25 times torch's.
2. Decode shapes, bf16: m in (1, 16, 64) against weights n x k in
   (4096, 4096), (14336, 4096), (4096, 14336), (28672, 4096), each call
   y = ptxgen.gemm(x, w.t()) or F.linear(x, w):
   - pipelined: 200 calls with no synchronization, CUDA events around the
     loop: per call, the larger of host and device time;
   - per call: events around each call, the median of 200: a call's
     latency from an idle device;
   - graph: 20 calls captured by torch.cuda.graph on a fresh stream (the
     GEMMs were warmed up on the default stream, so the capture prepares
     nothing; its stream-K GEMMs share one workspace, zeroed once in the
     graph), replayed 20 times between events: per call, device time.
   Printed as microseconds and the ratio torch/ptxgen (above 1: ptxgen is
   faster). Results are checked against F.linear first.
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import ptxgen

DECODE_M = (1, 16, 64)
WEIGHTS = ((4096, 4096), (14336, 4096), (4096, 14336), (28672, 4096))
HOST_CALLS = 2000
PIPELINED_CALLS = 200
PER_CALL_SAMPLES = 200
GRAPH_CALLS, GRAPH_REPLAYS = 20, 20


def host_microseconds(call, repeats):
    """The median over `repeats` of the host time per call of HOST_CALLS calls."""
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(HOST_CALLS):
            call()
        times.append((time.perf_counter() - start) / HOST_CALLS * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def pipelined_microseconds(call):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(PIPELINED_CALLS):
        call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / PIPELINED_CALLS


def per_call_microseconds(call):
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(PER_CALL_SAMPLES)]
    torch.cuda.synchronize()
    for start, end in events:
        start.record()
        call()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) * 1e3 for start, end in events)


def graph_microseconds(call):
    """GRAPH_CALLS calls captured on a fresh stream, replayed GRAPH_REPLAYS
    times; the outputs stay alive with the graph."""
    graph, fresh = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.graph(graph, stream=fresh):
        outputs = [call() for _ in range(GRAPH_CALLS)]
    graph.replay()  # the first replay uploads the graph
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(GRAPH_REPLAYS):
        graph.replay()
    end.record()
    end.synchronize()
    del outputs
    return start.elapsed_time(end) * 1e3 / (GRAPH_REPLAYS * GRAPH_CALLS)


def calls(m, n, k):
    """(ptxgen's call, torch's call) of y = x w^T, warmed up and checked."""
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5

    def ours():
        return ptxgen.gemm(x, w.t())

    def theirs():
        return F.linear(x, w)

    torch.testing.assert_close(ours(), theirs(), rtol=2e-2, atol=2e-2)
    for _ in range(10):
        ours(), theirs()
    torch.cuda.synchronize()
    return ours, theirs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"ptxgen {ptxgen.version()}")

    ours, theirs = calls(16, 256, 256)
    host_ours, host_theirs = (host_microseconds(ours, repeats),
                              host_microseconds(theirs, repeats))
    print(f"\nhost time per call, 16x256x256 bf16, {HOST_CALLS} calls, median of {repeats}:")
    print(f"  ptxgen.gemm(x, w.t())  {host_ours:7.2f} us")
    print(f"  F.linear(x, w)         {host_theirs:7.2f} us")
    print(f"  ptxgen / torch         {host_ours / host_theirs:7.2f}  (target <= 1.25)")

    print("\ndecode GEMMs, bf16, microseconds per call (torch, ptxgen, torch/ptxgen):")
    header = f"{'m':>4} {'n':>6} {'k':>6} | " + " | ".join(
        f"{name:^23}" for name in ("pipelined", "per call", "CUDA graph"))
    print(header)
    print("-" * len(header))
    for n, k in WEIGHTS:
        for m in DECODE_M:
            ours, theirs = calls(m, n, k)
            cells = []
            for measure in (pipelined_microseconds, per_call_microseconds,
                            graph_microseconds):
                torch_time, ptxgen_time = measure(theirs), measure(ours)
                cells.append(f"{torch_time:6.1f} {ptxgen_time:6.1f} "
                             f"{torch_time / ptxgen_time:5.2f}x")
            print(f"{m:>4} {n:>6} {k:>6} | " + " | ".join(f"{cell:^23}" for cell in cells))


if __name__ == "__main__":
    main()
