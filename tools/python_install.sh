#!/bin/bash
# Installs the ptxgen Python package from this checkout with no package
# index, as the README's `python3 -m pip install --no-build-isolation
# --no-index .` does (setup.py: libptxgen.so built through CMake, with the
# Debian Abseil libraries it links beside it, found through $ORIGIN), for
# any Python 3 with pip: the wheel is built by $PYTHON (default python3)
# when it has setuptools and wheel, else by Debian's /usr/bin/python3
# (python3-setuptools, python3-wheel), and installed by $PYTHON.
#
#   bash tools/python_install.sh            # $PYTHON's site-packages: a virtual
#                                           # environment's, else the user's
#   bash tools/python_install.sh FOLDER     # FOLDER/ptxgen (then PYTHONPATH=FOLDER)
#
# The wheel also runs on a GPU host without Debian's Abseil; NVRTC comes
# from /usr/local/cuda/lib64 and the driver from the host. Ends by planning
# a small GEMM with the installed copy (no GPU needed).
set -euo pipefail
python=${PYTHON:-python3}
target=${1:-$("$python" -c 'import site, sys
print(site.getsitepackages()[0] if sys.prefix != sys.base_prefix else site.getusersitepackages())')}
target=$(realpath -m "$target")
cd "$(dirname "$0")/.."
builder=$python
"$builder" -c 'import setuptools, wheel' 2>/dev/null || builder=/usr/bin/python3
export PIP_DISABLE_PIP_VERSION_CHECK=1

wheels=$(mktemp -d "${TMPDIR:-/tmp}/ptxgen-wheel.XXXXXX")
trap 'rm -rf "$wheels"' EXIT
"$builder" -m pip wheel --no-build-isolation --no-index --no-deps --wheel-dir "$wheels" .
"$python" -m pip install --no-index --no-deps --force-reinstall --upgrade --target "$target" \
  "$wheels"/ptxgen-*.whl

# From outside the checkout, so that its python/ cannot be what is imported.
cd "$wheels"
unset PTXGEN_LIBRARY
PYTHONPATH=$target "$python" -c '
import ptxgen
plan = ptxgen.plan(m=256, n=256, k=256)
print(f"ptxgen {ptxgen.version()} installed in {ptxgen.__path__[0]}: {plan.config}")'
