#!/bin/bash
# Builds and runs tests/bazel_client, a workspace that depends on this
# checkout as the README's "Use it from your project" says (local_repository
# + load("@ptxgen//:deps.bzl") + ptxgen_dependencies()), with downloads
# disabled: its plan_client plans a GEMM without a GPU. First checks that a
# build older than C++17 stops with //bazel:cxx17's message.
# Its Bazel server has an output base of its own (PTXGEN_CLIENT_OUTPUT_BASE,
# else one per checkout under Bazel's output root) and is shut down at the
# end; no convenience links are left in the checkout.
# Prints "bazel_client: passed" or "bazel_client: failed: <why>" last; exit
# status 0 only when it passed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
checkout_hash=$(printf '%s' "$PWD" | md5sum | cut -c1-32)
output_base=${PTXGEN_CLIENT_OUTPUT_BASE:-${HOME}/.cache/bazel/_bazel_$(id -un)/ptxgen-client-${checkout_hash}}
cd tests/bazel_client || exit 1
client_bazel() { bazel --output_base="$output_base" "$@"; }
trap 'client_bazel shutdown >/dev/null 2>&1' EXIT
flags=(--experimental_repository_disable_download --symlink_prefix=/ --color=no --curses=no)
log=$(mktemp "${TMPDIR:-/tmp}/ptxgen-bazel-client.XXXXXX")
trap 'client_bazel shutdown >/dev/null 2>&1; rm -f "$log"' EXIT
start=$SECONDS
fail() {
  echo "bazel_client: failed: $1 ($((SECONDS - start)) s)"
  exit 1
}

# 1. C++14: refused at analysis, with one message that says what to do.
client_bazel build --nobuild "${flags[@]}" --cxxopt=-std=c++14 //:plan_client > "$log" 2>&1 &&
  fail "a -std=c++14 build was not refused"
if ! grep -q "ptxgen needs C++17 or later, but this build compiles C++ with -std=c++14" "$log"; then
  tail -n 20 "$log"
  fail "a -std=c++14 build failed without //bazel:cxx17's message"
fi
echo "bazel_client: -std=c++14 refused: $(grep -o 'ptxgen needs C++17.*' "$log" | tail -n 1)"

# 2. The client, with its .bazelrc's -std=c++17.
if ! client_bazel build "${flags[@]}" //:plan_client > "$log" 2>&1; then
  grep -vE "^(\[|INFO:|Loading|Analyzing|[0-9]+\.[0-9]+: src/main/tools)" "$log" | tail -n 30
  fail "bazel build //:plan_client"
fi
binary="$(client_bazel info "${flags[@]}" bazel-bin 2>/dev/null)/plan_client"
output=$(PTXGEN_CACHE_DISABLE=1 "$binary" 2>&1) || { echo "$output"; fail "plan_client exited $?"; }
echo "bazel_client: $output"
echo "$output" | grep -qE "^kernel ptxgen_gemm_\S+: [1-9][0-9]* bytes of PTX$" ||
  fail "plan_client printed no kernel"
echo "bazel_client: took $((SECONDS - start)) s"
echo "bazel_client: passed"
