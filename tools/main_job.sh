#!/bin/bash
# The main job: ptxgen generating Hopper (sm_90a) instructions, a GEMM and
# an attention kernel, validating them, compiling them with NVRTC and
# showing what came out.
# Needs no GPU; where one is present it also runs the GEMM beside cuBLAS.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build //tools:ptxgen 2>&1 | tail -n 1
ptxgen=bazel-bin/tools/ptxgen
step() { printf '\n== %s\n' "$*"; }

step "one wgmma instruction as an inline-asm statement (ptxgen wgmma --shape=m64n64k16)"
$ptxgen wgmma --shape=m64n64k16 --a=f16 --d=f32
step "an illegal request is refused with the rule it breaks"
$ptxgen wgmma --shape=m64n120k32 --a=s8 --d=s32 || true
step "the shared-memory layout and matrix descriptor of a 128x64 f16 tile"
$ptxgen descriptor --type=f16 --rows=128 --k=64 --major=k --swizzle=128B
step "a 4096 x 4096 x 4096 f16 GEMM: configuration, generated, compiled, resources"
$ptxgen gemm --m=4096 --n=4096 --k=4096 --emit=resources
step "its PTX, as NVRTC produced it (first 30 lines of the kernel)"
ptx=$($ptxgen gemm --m=4096 --n=4096 --k=4096 --emit=ptx 2>/dev/null)
sed -n '/.visible .entry/,$p' <<<"$ptx" | sed -n '1,30p'
step "compile metadata as JSON (a second request is a cache hit)"
json=$($ptxgen gemm --m=4096 --n=4096 --k=4096 --emit=json 2>/dev/null)
echo "${json:0:400}..."
step "attention forward, GQA 4:1, causal, head dim 128: configuration, compiled, resources"
$ptxgen attention --batch=2 --heads=32 --kv-heads=8 --seq=4096 --head-dim=128 --causal --emit=resources
step "running it beside cuBLAS (needs a GPU)"
$ptxgen gemm --m=4096 --n=4096 --k=4096 --run ||
  echo "(no GPU here: generation and compilation above need none)"
