#!/bin/bash
# Installs the ptxgen Python package from this checkout, with no package
# index: builds //lib/capi:libptxgen.so and copies python/ptxgen/ with the
# library into a folder on the interpreter's path.
#
#   bash tools/python_install.sh            # $PYTHON's (python3's) site-packages:
#                                           # a virtual environment's, else the user's
#   bash tools/python_install.sh FOLDER     # FOLDER/ptxgen (then PYTHONPATH=FOLDER)
#
# Beside the library go the Debian Abseil libraries it links (it finds them
# through $ORIGIN), so the folder also works on a GPU host without them;
# NVRTC comes from /usr/local/cuda/lib64 and the driver from the host.
# Ends by planning a small GEMM with the installed copy (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}

target=${1:-$("$python" -c 'import site, sys
print(site.getsitepackages()[0] if sys.prefix != sys.base_prefix else site.getusersitepackages())')}

bazel build //lib/capi:libptxgen.so
library=bazel-bin/lib/capi/libptxgen.so

mkdir -p "$target"
rm -rf "$target/ptxgen"
mkdir "$target/ptxgen"
cp python/ptxgen/*.py "$target/ptxgen/"
cp "$library" "$target/ptxgen/libptxgen.so"
ldd "$library" | awk '/libabsl_/ { print $3 }' | while read -r absl; do
  cp -L "$absl" "$target/ptxgen/"
done
chmod -R u+w "$target/ptxgen"

env -u PTXGEN_LIBRARY PYTHONPATH="$target" "$python" -c '
import ptxgen
plan = ptxgen.plan(m=256, n=256, k=256)
print(f"ptxgen {ptxgen.version()} installed in {ptxgen.__path__[0]}: {plan.config}")'
