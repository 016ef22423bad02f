"""Timing shared by the benchmarks that measure ptxgen beside PyTorch
(grouped_torch_bench.py, attention_torch_bench.py), in one process.

CUDA events around batches of back-to-back calls on the current stream,
each batch at least BATCH_SECONDS; every implementation warmed up for at
least WARMUP_SECONDS first; `batches` batches each, the implementations
alternating batch by batch (the order rotating), the median batch's time
per call. torch is imported when timing starts, so that a bench's --list
runs without it.
"""
import contextlib
import math
import statistics
import time

WARMUP_SECONDS = 0.1
BATCH_SECONDS = 1e-3


def median_per_call(calls, batches, contexts=None):
    """{name: median seconds per call} of the zero-argument callables
    `calls` ({name: call}), each batch inside a fresh `contexts[name]()`
    where given (a forced SDPA backend, say: it then costs nothing per
    call)."""
    import torch
    contexts = contexts or {}

    def context(name):
        return contexts.get(name, contextlib.nullcontext)()

    for name, call in calls.items():  # warm-up: at least WARMUP_SECONDS each
        with context(name):
            start = time.perf_counter()
            while time.perf_counter() - start < WARMUP_SECONDS:
                for _ in range(4):
                    call()
                torch.cuda.synchronize()
    repeats = {}
    for name, call in calls.items():  # calls per batch: at least BATCH_SECONDS
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with context(name):
            begin.record()
            for _ in range(5):
                call()
            end.record()
        end.synchronize()
        once = begin.elapsed_time(end) / 1e3 / 5
        repeats[name] = max(1, math.ceil(1.25 * BATCH_SECONDS / max(once, 1e-7)))
    names = list(calls)
    while True:
        events = {name: [] for name in names}
        for batch in range(batches):
            turn = batch % len(names)
            for name in names[turn:] + names[:turn]:
                call = calls[name]
                begin = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                with context(name):
                    begin.record()
                    for _ in range(repeats[name]):
                        call()
                    end.record()
                events[name].append((begin, end))
        torch.cuda.synchronize()
        seconds = {name: [b.elapsed_time(e) / 1e3 for b, e in pairs]
                   for name, pairs in events.items()}
        short = [name for name in names if min(seconds[name]) < BATCH_SECONDS]
        if not short:
            return {name: statistics.median(times) / repeats[name]
                    for name, times in seconds.items()}
        for name in short:  # a batch ran under BATCH_SECONDS: longer batches
            repeats[name] *= 2


def relative_error(out, expected):
    """||out - expected|| / ||expected||, in float64."""
    out, expected = out.double(), expected.double()
    return ((out - expected).norm() / expected.norm()).item()


def geometric_mean(values):
    """Of the positive values (None and 0 left out); NaN when none is."""
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")
