#!/bin/bash
# The search for input-handling defects, as CI runs it:
#   1. the tests of the host code that reads outside input (tag asan: the
#      C API, the CLI, the problem rules, the kernel cache and its files,
#      the driver and launch checks, logs, JSON) under AddressSanitizer
#      (leak checking on) and UndefinedBehaviorSanitizer, any report fatal.
#      The others run once, in the default build: the generators and the
#      PTX emitters take only what those layers validated (and their
#      parsers are fuzzed below), the compile sweeps' time is NVRTC's and
#      ptxas's, which are not instrumented, and the GPU tests would only be
#      built to skip;
#   2. every libFuzzer target of fuzz/ for FUZZ_SECONDS (default 10) over a
#      copy of its seed corpus (fuzz/corpus/<target>/; the checkout is not
#      written), two at a time, printing each target's executions.
#      FUZZ_SECONDS=0 replays the seed corpora only.
# PTXGEN_SANITIZE_PARTS picks them: "suite", "fuzz" or "suite,fuzz" (the
# default).
# Prints "N passed, N failed" last: the suite's test cases plus one per fuzz
# target. Exit status 0 only when nothing failed.
#
# The sanitizer build uses clang-14 (.bazelrc: --config=asan, one build for
# the suite and the fuzzers) in an output base of its own, so that it
# neither rebuilds nor relinks the default build:
# PTXGEN_SANITIZE_OUTPUT_BASE, else one per checkout under Bazel's output
# root. Its Bazel server is shut down at the end, unless
# PTXGEN_SANITIZE_KEEP_SERVER=1 (tools/test.sh, whose next part uses it:
# a new server would load and analyze the workspace again).
set -uo pipefail
cd "$(dirname "$0")/.."

checkout_hash=$(printf '%s' "$PWD" | md5sum | cut -c1-32)
output_base=${PTXGEN_SANITIZE_OUTPUT_BASE:-${HOME}/.cache/bazel/_bazel_$(id -un)/ptxgen-sanitize-${checkout_hash}}
sanitized_bazel() { bazel --output_base="$output_base" "$@"; }
if [ "${1:-}" = "--shutdown" ]; then  # for .ci/run: only stop the server
  [ -d "$output_base" ] && sanitized_bazel shutdown >/dev/null 2>&1
  exit 0
fi

bash tools/setup.sh || exit 1
fuzz_seconds=${FUZZ_SECONDS:-10}
work=$(mktemp -d "${TMPDIR:-/tmp}/ptxgen-sanitize.XXXXXX")
[ "${PTXGEN_SANITIZE_KEEP_SERVER:-0}" = 1 ] || trap 'sanitized_bazel shutdown >/dev/null 2>&1' EXIT
# //..., written out: the default build's convenience links (bazel-bin,
# bazel-<checkout>, ...) point into another output base, which this server
# would read as packages of the workspace (a negative pattern still loads them).
patterns=()
if [ -f BUILD.bazel ] || [ -f BUILD ]; then patterns+=("//:all"); fi
for dir in */; do
  dir=${dir%/}
  [ -L "$dir" ] && continue
  grep -qxF "$dir" .bazelignore 2>/dev/null && continue
  if [ -n "$(find "$dir" \( -name BUILD -o -name BUILD.bazel \) -print -quit)" ]; then
    patterns+=("//$dir/...")
  fi
done

# Bazel's progress, Linux-sandbox chatter and compiler noise, left out.
show_results() {
  grep -vE "^(\[|INFO: From|Loading|Analyzing)" |
    grep -E "PASSED|FAILED|SKIPPED|TIMEOUT|NO STATUS|ERROR|Executed"
}

passed=0
failed=0

parts=${PTXGEN_SANITIZE_PARTS:-suite,fuzz}

# ---- 1. The test suite under ASan + UBSan ----
asan_suite() {
  echo "== sanitize: bazel test --config=asan, the tests tagged asan (clang-14, ASan + UBSan)"
  asan_start=$SECONDS
  # --build_tests_only: the tests and what they run, not every binary.
  sanitized_bazel test --config=asan --keep_going --build_tests_only \
    --test_tag_filters=asan -- "${patterns[@]}" 2>&1 | tee "$work/asan.log" | show_results
  asan_status=${PIPESTATUS[0]}
  testlogs=$(sanitized_bazel info --config=asan bazel-testlogs 2>/dev/null)
  summary=$(python3 tools/test_summary.py "$testlogs" "$work/asan.log")
  echo "$summary" | sed 's/^/asan: /'
  read -r suite_passed suite_failed < <(echo "$summary" | tail -n 1 |
    sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p')
  suite_passed=${suite_passed:-0}
  suite_failed=${suite_failed:-1}
  # A failure Bazel reports but no test case shows (the build broke).
  if [ "$asan_status" -ne 0 ] && [ "$suite_failed" -eq 0 ]; then suite_failed=1; fi
  passed=$((passed + suite_passed))
  failed=$((failed + suite_failed))
  echo "asan: suite took $((SECONDS - asan_start)) s (bazel exit status $asan_status)"
}

# ---- 2. The fuzz targets ----
# Runs one target over a copy of its corpus; writes its verdict, and what
# to show of a failure, to $work/<name>/result.
run_fuzzer() {
  local name=$1 dir="$work/$1" status runs seconds
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp fuzz/corpus/"$name"/* "$dir/corpus/" 2>/dev/null
  if [ ! -x "$bin/fuzz/$name" ]; then
    echo "fuzz: $name FAILED TO BUILD" > "$dir/result"
    return
  fi
  # -timeout: seconds per input; -rss_limit_mb: memory; timeout(1) bounds
  # a target whose own limits fail.
  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    timeout -k 10 $((fuzz_seconds + 120)) "$bin/fuzz/$name" \
    "${duration[@]}" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/" "$dir/corpus" \
    > "$dir/log" 2>&1
  status=$?
  runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$dir/log" | tail -n 1)
  seconds=$(sed -nE 's/^Done [0-9]+ runs in ([0-9]+) second.*/\1/p' "$dir/log" | tail -n 1)
  if [ "$status" -eq 0 ]; then
    echo "fuzz: $name passed: ${runs:-?} executions in ${seconds:-?} s" > "$dir/result"
    return
  fi
  {
    echo "fuzz: $name FAILED (exit status $status) after ${runs:-?} executions"
    grep -m 8 -E "ERROR: |runtime error|fuzz invariant failed|^    #[0-9] .* (/proc/self/cwd/|lib/|fuzz/|tools/)" \
      "$dir/log" | sed 's/^/    /'
    for crash in "$dir"/artifacts/*; do
      [ -f "$crash" ] || continue
      echo "    input $crash: $(python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(len(d), "bytes", repr(d[:400]))' "$crash")"
    done
    echo "    log: $dir/log"
  } > "$dir/result"
}

fuzz_targets() {
  echo "== sanitize: fuzz targets, ${fuzz_seconds} s each, two at a time (clang-14, libFuzzer + ASan + UBSan)"
  fuzz_start=$SECONDS
  # FUZZ_SECONDS=0: only run the seed corpus (-max_total_time=0 never stops).
  duration=(-max_total_time="$fuzz_seconds")
  [ "$fuzz_seconds" -gt 0 ] 2>/dev/null || duration=(-runs=0)

  targets=$(sanitized_bazel query 'attr(tags, "\bfuzzer\b", kind(cc_binary, //fuzz:*))' 2>/dev/null | sort)
  if [ -z "$targets" ]; then
    echo "fuzz: no fuzz targets found under //fuzz"
    failed=$((failed + 1))
  else
    # The suite's build: the fuzzers only link beside it.
    # shellcheck disable=SC2086  # one word per target
    sanitized_bazel build --config=asan --keep_going $targets > "$work/fuzz_build.log" 2>&1 ||
      grep -E "ERROR|error:" "$work/fuzz_build.log" | head -20
    bin=$(sanitized_bazel info --config=asan bazel-bin 2>/dev/null)
    names=()
    for target in $targets; do
      names+=("${target#//fuzz:}")
      run_fuzzer "${names[-1]}" &
      # Two at a time: one a core.
      [ "$(jobs -rp | wc -l)" -lt 2 ] || wait -n
    done
    wait
    for name in "${names[@]}"; do
      cat "$work/$name/result"
      if grep -q "^fuzz: $name passed" "$work/$name/result"; then
        passed=$((passed + 1))
      else
        failed=$((failed + 1))
      fi
    done
  fi
  echo "fuzz: took $((SECONDS - fuzz_start)) s"
}

[[ ",$parts," != *,suite,* ]] || asan_suite
[[ ",$parts," != *,fuzz,* ]] || fuzz_targets

if [ "$failed" -eq 0 ]; then rm -rf "$work"; else echo "sanitize: logs and failing inputs in $work"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
