#!/bin/bash
# Checks that the C++ files tracked by git are formatted as .clang-format
# says (Google's style), with clang-format-14: prints each file that is not,
# with how many lines would change, then "N passed, N failed" (files) last.
# Exit status 0 only when every file passed. --fix formats the files that
# failed in place instead (then regenerates docs/API.md when a public header
# changed: it quotes their declarations) and prints what it changed.
#   bash tools/format_check.sh [--fix] [FILE...]   # default: every file
# Not checked, as they are text the tests compare byte for byte:
# ptx_templates/ (the kernel templates: their text is the generated
# kernels', and with their {{SLOT}}s not C++), tests/gen/golden/ (generated
# kernels), tests/ptx/fragment_functions.inc (must equal the generated
# device functions); and third_party/.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
fix=0
if [ "${1:-}" = "--fix" ]; then
  fix=1
  shift
fi
excluded='^(third_party/|ptx_templates/|tests/gen/golden/|tests/ptx/fragment_functions\.inc$)'
patterns=('*.cc' '*.h' '*.c' '*.cu' '*.cuh' '*.inc' '*.cpp' '*.hpp')
if [ "$#" -gt 0 ]; then
  mapfile -t files < <(git ls-files -- "$@" | grep -E '\.(cc|h|c|cu|cuh|inc|cpp|hpp)$' |
                       grep -vE "$excluded")
else
  mapfile -t files < <(git ls-files -- "${patterns[@]}" | grep -vE "$excluded")
fi
formatted=$(mktemp "${TMPDIR:-/tmp}/ptxgen-format.XXXXXX")
trap 'rm -f "$formatted"' EXIT
start=$SECONDS
passed=0
failed=0
headers_changed=0
for file in "${files[@]}"; do
  [ -f "$file" ] || continue  # deleted in the work tree, not yet in git
  if ! clang-format-14 --style=file "$file" > "$formatted" 2>&1; then
    echo "$file: clang-format-14 failed: $(head -n 3 "$formatted")"
    failed=$((failed + 1))
    continue
  fi
  if cmp -s "$file" "$formatted"; then
    passed=$((passed + 1))
    continue
  fi
  lines=$(diff "$file" "$formatted" | grep -c '^[<>]')
  if [ "$fix" -eq 1 ]; then
    cat "$formatted" > "$file"
    echo "$file: formatted ($lines lines of diff)"
    case $file in include/ptxgen/*) headers_changed=1 ;; esac
    passed=$((passed + 1))
  else
    echo "$file: not formatted ($lines lines of diff; bash tools/format_check.sh --fix $file)"
    failed=$((failed + 1))
  fi
done
if [ "$headers_changed" -eq 1 ]; then
  python3 tools/api_reference.py && echo "docs/API.md regenerated (public headers formatted)"
fi
echo "format_check: ${#files[@]} files in $((SECONDS - start)) s (clang-format-14, .clang-format)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
