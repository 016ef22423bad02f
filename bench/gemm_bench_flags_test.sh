#!/bin/bash
# gemm_bench refuses bad flags by name, with exit status 2, and prints its
# usage for --help, before it looks for a GPU: so this runs on any machine.
# Flags it accepts get as far as loading the driver, pointed at a missing
# file so that no GPU is used even where there is one.
set -u

binary="$1"
output="$TEST_TMPDIR/output.txt"
failures=0

# expect_refusal "message fragment" flags...
expect_refusal() {
  local expected="$1"
  shift
  "$binary" "$@" >"$output" 2>&1
  local status=$?
  if [[ $status -ne 2 ]] || ! grep -qF -- "$expected" "$output"; then
    echo "FAIL: gemm_bench $* exited $status; expected 2 and '$expected':" >&2
    cat "$output" >&2
    failures=$((failures + 1))
  fi
}

# expect_accepted flags...: every shape valid, so the run reaches the driver.
expect_accepted() {
  local missing="$TEST_TMPDIR/no_libcuda.so"
  PTXGEN_LIBCUDA="$missing" "$binary" "$@" >"$output" 2>&1
  local status=$?
  if [[ $status -ne 1 ]] || ! grep -qF "no CUDA driver found: cannot load $missing" "$output"; then
    echo "FAIL: gemm_bench $* exited $status; expected 1 and no driver found:" >&2
    cat "$output" >&2
    failures=$((failures + 1))
  fi
}

expect_refusal "--mode must be one of" --mode=fastest
expect_refusal "--nvrtc-flags: compile: flag '-arch=sm_80' names the architecture" \
  --nvrtc-flags="-lineinfo -arch=sm_80"
expect_refusal "--mode=configs needs --configs" --mode=configs
expect_refusal "--configs applies only to --mode=configs and --grouped (not --mode=heuristic)" \
  --configs="v1 128x128x64"
expect_refusal "--shapes does not apply to --mode=ladder" --mode=ladder --shapes=1024x1024x1024
expect_refusal "--shapes: '12x34' is not MxNxK" --shapes=12x34
expect_refusal "--shapes: 'tiny' is not MxNxK" --shapes=tiny
# The small suite's m = 1 and n = 1 rows cannot be MN-major (16-byte rows).
expect_refusal "--shapes/--dtype: 1x4096x4096 f16: " --shapes=small --a-major=m
expect_refusal "element type must be f16, bf16, e4m3, e5m2, tf32, s8 or u8, not f32" --dtype=f32 --shapes=64x64x64
expect_refusal "k must be a multiple of 8" --shapes=64x64x12
expect_refusal "--repeats must be a positive integer" --repeats=0
expect_refusal "missing option 'g#|hilbert'" --mode=configs --configs="ws 128x128x64 s4 c1 w1 m1 tma persistent"
expect_refusal "unknown flag --fast" --fast
expect_refusal "--a-major takes k or m (a comma-separated list), not 'n'" --a-major=k,n
expect_refusal "--b-major takes k or n (a comma-separated list), not 'm'" --b-major=m
expect_refusal "--epilogue takes none, bias, bias_relu, bias_gelu, bias_gelu_tanh" --epilogue=gelu
expect_refusal "do not apply to --mode=ladder: it measures the plain problem" --mode=ladder --b-major=n
expect_refusal "do not apply to --mode=launch" --mode=launch --epilogue=none,bias
expect_refusal "--format must be markdown or csv, not 'json'" --format=json
# Scaling names are read by gen::ParseScaling, exactly: "NONE" is not none.
expect_refusal "--scaling: scaling 'NONE': expected none, tensor, block" --scaling=NONE
# A layout's own rule, named: MN-major A needs rows of m on 16-byte boundaries.
expect_refusal "--shapes/--dtype: 100x64x64 f16: " --shapes=100x64x64 --a-major=m

expect_accepted
expect_accepted --shapes=suite
expect_accepted --shapes=small
expect_accepted --shapes=small --dtype=bf16 --mode=compare --epilogue=none,bias_gelu
expect_accepted --shapes=small --mode=launch
expect_accepted --dtype=s8 --mode=pingpong
expect_accepted --nvrtc-flags="-Xptxas=-O2 -lineinfo"
expect_accepted --shapes=1x4096x4096,4096x1x4096 --format=csv

"$binary" --help >"$output" 2>&1
if [[ $? -ne 0 ]] || ! grep -q "^gemm_bench \[--mode=" "$output" ||
  ! grep -qF -- "--shapes=suite|small|MxNxK" "$output"; then
  echo "FAIL: gemm_bench --help did not print the usage:" >&2
  cat "$output" >&2
  failures=$((failures + 1))
fi

[[ $failures -eq 0 ]] || exit 1
echo "PASS"
