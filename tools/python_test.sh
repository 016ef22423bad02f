#!/bin/bash
# The Python package's tests (tests/python) over the libptxgen.so that Bazel
# builds, with Debian's interpreter and pytest (python3-pytest, which
# tools/setup.sh installs for /usr/bin/python3; PTXGEN_TEST_PYTHON names
# another). GPU tests skip without PyTorch and a Hopper GPU. Cases are
# counted from pytest's JUnit XML as tools/test_summary.py counts Bazel's:
# "N passed, N failed" last; exit status 0 only when nothing failed.
set -uo pipefail
cd "$(dirname "$0")/.."
python=${PTXGEN_TEST_PYTHON:-/usr/bin/python3}

if ! bazel build //lib/capi:libptxgen.so >/tmp/ptxgen-python-build.log 2>&1; then
  grep -E "ERROR|error" /tmp/ptxgen-python-build.log | head -n 20
  echo "0 passed, 1 failed"
  exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/ptxgen-python-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
# No __pycache__ or .pytest_cache left in the checkout.
PYTHONDONTWRITEBYTECODE=1 PTXGEN_LIBRARY="$PWD/bazel-bin/lib/capi/libptxgen.so" \
  "$python" -m pytest -q -p no:cacheprovider --junitxml="$work/test.xml" tests/python
status=$?
summary=$("$python" tools/test_summary.py "$work" /dev/null)
echo "$summary" | head -n -1
read -r passed failed < <(echo "$summary" | tail -n 1 |
  sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p')
passed=${passed:-0}
failed=${failed:-1}
# pytest failed where no case did (not installed, a collection error).
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
