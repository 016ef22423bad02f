#!/bin/bash
# bench_charts.py turns gemm_bench's Markdown and CSV tables into one SVG
# each, with a pair of bars and the ratio per row, and refuses what is not
# a gemm_bench table by name.
set -u
script="$1"
work="$TEST_TMPDIR"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

cat >"$work/run.md" <<'TABLE'
device: NVIDIA H200, 132 SMs, L2 60 MiB; mode heuristic
device-to-device copy: 4012 GB/s (each byte of a 1 GiB copy read and written)
ridge: 267 FLOP/byte = dense 16-bit peak 1070 TFLOP/s (132 SMs x 1.980 GHz x 4096 FLOP/clock) / copy bandwidth; rows under it are memory-bound

| step / shape | dtype | layout | epilogue | config | ptxgen ms | TFLOP/s | peer | peer ms | TFLOP/s | ratio | rel. error | bound | floor ms | of floor |
|---|---|---|---|---|---:|---:|---|---:|---:|---:|---:|---|---:|---:|
| 8192x8192x8192 heuristic | f16 | kk | none | ws 128x256x64 s3 | 1.6077 | 684 | cuBLAS | 1.6914 | 650 | 1.052 | 1.1e-05 | compute | 0.1003 | 0.06 |
| 4096x4096x4096 heuristic | bf16 | mn | bias_gelu | ws 128x256x64 s3 | 0.2289 | 600 | cuBLASLt | 0.2112 | 651 | 0.923 | 1.1e-05 | compute | 0.0251 | 0.11 |
| 16x8192x8192 heuristic | f16 | kk | none | ws 64x16x64 s8 swap | 0.0401 | 54 | cuBLAS | 0.0398 | 54 | 0.993 | 0.0e+00 | memory | 0.0336 | 0.84 |

geometric mean ratio (peer time / ptxgen time) over 3 rows: 0.988; lowest 0.923
memory-bound rows at 90% of their floor or better: 0 of 1
TABLE
cat >"$work/run_csv.csv" <<'TABLE'
"step / shape","dtype","layout","epilogue","config","ptxgen ms","TFLOP/s","peer","peer ms","TFLOP/s","ratio","rel. error","bound","floor ms","of floor"
"8192x8192x8192 heuristic","f16","kk","none","ws 128x256x64 s3","1.6077","684","cuBLAS","1.6914","650","1.052","1.1e-05","compute","0.1003","0.06"
TABLE
# A table saved before the memory-floor columns.
cat >"$work/old.md" <<'TABLE'
device: NVIDIA H200, 132 SMs, L2 60 MiB; mode heuristic

| step / shape | dtype | layout | epilogue | config | ptxgen ms | TFLOP/s | peer | peer ms | TFLOP/s | ratio | rel. error |
|---|---|---|---|---|---:|---:|---|---:|---:|---:|---:|
| 8192x8192x8192 heuristic | f16 | kk | none | ws 128x256x64 s3 | 1.6077 | 684 | cuBLAS | 1.6914 | 650 | 1.052 | 1.1e-05 |
| 1024x1024x8192 heuristic | f16 | kk | none | ws 64x128x64 s8 | 0.0346 | 496 | cuBLAS | 0.0298 | 576 | 0.862 | 0.0e+00 |

geometric mean ratio (cuBLAS time / ptxgen time) over 2 rows: 1.007; lowest 0.862
TABLE
printf '| a | b |\n|---|---|\n| 1 | 2 |\n' >"$work/other.md"

python3 "$script" --out "$work/charts" "$work/run.md" "$work/run_csv.csv" "$work/old.md" \
  >"$work/log" 2>&1 || fail "charts of Markdown and CSV tables, new and old: $(cat "$work/log")"
for name in run run_csv old; do
  svg="$work/charts/$name.svg"
  [[ -s "$svg" ]] || { fail "$svg is missing"; continue; }
  python3 -c "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" "$svg" ||
    fail "$svg is not well-formed XML"
done
grep -q "4096x4096x4096 bf16 mn bias_gelu" "$work/charts/run.svg" 2>/dev/null ||
  fail "the Markdown chart does not label its row by shape, dtype, layout and epilogue"
grep -q ">1.052<" "$work/charts/run.svg" 2>/dev/null || fail "no ratio above the bars"
[[ $(grep -c "<rect" "$work/charts/run.svg") -eq 8 ]] || fail "expected 2 legend squares and 2 bars per row"
[[ $(grep -c "<rect" "$work/charts/old.svg") -eq 6 ]] || fail "the old table lost rows"
grep -q "(1 rows)" "$work/log" || fail "the CSV table with the floor columns lost its row: $(cat "$work/log")"
if python3 "$script" --out "$work/charts" "$work/run.md" "$work/charts/run.md" >"$work/log" 2>&1; then
  fail "two inputs charted into one file"
fi
grep -q "would both be charted as run.svg" "$work/log" || fail "clash without its rule: $(cat "$work/log")"
if python3 "$script" --out "$work/charts" "$work/other.md" >"$work/log" 2>&1; then
  fail "a table that is not gemm_bench's was charted"
fi
grep -q "not a gemm_bench table: no column" "$work/log" || fail "refusal without its rule: $(cat "$work/log")"

[[ $failures -eq 0 ]] || exit 1
echo "PASS"
