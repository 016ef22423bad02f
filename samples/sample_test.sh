# Sourced by the samples' tests: fail, and the sample run as the machine is.
# Set binary and log before sourcing.

fail() { echo "FAIL: $1" >&2; cat "$log" >&2; exit 1; }

# Runs the sample as it finds the machine: without a GPU it must say so and
# exit 0 (then "PASS (no GPU here: $2)"); on a Hopper GPU it must print PASS
# and the line starting with $1, its measurement.
pass_as_the_machine_is() {
  local measurement="$1" skipped="$2" status
  "$binary" >"$log" 2>&1
  status=$?
  if grep -q "^no GPU: " "$log"; then
    [[ $status -eq 0 ]] || fail "exit status $status without a GPU"
    echo "PASS (no GPU here: $skipped)"
  else
    [[ $status -eq 0 ]] || fail "exit status $status on the GPU"
    grep -q "^PASS$" "$log" || fail "no PASS on the GPU"
    grep "^$measurement" "$log"
    echo PASS
  fi
}
