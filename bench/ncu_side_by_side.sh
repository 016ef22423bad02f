#!/bin/bash
# Nsight Compute of ptxgen's GEMM beside cuBLASLt's on one problem, in one
# process each (gemm_bench --mode=heuristic, one repeat): the full section
# set of the third launch of each kernel (the first two warm up), with the
# clocks left alone (--clock-control none, as the device machines ask).
# Runs on a GPU host from the GPU bundle (tools/gpu_bundle.sh copies it):
#   ncu_side_by_side.sh OUT_DIR [gemm_bench flags...]
#   ncu_side_by_side.sh /tmp/ncu --dtype=e4m3 --scaling=block --shapes=8192x8192x8192
# Writes OUT_DIR/ptxgen.txt and OUT_DIR/peer.txt (ncu's details page) and
# prints the rows that compare them. The peer's kernels are cuBLASLt's
# (nvjet, xmma or cutlass names); with --scaling=block the peer is
# cuBLASLt's per-tensor GEMM, as gemm_bench measures it.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: ncu_side_by_side.sh OUT_DIR [gemm_bench flags...]" >&2; exit 2; }
out=$1
shift
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
profile() {  # profile NAME KERNEL_REGEX GEMM_BENCH_FLAGS...
  local name=$1 kernels=$2
  shift 2
  ncu --clock-control none --set full --launch-skip 2 --launch-count 1 \
    --kernel-name "regex:$kernels" "$here/gemm_bench" --mode=heuristic --repeats=1 "$@" \
    > "$out/$name.txt" 2>&1
}
status=0
profile ptxgen '^ptxgen_gemm_' "$@" || status=1
profile peer 'nvjet|xmma|cutlass' "$@" || status=1
for side in ptxgen peer; do
  echo "== $side"
  grep -E '^  [a-z_0-9]+ \(|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Registers Per Thread|Achieved Occupancy|Issue Slots Busy|No Eligible' \
    "$out/$side.txt" | head -n 14
done
exit $status
