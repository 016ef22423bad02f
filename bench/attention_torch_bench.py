"""ptxgen.attention against PyTorch's scaled_dot_product_attention backends
(FlashAttention, cuDNN, memory-efficient) on a Hopper GPU: attention
forward in one process on the same inputs, beside ptxgen's dense GEMM.

    # on the CPU machine: libptxgen.so with the Abseil libraries it links
    bash tools/python_install.sh dist/python
    # on the GPU host, from the checkout's root (dist/python carried along):
    PYTHONPATH=python PTXGEN_LIBRARY=$PWD/dist/python/ptxgen/libptxgen.so \\
        python3 bench/attention_torch_bench.py [--quick] [--rows=SUBSTRING] \\
        [--dtype=bf16|f16] [--layout=bshd|bhsd] [--json=PATH]
    python3 bench/attention_torch_bench.py --list     # the rows; no torch needed

PYTHONPATH=python imports this checkout's package; $PTXGEN_LIBRARY (an
absolute path) names the library it loads. `PYTHONPATH=dist/python` alone
runs the installed copy of both instead.

Rows (the issue's suite, #37):
- sweep: batch x seq with batch * seq = 16384 tokens, seq 512..16384, heads
  2048 / head_dim (hidden 2048, FlashAttention's papers' sweep), head dims
  64, 128 and 256, causal and not;
- gqa: 32 query heads sharing 8 (4:1) or 4 (8:1) K/V heads, d128, causal
  and not;
- orientation: the issue's single shapes, and one chunked-prefill row with
  seq_q < seq_k (the causal mask aligned to the bottom-right corner);
- varlen: ragged sequences (seeded lengths up to the row's longest) stored
  one after another, their cumulative offsets on the device.
Fixed-length rows are stored as --layout says ([batch, seq, heads, dim] or
[batch, heads, seq, dim]); SDPA gets the same memory as [batch, heads, seq,
dim] views, GQA through enable_gqa (where a backend refuses it, K and V
with their heads repeated: marked *), seq_q != seq_k causal through
causal_lower_right (torch.nn.attention.bias).

Peers: each SDPA backend forced by torch.nn.attention.sdpa_kernel; one
that cannot take a row is 'n/a' (its reason in the JSON). Variable
lengths: torch's varlen API (torch.nn.attention.varlen.varlen_attn) where
this torch has it, and each SDPA backend on the batch padded to its longest
sequence, costing the padded work (their rows are not checked: padding
keys enter their softmax).

FLOPs: 4 * batch * heads * seq_q * seq_k * head_dim, halved for causal
with seq_q == seq_k; with seq_q != seq_k the causal mask's visible pairs
exactly; variable lengths the sum over the sequences. Every peer's TFLOP/s
is that useful work per second (a padded peer's included).

Checked: ptxgen's output against the fastest peer's (variable lengths:
against the varlen API's, else SDPA run sequence by sequence), relative
error by norm, flagged past 2e-2. Timing: torch_timing.py's (--batches,
at least 11, alternating batches of back-to-back calls, at least 1 ms
each, a forced SDPA backend's inside its sdpa_kernel context; the median).
A row that fails prints its error and the run goes on.

Prints a Markdown table: TFLOP/s of each implementation, ptxgen / fastest
peer and ptxgen / FlashAttention by rate (above 1: ptxgen faster), ptxgen's
share of its dense GEMM's rate (8192^3, same dtype), the error; then the
geometric means. --json writes the same (and each row's reasons and
timings) as data, rewritten after every row.
"""
import argparse
import contextlib
import json
import math
import random
import sys
import warnings
import zlib
from dataclasses import asdict, dataclass, field

from torch_timing import geometric_mean, median_per_call, relative_error

MIN_BATCHES = 11
TOLERANCE = 2e-2  # relative error by norm, 16-bit outputs of two kernels
TOKENS = 16384  # batch * seq of the sweep
HIDDEN = 2048  # heads * head_dim of the sweep
GEMM_SIZE = 8192
BACKENDS = ("flash", "cudnn", "efficient")  # SDPBackend members, in columns' order
IMPLEMENTATIONS = ("ptxgen",) + BACKENDS + ("varlen",)


@dataclass
class Row:
    """One attention problem of the suite. `lengths`: variable lengths,
    each sequence's (query and key lengths alike); else None."""
    suite: str
    batch: int
    heads: int
    kv_heads: int
    seq_q: int
    seq_k: int
    head_dim: int
    causal: bool
    lengths: list = None
    quick: bool = False
    name: str = field(default="", init=False)

    def __post_init__(self):
        heads = f"h{self.heads}" + (f"/{self.kv_heads}" if self.kv_heads != self.heads else "")
        if self.lengths is not None:
            seq = f"smax{self.seq_q}"
        else:
            seq = f"s{self.seq_q}" + (f" k{self.seq_k}" if self.seq_k != self.seq_q else "")
        self.name = (f"{self.suite}: b{self.batch} {heads} {seq} d{self.head_dim}"
                     + (" causal" if self.causal else ""))

    def flops(self):
        """The useful work: 4 * heads * head_dim per visible (query, key)
        pair, summed over the sequences."""
        if self.lengths is not None:
            pairs = sum(visible_pairs(n, n, self.causal) for n in self.lengths)
        else:
            pairs = self.batch * visible_pairs(self.seq_q, self.seq_k, self.causal)
        return 4.0 * self.heads * self.head_dim * pairs


def visible_pairs(seq_q, seq_k, causal):
    """The (query, key) pairs one sequence's softmax sees: all, half of them
    for causal with seq_q == seq_k (the usual count), or with seq_q != seq_k
    exactly those of the mask aligned to the bottom-right corner (query i
    sees keys 0..i + seq_k - seq_q)."""
    if not causal:
        return seq_q * seq_k
    if seq_q == seq_k:
        return seq_q * seq_k / 2
    offset = seq_k - seq_q
    return sum(min(seq_k, max(0, i + offset + 1)) for i in range(seq_q))


def ragged_lengths(batch, longest, seed):
    """`batch` lengths, the first `longest`, the rest uniform in
    [longest / 8, longest] (seeded: every run times the same rows)."""
    draw = random.Random(seed)
    return [longest] + [draw.randint(max(1, longest // 8), longest) for _ in range(batch - 1)]


def suite_rows():
    """Every row, in the order they run."""
    rows = []
    for causal in (False, True):
        for head_dim in (64, 128, 256):
            for seq in (512, 1024, 2048, 4096, 8192, 16384):
                heads = HIDDEN // head_dim
                rows.append(Row("sweep", TOKENS // seq, heads, heads, seq, seq, head_dim, causal))
    for kv_heads in (8, 4):
        for seq in (2048, 8192):
            for causal in (False, True):
                rows.append(Row("gqa", TOKENS // seq, 32, kv_heads, seq, seq, 128, causal))
    rows += [
        Row("orientation", 2, 32, 32, 4096, 4096, 128, False, quick=True),
        Row("orientation", 2, 32, 32, 4096, 4096, 128, True, quick=True),
        Row("orientation", 1, 32, 8, 8192, 8192, 128, True, quick=True),
        Row("orientation", 4, 16, 16, 2048, 2048, 64, False),
        Row("orientation", 1, 16, 16, 8192, 8192, 256, False),
        Row("orientation", 8, 32, 8, 1024, 1024, 128, True),
        Row("orientation", 2, 16, 16, 1024, 4096, 128, True),  # chunked prefill
    ]
    for batch, heads, kv_heads, longest, head_dim, causal, quick in (
            (8, 16, 16, 4096, 128, False, False),
            (8, 16, 16, 4096, 128, True, True),
            (16, 32, 8, 2048, 128, True, False),
            (32, 16, 16, 1024, 64, False, False)):
        rows.append(Row("varlen", batch, heads, kv_heads, longest, longest, head_dim, causal,
                        lengths=ragged_lengths(batch, longest, seed=batch * longest + head_dim),
                        quick=quick))
    return rows


def selected_rows(args):
    rows = [row for row in suite_rows() if row.quick or not args.quick]
    if args.rows:
        wanted = [part for part in args.rows.split(",") if part]
        rows = [row for row in rows if any(part in row.name for part in wanted)]
    return rows


# ---- on the GPU ----







def reason(error):
    """An exception's first line, short enough for a table's note."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:200] if text else ''}"


def probe(torch, context, call):
    """The first call's output (warnings of refused backends hushed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with context():
            out = call()
    torch.cuda.synchronize()
    return out


def varlen_api(torch):
    """torch.nn.attention.varlen.varlen_attn, or None where this torch has
    none."""
    import importlib
    try:
        module = importlib.import_module("torch.nn.attention.varlen")
    except ImportError:
        return None
    return getattr(module, "varlen_attn", None)


def varlen_keywords(function, causal, gqa):
    """varlen_attn's keywords for the mask and GQA in this torch's spelling
    (2.9: is_causal; later: window_size, (-1, 0) causal; enable_gqa where
    it exists), and whether K and V must have their heads repeated."""
    import inspect
    parameters = inspect.signature(function).parameters
    keywords = {}
    if "is_causal" in parameters:
        keywords["is_causal"] = causal
    elif causal:
        keywords["window_size"] = (-1, 0)
    expand = False
    if gqa:
        if "enable_gqa" in parameters:
            keywords["enable_gqa"] = True
        else:
            expand = True
    return keywords, expand


class Inputs:
    """A row's tensors: q, k, v for ptxgen, SDPA's [batch, heads, seq, dim]
    views of them (variable lengths: of the padded batch), and the
    varlen offsets."""

    def __init__(self, torch, row, dtype, layout):
        self.row = row
        self.layout = layout
        torch.manual_seed(zlib.crc32(row.name.encode()))  # the same inputs every run
        d, h, g = row.head_dim, row.heads, row.kv_heads

        def randn(*shape):
            return torch.randn(*shape, device="cuda", dtype=dtype)

        if row.lengths is not None:
            total = sum(row.lengths)
            self.q, self.k, self.v = randn(total, h, d), randn(total, g, d), randn(total, g, d)
            offsets = [0]
            for n in row.lengths:
                offsets.append(offsets[-1] + n)
            self.offsets = offsets
            self.cu = torch.tensor(offsets, device="cuda", dtype=torch.int32)
            longest = max(row.lengths)
            padded = []
            for packed, heads in ((self.q, h), (self.k, g), (self.v, g)):
                out = torch.zeros(row.batch, longest, heads, d, device="cuda", dtype=dtype)
                for b, n in enumerate(row.lengths):
                    out[b, :n] = packed[offsets[b]:offsets[b] + n]
                padded.append(out.transpose(1, 2))
            self.sdpa = padded
        elif layout == "bshd":
            self.q = randn(row.batch, row.seq_q, h, d)
            self.k, self.v = randn(row.batch, row.seq_k, g, d), randn(row.batch, row.seq_k, g, d)
            self.sdpa = [t.transpose(1, 2) for t in (self.q, self.k, self.v)]
        else:
            self.q = randn(row.batch, h, row.seq_q, d)
            self.k, self.v = randn(row.batch, g, row.seq_k, d), randn(row.batch, g, row.seq_k, d)
            self.sdpa = [self.q, self.k, self.v]

    def expanded_sdpa(self):
        """SDPA's K and V with each head repeated for the query heads it
        serves."""
        ratio = self.row.heads // self.row.kv_heads
        return [t.repeat_interleave(ratio, dim=1) for t in self.sdpa[1:]]

    def ptxgen_call(self, ptxgen):
        row = self.row
        if row.lengths is not None:
            longest = max(row.lengths)
            return lambda: ptxgen.attention(
                self.q, self.k, self.v, causal=row.causal, cu_seqlens_q=self.cu,
                cu_seqlens_k=self.cu, max_seqlen_q=longest, max_seqlen_k=longest)
        return lambda: ptxgen.attention(self.q, self.k, self.v, causal=row.causal,
                                        layout=self.layout)

    def as_sdpa(self, out):
        """ptxgen's output in SDPA's [batch, heads, seq, dim] view (variable
        lengths: as it is, [total, heads, dim])."""
        if self.row.lengths is None and self.layout == "bshd":
            return out.transpose(1, 2)
        return out

    def sequence_by_sequence(self, torch):
        """The reference of variable lengths without torch's varlen API:
        SDPA (its own choice of backend) on each sequence, [total, heads,
        dim]."""
        import torch.nn.functional as F
        row, outs = self.row, []
        for b, n in enumerate(row.lengths):
            start, end = self.offsets[b], self.offsets[b] + n
            q, k, v = (t[start:end].transpose(0, 1).unsqueeze(0) for t in (self.q, self.k, self.v))
            o = F.scaled_dot_product_attention(q, k, v, is_causal=row.causal,
                                               enable_gqa=row.heads != row.kv_heads)
            outs.append(o.squeeze(0).transpose(0, 1))
        return torch.cat(outs)


def sdpa_call(torch, inputs, expanded):
    """SDPA on the row's views: the mask as SDPA spells it, GQA native or
    (`expanded`) through repeated K and V."""
    import torch.nn.functional as F
    row = inputs.row
    q, k, v = inputs.sdpa
    if expanded:
        k, v = inputs.expanded_sdpa()
    keywords = {}
    if row.heads != row.kv_heads and not expanded:
        keywords["enable_gqa"] = True
    if row.causal and row.lengths is None and row.seq_q != row.seq_k:
        from torch.nn.attention.bias import causal_lower_right
        keywords["attn_mask"] = causal_lower_right(row.seq_q, row.seq_k)
    elif row.causal:
        keywords["is_causal"] = True
    return lambda: F.scaled_dot_product_attention(q, k, v, **keywords)


def peers(torch, inputs):
    """{name: (context, call, output, note)} of the peers that take the
    row, and {name: reason} of those that do not."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    members = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
               "efficient": SDPBackend.EFFICIENT_ATTENTION}
    row, taken, refused = inputs.row, {}, {}
    for name in BACKENDS:
        def context(member=members[name]):
            return sdpa_kernel([member])
        attempts = [False] + ([True] if row.heads != row.kv_heads else [])
        for expanded in attempts:
            call = sdpa_call(torch, inputs, expanded)
            try:
                out = probe(torch, context, call)
            except Exception as error:  # noqa: BLE001 (a backend refusing the row)
                if expanded:
                    refused[name] += "; with K and V repeated too"
                else:
                    refused[name] = reason(error)
                continue
            refused.pop(name, None)
            taken[name] = (context, call, out, "padded" if row.lengths is not None
                           else "expanded K/V" if expanded else "")
            break
    if row.lengths is None:
        refused["varlen"] = "fixed lengths"
        return taken, refused
    function = varlen_api(torch)
    if function is None:
        refused["varlen"] = f"torch {torch.__version__} has no torch.nn.attention.varlen"
        return taken, refused
    keywords, expand = varlen_keywords(function, row.causal, row.heads != row.kv_heads)
    k, v = inputs.k, inputs.v
    if expand:
        ratio = row.heads // row.kv_heads
        k, v = (t.repeat_interleave(ratio, dim=1) for t in (k, v))
    longest = max(row.lengths)

    def call():
        return function(inputs.q, k, v, inputs.cu, inputs.cu, longest, longest, **keywords)
    try:
        out = probe(torch, contextlib.nullcontext, call)
        taken["varlen"] = (contextlib.nullcontext, call, out, "expanded K/V" if expand else "")
    except Exception as error:  # noqa: BLE001
        refused["varlen"] = reason(error)
    return taken, refused


def run_row(torch, ptxgen, row, args, dtype, gemm_rate):
    """The row's record: each implementation's time or reason, the
    ratios, the error."""
    record = {"name": row.name, **{k: v for k, v in asdict(row).items() if k != "name"},
              "layout": "packed" if row.lengths else args.layout, "flops": row.flops(),
              "results": {}}
    inputs = Inputs(torch, row, dtype, args.layout)
    calls, outputs = {}, {}
    ptxgen_call = inputs.ptxgen_call(ptxgen)
    try:
        outputs["ptxgen"] = probe(torch, contextlib.nullcontext, ptxgen_call)
        calls["ptxgen"] = (contextlib.nullcontext, ptxgen_call)
    except Exception as error:  # noqa: BLE001 (ptxgen refusing the row: the peers still run)
        record["results"]["ptxgen"] = {"na": reason(error)}
    taken, refused = peers(torch, inputs)
    for name, why in refused.items():
        record["results"][name] = {"na": why}
    for name, (context, call, out, note) in taken.items():
        calls[name] = (context, call)
        outputs[name] = out
        record["results"][name] = {"note": note}
    seconds = (median_per_call({name: call for name, (_, call) in calls.items()},
                               args.batches,
                               {name: context for name, (context, _) in calls.items()})
               if calls else {})
    for name, s in seconds.items():
        record["results"].setdefault(name, {}).update(
            {"seconds": s, "tflops": row.flops() / s / 1e12})
    rate = {name: row.flops() / s / 1e12 for name, s in seconds.items()}
    peer_rates = {name: r for name, r in rate.items() if name != "ptxgen"}
    fastest = max(peer_rates, key=peer_rates.get) if peer_rates else None
    record["fastest_peer"] = fastest
    if "ptxgen" in rate and fastest:
        record["ratio_fastest"] = rate["ptxgen"] / peer_rates[fastest]
    if "ptxgen" in rate and "flash" in rate:
        record["ratio_flash"] = rate["ptxgen"] / rate["flash"]
    if "ptxgen" in rate and gemm_rate:
        record["of_gemm"] = rate["ptxgen"] / gemm_rate
    if "ptxgen" in outputs:
        if row.lengths is None and fastest:
            reference, against = outputs[fastest], fastest
        elif row.lengths is not None and "varlen" in outputs:
            reference, against = outputs["varlen"], "varlen"
        elif row.lengths is not None:
            reference, against = inputs.sequence_by_sequence(torch), "sdpa per sequence"
        else:
            reference, against = None, None
        if reference is not None:
            record["error"] = relative_error(inputs.as_sdpa(outputs["ptxgen"]), reference)
            record["error_vs"] = against
    return record


def cell(record, name):
    result = record["results"].get(name, {})
    if "tflops" in result:
        mark = "*" if result.get("note") == "expanded K/V" else ""
        return f"{result['tflops']:.1f}{mark}"
    return "n/a" if name != "varlen" or record["lengths"] else "-"


def ratio_cell(record, key):
    return f"{record[key]:.2f}" if key in record else "n/a"


def table_line(record):
    if "failed" in record:
        return f"| {record['name']} | failed: {record['failed']} |"
    error = record.get("error")
    checked = "n/a" if error is None else (
        f"{error:.1e} vs {record['error_vs']}" + (" FAIL" if not error <= TOLERANCE else ""))
    return ("| " + " | ".join([record["name"]] + [cell(record, n) for n in IMPLEMENTATIONS]
                              + [record.get("fastest_peer") or "n/a",
                                 ratio_cell(record, "ratio_fastest"),
                                 ratio_cell(record, "ratio_flash"),
                                 f"{record['of_gemm']:.0%}" if "of_gemm" in record else "n/a",
                                 checked]) + " |")


def gemm_rate(torch, ptxgen, dtype, batches):
    """ptxgen.gemm's TFLOP/s on GEMM_SIZE^3 (a [n, k] weight read K-major,
    as F.linear's)."""
    n = GEMM_SIZE
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    w = torch.randn(n, n, device="cuda", dtype=dtype) / math.sqrt(n)
    b = w.t()
    seconds = median_per_call({"gemm": lambda: ptxgen.gemm(a, b)},
                              batches)["gemm"]
    return 2.0 * n ** 3 / seconds / 1e12


def write_json(path, data):
    if path:
        with open(path, "w") as out:
            json.dump(data, out, indent=1)
            out.write("\n")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few rows (the quick ones)")
    parser.add_argument("--rows", default="",
                        help="only the rows whose name contains one of these comma-separated "
                             "substrings, e.g. 'varlen' or 'd256,gqa'")
    parser.add_argument("--dtype", choices=("bf16", "f16"), default="bf16")
    parser.add_argument("--layout", choices=("bshd", "bhsd"), default="bshd",
                        help="how fixed-length rows store q, k, v and the output")
    parser.add_argument("--batches", type=int, default=MIN_BATCHES,
                        help=f"timed batches per implementation (at least {MIN_BATCHES})")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--no-gemm", action="store_true",
                        help="skip the dense GEMM's reference rate")
    parser.add_argument("--list", action="store_true",
                        help="print the selected rows and their GFLOP, run nothing")
    args = parser.parse_args(argv)
    if args.batches < MIN_BATCHES:
        parser.error(f"--batches must be at least {MIN_BATCHES}")
    return args


def main(argv=None):
    args = parse_args(argv)
    rows = selected_rows(args)
    if not rows:
        sys.exit(f"attention_torch_bench: no row matches --rows={args.rows}")
    if args.list:
        for row in rows:
            lengths = f"  lengths {row.lengths}" if row.lengths else ""
            print(f"{row.name:48} {row.flops() / 1e9:10.1f} GFLOP{lengths}")
        return
    import torch

    import ptxgen
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    properties = torch.cuda.get_device_properties(0)
    has_varlen = varlen_api(torch) is not None
    print(f"# attention forward, {args.dtype}, {args.layout}: {properties.name}, torch "
          f"{torch.__version__} (varlen API: {'yes' if has_varlen else 'no'}), ptxgen "
          f"{ptxgen.version()} ({ptxgen.__path__[0]})\n", flush=True)
    data = {"device": properties.name, "torch": torch.__version__, "ptxgen": ptxgen.version(),
            "dtype": args.dtype, "layout": args.layout, "batches": args.batches, "rows": []}
    rate = None
    if not args.no_gemm:
        try:
            rate = gemm_rate(torch, ptxgen, dtype, args.batches)
            print(f"ptxgen.gemm {GEMM_SIZE}^3 {args.dtype}: {rate:.1f} TFLOP/s\n", flush=True)
        except Exception as error:  # noqa: BLE001
            print(f"ptxgen.gemm {GEMM_SIZE}^3 failed: {reason(error)}\n", flush=True)
        data["gemm"] = {"size": GEMM_SIZE, "tflops": rate}
    print("TFLOP/s of useful work (* K and V heads repeated for a backend without GQA); "
          "varlen rows' SDPA columns run the padded batch.\n")
    print("| row | " + " | ".join(IMPLEMENTATIONS) + " | fastest peer | ptxgen / fastest | "
          "ptxgen / flash | of GEMM | error |")
    print("|---" * (len(IMPLEMENTATIONS) + 6) + "|", flush=True)
    for row in rows:
        try:
            record = run_row(torch, ptxgen, row, args, dtype, rate)
        except Exception as error:  # noqa: BLE001 (a failing row: say why, go on)
            record = {"name": row.name, **{k: v for k, v in asdict(row).items() if k != "name"},
                      "failed": reason(error)}
        data["rows"].append(record)
        print(table_line(record), flush=True)
        write_json(args.json, data)
        torch.cuda.empty_cache()
    summary = {}
    for key, label in (("ratio_fastest", "ptxgen / fastest peer"),
                       ("ratio_flash", "ptxgen / flash")):
        values = [r[key] for r in data["rows"] if key in r]
        mean = geometric_mean(values)
        summary[key] = mean if values else None
        print(f"\nGeometric mean of {label} over {len(values)} rows: {mean:.3f}", end="")
    failures = [r["name"] for r in data["rows"]
                if "failed" in r or not r.get("error", 0) <= TOLERANCE]
    print(f"\nRows failed or off by more than {TOLERANCE}: {len(failures)}"
          + (f" ({', '.join(failures)})" if failures else ""), flush=True)
    data["summary"] = {**summary, "failures": failures}
    write_json(args.json, data)


if __name__ == "__main__":
    main()
