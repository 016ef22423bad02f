"""The ptxgen package of this checkout (python/), over the libptxgen.so that
Bazel built (bazel-bin/lib/capi/) unless $PTXGEN_LIBRARY names another;
no disk cache, so that planning here compiles what it plans."""
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT / "python")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
_built = ROOT / "bazel-bin" / "lib" / "capi" / "libptxgen.so"
if "PTXGEN_LIBRARY" not in os.environ and _built.exists():
    os.environ["PTXGEN_LIBRARY"] = str(_built)
os.environ.setdefault("PTXGEN_CACHE_DISABLE", "1")
