#!/bin/bash
# attention_torch_bench.py's rows, FLOP counts and flags, without torch or a
# GPU: --list prints the selected rows and runs nothing, so this runs on any
# machine, and keeps the suite readable where torch is not installed.
set -u
script="$1"
output="$TEST_TMPDIR/output.txt"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect STATUS "fragment" flags...: the run exits STATUS and prints the
# fragment (stdout and stderr together).
expect() {
  local status="$1" expected="$2"
  shift 2
  python3 "$script" "$@" >"$output" 2>&1
  local got=$?
  if [[ $got -ne $status ]] || ! grep -qF -- "$expected" "$output"; then
    fail "attention_torch_bench.py $* exited $got; expected $status and '$expected':"
    cat "$output" >&2
  fi
}

expect 0 "sweep: b32 h32 s512 d64 " --list
expect 0 "gqa: b2 h32/4 s8192 d128 causal " --list
# The bottom-right causal mask's visible pairs, counted exactly: 16 heads x
# 128 dims x 4 x 2 x (3073 + ... + 4096) = 60.1 GFLOP.
expect 0 "orientation: b2 h16 s1024 k4096 d128 causal            60.1 GFLOP" --list
expect 0 "varlen: b8 h16 smax4096 d128 causal" --quick --list
expect 0 "orientation: b1 h16 s8192 d256 " --rows=d256 --list
expect 1 "no row matches --rows=d512" --rows=d512 --list
expect 2 "--batches must be at least 11" --batches=3 --list
expect 2 "invalid choice: 'e4m3'" --dtype=e4m3 --list

# --quick: the issue's orientation rows and one varlen row, nothing else.
python3 "$script" --quick --list >"$output" 2>&1
[[ $(wc -l <"$output") -eq 4 ]] || fail "--quick --list printed $(wc -l <"$output") rows, not 4"
! grep -q "^sweep" "$output" || fail "--quick selected a sweep row"

if [[ $failures -ne 0 ]]; then
  echo "$failures failed" >&2
  exit 1
fi
echo "attention_torch_bench_test: all passed"
