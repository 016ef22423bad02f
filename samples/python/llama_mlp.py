"""A Llama MLP block at decode batch sizes through ptxgen, beside the same
block in PyTorch, on a Hopper GPU (H100, H200): the gate and up projections
as one GEMM of their fused [2 * 14336, 4096] weight, SiLU of the gate times
the up, then the down projection, in bf16 (Llama 3 8B's sizes), for 1, 16
and 64 tokens. Each block runs eagerly, compiled by
torch.compile(fullgraph=True) (ptxgen.gemm is then the operator
torch.ops.ptxgen.gemm: no graph break) and captured in a CUDA graph as a
server captures it (a warm-up run, then torch.cuda.graph on its own capture
stream, replayed on new tokens copied into its input). Every ptxgen result
is checked against PyTorch's (relative error by norm); times are CUDA
events' medians.

    bash tools/python_install.sh && python3 samples/python/llama_mlp.py

Without PyTorch or a Hopper GPU it prints why it skipped and exits 0.
"""
import statistics
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # no PyTorch: nothing to run
    torch = None

import ptxgen

HIDDEN, INTERMEDIATE = 4096, 14336
TOKENS = (1, 16, 64)
AGREEMENT = 1e-2  # relative error by norm: bf16 blocks whose sums differ in order
REPEATS = 50


def ptxgen_mlp(x, gate_up, down):
    """down(silu(gate(x)) * up(x)) with ptxgen's GEMMs; the weights are
    torch.nn.functional.linear's ([out, in]), so w.t() is a K-major b."""
    gate, up = ptxgen.gemm(x, gate_up.t()).split(INTERMEDIATE, dim=-1)
    return ptxgen.gemm(F.silu(gate) * up, down.t())


def torch_mlp(x, gate_up, down):
    gate, up = F.linear(x, gate_up).split(INTERMEDIATE, dim=-1)
    return F.linear(F.silu(gate) * up, down)


def relative_error(out, expected):
    return ((out.float() - expected.float()).norm() / expected.float().norm()).item()


def median_ms(run):
    """The median of REPEATS runs' CUDA-event times, after 3 unmeasured."""
    for _ in range(3):
        run()
    events = []
    for _ in range(REPEATS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        events.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in events)


def captured(block, x, weights):
    """`block` captured in a CUDA graph as servers capture it: one warm-up
    run on the current stream (ptxgen generates and loads its kernels
    there), then torch.cuda.graph, which captures on a stream of its own.
    Returns (graph, its input, its output)."""
    block(x, *weights)
    torch.cuda.synchronize()
    static_x = x.clone()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = block(static_x, *weights)
    return graph, static_x, static_out


def main():
    if torch is None or not torch.cuda.is_available() or \
            torch.cuda.get_device_capability() != (9, 0):
        print("skipped: needs PyTorch and a Hopper (sm_90) GPU")
        return 0
    torch.manual_seed(0)
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    # Scaled so that each projection's outputs stay near unit size.
    weights = (torch.randn(2 * INTERMEDIATE, HIDDEN, **bf16) / HIDDEN**0.5,
               torch.randn(HIDDEN, INTERMEDIATE, **bf16) / INTERMEDIATE**0.5)
    compiled = {"torch": torch.compile(torch_mlp, fullgraph=True),
                "ptxgen": torch.compile(ptxgen_mlp, fullgraph=True)}
    blocks = {"torch": torch_mlp, "ptxgen": ptxgen_mlp}
    print(f"Llama MLP block (hidden {HIDDEN}, intermediate {INTERMEDIATE}, bf16) on "
          f"{torch.cuda.get_device_name()}; median of {REPEATS} runs")
    print(f"{'tokens':>6}  {'mode':14} {'torch ms':>9} {'ptxgen ms':>10} {'ptxgen/torch':>12}  "
          f"ptxgen's relative error")
    worst = 0.0
    with torch.inference_mode():
        for tokens in TOKENS:
            x = torch.randn(tokens, HIDDEN, **bf16)
            expected = torch_mlp(x, *weights)
            rows = []
            # Eager, then compiled: each checked on x, timed on x.
            for mode, functions in (("eager", blocks), ("torch.compile", compiled)):
                error = relative_error(functions["ptxgen"](x, *weights), expected)
                times = {name: median_ms(lambda f=function: f(x, *weights))
                         for name, function in functions.items()}
                rows.append((mode, times, error))
            # Captured: checked on new tokens copied into the graph's input.
            graphs = {name: captured(block, x, weights) for name, block in blocks.items()}
            fresh = torch.randn(tokens, HIDDEN, **bf16)
            graph, static_x, static_out = graphs["ptxgen"]
            static_x.copy_(fresh)
            graph.replay()
            error = relative_error(static_out, torch_mlp(fresh, *weights))
            times = {name: median_ms(graph.replay) for name, (graph, _, _) in graphs.items()}
            rows.append(("CUDA graph", times, error))
            for mode, times, error in rows:
                worst = max(worst, error)
                print(f"{tokens:>6}  {mode:14} {times['torch']:9.3f} {times['ptxgen']:10.3f} "
                      f"{times['ptxgen'] / times['torch']:12.2f}  {error:.1e}")
    if worst >= AGREEMENT:
        print(f"ptxgen disagrees with torch: relative error {worst:.1e} >= {AGREEMENT:.0e}")
        return 1
    print(f"every ptxgen block agrees with torch (relative error by norm < {AGREEMENT:.0e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
