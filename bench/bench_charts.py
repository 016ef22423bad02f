#!/usr/bin/env python3
"""Bar charts (SVG) of gemm_bench tables: ptxgen's TFLOP/s beside its peer's.

    python3 bench/bench_charts.py --out bench/charts bench/data/*.md

Each input is one gemm_bench run: its stdout in Markdown (the default) or
CSV (--format=csv). Each becomes <out>/<input name>.svg: one group of two
bars per table row (ptxgen, then the peer), labelled with the row's shape,
dtype, layout and epilogue, and the ratio to the peer above the pair.
Standard library only, so it runs on any machine with Python 3.
"""

import argparse
import csv
import html
import io
import os
import sys

COLUMNS = ("step / shape", "dtype", "layout", "epilogue", "ptxgen ms",
           "TFLOP/s", "peer", "peer ms", "ratio")


def parse_table(text):
    """The rows of gemm_bench's table as dicts of its column names.

    Duplicate column names (TFLOP/s appears twice) get the peer's second
    one as "peer TFLOP/s". Lines that are not table rows are skipped. Only
    COLUMNS are required: the later ones (bound, floor ms and of floor since
    the memory floor) are kept when present, so older saved tables parse.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if any(line.startswith("|") for line in lines):
        rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
                for line in lines if line.startswith("|")]
        rows = [row for row in rows if not all(set(c) <= set("-:") for c in row)]
    else:
        rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if not rows:
        raise ValueError("no table found")
    header = rows[0]
    names = []
    for name in header:
        names.append("peer TFLOP/s" if name == "TFLOP/s" and name in names else name)
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise ValueError("not a gemm_bench table: no column " + ", ".join(missing))
    return [dict(zip(names, row)) for row in rows[1:] if len(row) == len(names)]


def label(row):
    shape = row["step / shape"].split(" ")[0]
    parts = [shape, row["dtype"]]
    if row["layout"] != "kk":
        parts.append(row["layout"])
    if row["epilogue"] != "none":
        parts.append(row["epilogue"])
    return " ".join(parts)


def svg_chart(rows, title):
    """One grouped bar chart as SVG text."""
    bar, gap, left, top, height = 18, 22, 60, 50, 260
    width = left + len(rows) * (2 * bar + gap) + 20
    peak = max(max(float(r["TFLOP/s"]), float(r["peer TFLOP/s"])) for r in rows)
    scale = height / (peak * 1.1)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{top + height + 150}" font-family="sans-serif" font-size="11">',
        f'<text x="{left}" y="20" font-size="14">{html.escape(title)}</text>',
        f'<rect x="{left}" y="28" width="10" height="10" fill="#3b6fb6"/>'
        f'<text x="{left + 14}" y="37">ptxgen</text>',
        f'<rect x="{left + 70}" y="28" width="10" height="10" fill="#b0b0b0"/>'
        f'<text x="{left + 84}" y="37">peer (cuBLAS / cuBLASLt)</text>',
    ]
    base = top + height
    for tick in range(0, int(peak * 1.1) + 1, 100):
        y = base - tick * scale
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" '
                   'stroke="#e4e4e4"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick}</text>')
    out.append(f'<text x="14" y="{top + height / 2}" transform="rotate(-90 14 '
               f'{top + height / 2})" text-anchor="middle">TFLOP/s</text>')
    for i, row in enumerate(rows):
        x = left + 10 + i * (2 * bar + gap)
        for j, (key, color) in enumerate((("TFLOP/s", "#3b6fb6"),
                                          ("peer TFLOP/s", "#b0b0b0"))):
            value = float(row[key])
            out.append(f'<rect x="{x + j * bar}" y="{base - value * scale:.1f}" '
                       f'width="{bar - 2}" height="{value * scale:.1f}" fill="{color}"/>')
        top_value = max(float(row["TFLOP/s"]), float(row["peer TFLOP/s"]))
        out.append(f'<text x="{x + bar}" y="{base - top_value * scale - 4:.1f}" '
                   f'text-anchor="middle">{html.escape(row["ratio"])}</text>')
        out.append(f'<text x="{x + bar}" y="{base + 12}" text-anchor="end" '
                   f'transform="rotate(-45 {x + bar} {base + 12})">'
                   f'{html.escape(label(row))}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the SVG files")
    parser.add_argument("inputs", nargs="+", help="gemm_bench outputs")
    args = parser.parse_args(argv)
    names = [os.path.splitext(os.path.basename(p))[0] for p in args.inputs]
    for name in set(names):
        if names.count(name) > 1:
            sys.exit(f"bench_charts: two inputs would both be charted as {name}.svg")
    os.makedirs(args.out, exist_ok=True)
    for path in args.inputs:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            rows = parse_table(text)
        except ValueError as error:
            sys.exit(f"bench_charts: {path}: {error}")
        if not rows:
            sys.exit(f"bench_charts: {path}: the table has no rows")
        name = os.path.splitext(os.path.basename(path))[0]
        target = os.path.join(args.out, name + ".svg")
        with open(target, "w", encoding="utf-8") as f:
            f.write(svg_chart(rows, name))
        print(f"bench_charts: {target} ({len(rows)} rows)")


if __name__ == "__main__":
    main(sys.argv[1:])
