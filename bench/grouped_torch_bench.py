"""ptxgen.grouped_gemm against torch._grouped_mm and a loop of F.linear per
group, bf16, on a Hopper GPU: the grouped GEMMs of mixture-of-experts
layers, in one process on the same inputs.

    # on the CPU machine: libptxgen.so with the Abseil libraries it links
    bash tools/python_install.sh dist/python
    # on the GPU host, from the checkout's root (dist/python carried along):
    PYTHONPATH=python PTXGEN_LIBRARY=$PWD/dist/python/ptxgen/libptxgen.so \\
        python3 bench/grouped_torch_bench.py [--batches 11] [--only contiguous|masked]

PYTHONPATH=python imports this checkout's package; $PTXGEN_LIBRARY (an
absolute path) names the library it loads. `PYTHONPATH=dist/python` alone
runs the installed copy of both instead.

1. Contiguous groups (torch._grouped_mm's 2-D x 3-D form): x [total, k]
   holding every group's rows, experts' weights w [groups, n, k] (as
   F.linear's), b = w.transpose(1, 2) for both grouped calls, offs the
   int32 cumulative row ends on the device. For each shape (groups x rows
   per group, n, k), two routings of the same total: uniform, and skewed
   (group g's share 1/(g+1), normalized; Zipf). Timed: ptxgen.grouped_gemm(x,
   b, offs), torch._grouped_mm(x, b, offs), and F.linear(x[rows of g], w[g])
   for each nonempty group (counts known on the host, as such loops need).
   Checked first: each result against a float32 reference (TF32 off) by
   relative error by norm, at most 1e-2.
2. Masked decode (DeepGEMM's masked form): x [groups, max_m, k],
   masked_m[g] = expected rows for every group, weights [groups, n, k];
   ptxgen.grouped_gemm(x, b, masked_m=..., expected_m=...) reads every
   group's weights once, so its rate is the weights' bytes per second,
   set against a device-to-device copy's (dst.copy_(src), 1 GiB, read +
   write) and torch._grouped_mm's on the same rows laid out contiguously.

Timing: torch_timing.py's (--batches, at least 11, alternating batches of
back-to-back calls, at least 1 ms each; the median). Pipelined calls: a call costs the larger of
its host and device time. Prints Markdown tables: TFLOP/s, the ratio
ptxgen / torch._grouped_mm by rate (above 1: ptxgen faster), and the
geometric mean of the ratios.
"""
import argparse
import contextlib
import itertools
import math
import sys

from torch_timing import geometric_mean, median_per_call, relative_error

# (groups, rows per group, n, k): MoE expert GEMMs (Mixtral's 8 experts,
# up and down projections; DeepSeek-like 32 to 256 experts).
SHAPES = ((8, 1024, 14336, 4096), (8, 1024, 4096, 14336), (32, 512, 4096, 7168),
          (32, 512, 7168, 2048), (128, 32, 1536, 4096), (256, 128, 4096, 7168),
          (128, 256, 4096, 1536))
# Masked decode: groups, expected rows per group, each expert's n x k.
DECODE_GROUPS = (8, 32, 128)
DECODE_ROWS = (1, 16, 64)
DECODE_WEIGHT = (4096, 7168)
DECODE_ROOM = 256  # max_m: the rows each group has room for
MIN_BATCHES = 11
TOLERANCE = 1e-2  # relative error by norm, bf16
COPY_BYTES = 1 << 30


def uniform_rows(groups, total):
    """`total` rows spread evenly over `groups` (the remainder to the first)."""
    share, extra = divmod(total, groups)
    return [share + (g < extra) for g in range(groups)]


def zipf_rows(groups, total):
    """`total` rows with group g's share 1/(g+1), normalized; rounded down,
    the rows left given to the largest shares first."""
    weights = [1.0 / (g + 1) for g in range(groups)]
    scale = total / sum(weights)
    rows = [math.floor(w * scale) for w in weights]
    for g in range(total - sum(rows)):
        rows[g % groups] += 1
    return rows








def contiguous_section(args):
    import torch
    import torch.nn.functional as F

    import ptxgen

    print("## Contiguous groups, bf16: ptxgen.grouped_gemm vs torch._grouped_mm vs a loop of "
          "F.linear\n")
    print("| groups x rows | n | k | routing (largest, smallest group) | ptxgen TFLOP/s | "
          "torch._grouped_mm TFLOP/s | F.linear loop TFLOP/s | ptxgen / _grouped_mm | "
          "errors (ptxgen, _grouped_mm, loop) |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for groups, per_group, n, k in SHAPES:
        total = groups * per_group
        torch.manual_seed(groups * n + k)
        x = torch.randn(total, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16) / math.sqrt(k)
        b = w.transpose(1, 2)  # [groups, k, n], contiguous along k
        for routing, rows in (("uniform", uniform_rows(groups, total)),
                              ("zipf", zipf_rows(groups, total))):
            offs = torch.tensor(rows, device="cuda").cumsum(0).to(torch.int32)
            bounds = [(g, end - count, end) for g, (count, end) in
                      enumerate(zip(rows, itertools.accumulate(rows))) if count]

            def linear_loop():
                return [F.linear(x[start:end], w[g]) for g, start, end in bounds]

            calls = {"ptxgen": lambda: ptxgen.grouped_gemm(x, b, offs),
                     "torch": lambda: torch._grouped_mm(x, b, offs),
                     "loop": linear_loop}
            errors = _check_contiguous(torch, calls, x, w, bounds, total, n)
            seconds = median_per_call(calls, args.batches)
            flops = 2.0 * total * n * k
            rate = {name: flops / s / 1e12 for name, s in seconds.items()}
            ratio = rate["ptxgen"] / rate["torch"]
            ratios.append(ratio)
            print(f"| {groups} x {per_group} | {n} | {k} | {routing} ({max(rows)}, "
                  f"{min(rows)}) | {rate['ptxgen']:.1f} | {rate['torch']:.1f} | "
                  f"{rate['loop']:.1f} | {ratio:.2f} | "
                  + ", ".join(f"{errors[name]:.1e}" for name in ("ptxgen", "torch", "loop"))
                  + " |", flush=True)
    print(f"\nGeometric mean of ptxgen / torch._grouped_mm over {len(ratios)} rows: "
          f"{geometric_mean(ratios):.3f}\n", flush=True)
    return ratios


@contextlib.contextmanager
def _float32_matmuls(torch):
    """float32 matmuls in float32 inside (TF32 off), for the references."""
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


def _float32_products(torch, x, w):
    """x[g] @ w[g]^T for each group g in float32, one group at a time (the
    weights in float32 at once need too much memory)."""
    with _float32_matmuls(torch):
        return torch.stack([x[g].float() @ w[g].float().t() for g in range(len(w))])


def _check_contiguous(torch, calls, x, w, bounds, total, n):
    """Each call's result against a float32 reference, group by group;
    exits with a message when one is past TOLERANCE."""
    expected = torch.zeros(total, n, device="cuda", dtype=torch.float32)
    with _float32_matmuls(torch):
        for g, start, end in bounds:
            expected[start:end] = x[start:end].float() @ w[g].float().t()
    results = {"ptxgen": calls["ptxgen"](), "torch": calls["torch"](),
               "loop": torch.cat(calls["loop"]())}
    torch.cuda.synchronize()
    errors = {name: relative_error(out, expected) for name, out in results.items()}
    for name, error in errors.items():
        if not error <= TOLERANCE:
            sys.exit(f"grouped_torch_bench: {name}'s result is off: relative error {error:.3e} "
                     f"> {TOLERANCE}")
    return errors


def copy_bandwidth(batches):
    """A device-to-device copy's bytes read and written per second."""
    import torch
    src = torch.empty(COPY_BYTES, device="cuda", dtype=torch.uint8).random_()
    dst = torch.empty_like(src)
    seconds = median_per_call({"copy": lambda: dst.copy_(src)}, batches)["copy"]
    return 2 * COPY_BYTES / seconds


def masked_section(args):
    import torch

    import ptxgen

    n, k = DECODE_WEIGHT
    copy = copy_bandwidth(args.batches)
    print(f"## Masked decode, bf16, weights {n} x {k} per group, room for {DECODE_ROOM} "
          "rows each\n")
    print(f"Device-to-device copy (dst.copy_(src), 1 GiB, read + write): "
          f"{copy / 1e9:.0f} GB/s\n")
    print("| groups | rows per group | ptxgen us | ptxgen weight GB/s | of copy's | "
          "torch._grouped_mm (contiguous, same rows) us | its weight GB/s | "
          "ptxgen / _grouped_mm | error |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for groups in DECODE_GROUPS:
        torch.manual_seed(groups)
        w = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16) / math.sqrt(k)
        b = w.transpose(1, 2)
        x = torch.randn(groups, DECODE_ROOM, k, device="cuda", dtype=torch.bfloat16)
        weight_bytes = groups * n * k * w.element_size()
        for rows in DECODE_ROWS:
            masked_m = torch.full((groups,), rows, device="cuda", dtype=torch.int32)
            packed = x[:, :rows].reshape(groups * rows, k).contiguous()
            offs = torch.arange(1, groups + 1, device="cuda", dtype=torch.int32) * rows
            calls = {"ptxgen": lambda: ptxgen.grouped_gemm(x, b, masked_m=masked_m,
                                                           expected_m=rows),
                     "torch": lambda: torch._grouped_mm(packed, b, offs)}
            out = calls["ptxgen"]()
            expected = _float32_products(torch, x[:, :rows], w)
            error = relative_error(out[:, :rows], expected)
            torch_error = relative_error(calls["torch"]().view(groups, rows, n), expected)
            for name, value in (("ptxgen", error), ("torch", torch_error)):
                if not value <= TOLERANCE:
                    sys.exit(f"grouped_torch_bench: {name}'s masked result is off: relative "
                             f"error {value:.3e} > {TOLERANCE}")
            seconds = median_per_call(calls, args.batches)
            rate = {name: weight_bytes / s for name, s in seconds.items()}
            ratio = rate["ptxgen"] / rate["torch"]
            ratios.append(ratio)
            print(f"| {groups} | {rows} | {seconds['ptxgen'] * 1e6:.1f} | "
                  f"{rate['ptxgen'] / 1e9:.0f} | {rate['ptxgen'] / copy:.0%} | "
                  f"{seconds['torch'] * 1e6:.1f} | {rate['torch'] / 1e9:.0f} | {ratio:.2f} | "
                  f"{error:.1e} |", flush=True)
    print(f"\nGeometric mean of ptxgen / torch._grouped_mm over {len(ratios)} rows: "
          f"{geometric_mean(ratios):.3f}\n", flush=True)
    return ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=MIN_BATCHES,
                        help=f"timed batches per implementation (at least {MIN_BATCHES})")
    parser.add_argument("--only", choices=("contiguous", "masked"),
                        help="run one section")
    args = parser.parse_args()
    if args.batches < MIN_BATCHES:
        parser.error(f"--batches must be at least {MIN_BATCHES}")
    import torch

    import ptxgen
    if not hasattr(torch, "_grouped_mm"):
        sys.exit(f"grouped_torch_bench: torch {torch.__version__} has no _grouped_mm")
    properties = torch.cuda.get_device_properties(0)
    print(f"# grouped GEMMs: {properties.name}, torch {torch.__version__}, ptxgen "
          f"{ptxgen.version()} ({ptxgen.__path__[0]})\n", flush=True)
    if args.only != "masked":
        contiguous_section(args)
    if args.only != "contiguous":
        masked_section(args)


if __name__ == "__main__":
    main()
