"""The package as users install it: `pip install --no-build-isolation
--no-index` of the checkout into a fresh virtual environment of Debian's
python3 (--system-site-packages: Debian's setuptools and wheel), and
tools/python_install.sh into a folder. The installed copy, imported from
outside the checkout with $PTXGEN_LIBRARY unset, plans with the
libptxgen.so it bundles, which finds the Abseil libraries it links beside
it.

setup.py's CMake build is slow from nothing (minutes on 2 cores), so the
checkout's files are copied to a folder that is kept,
$PTXGEN_PIP_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/ptxgen-pip-build;
`off`: a new temporary one), writing only the files that changed: CMake
then recompiles only what they touch, from one clone to the next.
"""
import fcntl
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEBIAN_PYTHON = "/usr/bin/python3"
PLAN_SCRIPT = """
import json, ptxgen
from ptxgen import _library
plan = ptxgen.plan(m=256, n=256, k=256)
print(json.dumps({"file": ptxgen.__file__, "version": ptxgen.version(),
                  "library": _library.library_path(), "kernel": plan.kernel_name,
                  "source": plan.source, "ptx": plan.ptx}))
"""


def version_h():
    text = (ROOT / "include" / "ptxgen" / "version.h").read_text()
    return re.search(r'kVersion\[\] = "([0-9.]+)"', text).group(1)


def clean_environment(**extra):
    """This process's environment without what would point the installed
    package elsewhere: $PTXGEN_LIBRARY, and the checkout's python/ on
    $PYTHONPATH (conftest.py's)."""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PTXGEN_LIBRARY", "PYTHONPATH")}
    environment["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    environment.update(extra)
    return environment


def run(command, **kwargs):
    """Runs command; a failure shows the end of what it printed."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        pytest.fail(f"{command} exited {result.returncode}:\n"
                    f"{(result.stdout + result.stderr)[-4000:]}")
    return result


def sync_checkout(destination):
    """Copies the checkout's files (git's: tracked, and untracked but not
    ignored) to destination, rewriting only those whose bytes differ, and
    removes the others there but build/ (setup.py's CMake and setuptools
    folders), so that a build in destination recompiles what changed."""
    listing = run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                   "--exclude-standard"]).stdout
    files = {name for name in listing.split("\0") if name and (ROOT / name).is_file()}
    for name in files:
        source, copy = ROOT / name, destination / name
        data = source.read_bytes()
        if not copy.is_file() or copy.read_bytes() != data:
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(data)
        copy.chmod(source.stat().st_mode & 0o777)
    for copy in destination.rglob("*"):
        relative = copy.relative_to(destination)
        if copy.is_file() and relative.parts[0] != "build" and str(relative) not in files:
            copy.unlink()


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """The checkout's files, in the kept folder (locked while a build uses
    it) or a temporary one; the checkout itself where setup.py is given a
    CMake build folder of it ($PTXGEN_CMAKE_BUILD_DIR, tools/test.sh's)."""
    if os.environ.get("PTXGEN_CMAKE_BUILD_DIR"):
        yield ROOT
        return
    cache = os.environ.get("PTXGEN_PIP_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ptxgen-pip-build")
    if cache == "off":
        folder = tmp_path_factory.mktemp("source")
        sync_checkout(folder)
        yield folder
        return
    folder = pathlib.Path(cache) / "source"
    folder.mkdir(parents=True, exist_ok=True)
    with open(pathlib.Path(cache) / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sync_checkout(folder)
        yield folder


@pytest.fixture(scope="module")
def venv(source, tmp_path_factory):
    """A fresh virtual environment with the package pip installed from
    source, offline."""
    folder = tmp_path_factory.mktemp("venv")
    run([DEBIAN_PYTHON, "-m", "venv", "--system-site-packages", str(folder)])
    python = folder / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--no-build-isolation", "--no-index", str(source)],
        env=clean_environment(), cwd=folder)
    return folder


@pytest.fixture(scope="module")
def installed(venv):
    """What the installed package says and plans, run outside the checkout."""
    result = run([str(venv / "bin" / "python"), "-c", PLAN_SCRIPT], env=clean_environment(),
                 cwd=venv)
    return json.loads(result.stdout)


def package_folder(venv):
    (folder,) = venv.glob("lib/python3*/site-packages/ptxgen")
    return folder


def test_the_environment_imports_its_own_copy_with_the_version_of_version_h(venv, installed):
    assert pathlib.Path(installed["file"]) == package_folder(venv) / "__init__.py"
    assert installed["version"] == version_h()


def test_plans_with_the_library_it_bundles(venv, installed):
    assert pathlib.Path(installed["library"]) == package_folder(venv) / "libptxgen.so"
    kernel = installed["kernel"]
    assert kernel.startswith("ptxgen_gemm_f16_")
    assert 'extern "C" __global__' in installed["source"]
    assert kernel in installed["source"]
    assert ".target sm_90a" in installed["ptx"]
    assert f".entry {kernel}(" in installed["ptx"]


def test_the_bundled_library_finds_abseil_beside_it(venv):
    folder = package_folder(venv)
    library = folder / "libptxgen.so"
    dynamic = run(["readelf", "-d", str(library)]).stdout
    (runpath,) = re.findall(r"\(RUNPATH\)\s+Library runpath: \[(.*)\]", dynamic)
    assert runpath.split(":")[0] == "$ORIGIN"
    # Each Abseil library, its own or another's dependency, resolves in the
    # package: one looked for elsewhere would be missing on a GPU host
    # without Debian's Abseil.
    environment = clean_environment()
    environment.pop("LD_LIBRARY_PATH", None)
    listing = run(["ldd", str(library)], env=environment).stdout
    assert "not found" not in listing
    resolved = {}
    for line in listing.splitlines():
        fields = line.split()
        if fields and fields[0].startswith("libabsl_"):
            resolved[fields[0]] = fields[2]
    assert len(resolved) > 10
    for soname, path in resolved.items():
        assert pathlib.Path(path) == folder / soname


def test_the_bundled_library_exports_the_c_api_alone(venv):
    run(["bash", str(ROOT / "tests" / "capi" / "exports_test.sh"),
         str(package_folder(venv) / "libptxgen.so"), str(ROOT / "include" / "ptxgen" / "ptxgen.h")])


def test_the_wheel_is_platform_specific_for_any_python_3(venv):
    (wheel,) = package_folder(venv).parent.glob("ptxgen-*.dist-info/WHEEL")
    text = wheel.read_text()
    assert "Root-Is-Purelib: false" in text
    assert re.search(r"^Tag: py3-none-linux_\w+$", text, re.MULTILINE)


def test_python_install_sh_installs_into_a_folder(source, tmp_path):
    # The script of the copy, so that its in-tree build is the kept one.
    folder = tmp_path / "site"
    result = run(["bash", str(source / "tools" / "python_install.sh"), str(folder)],
                 env=clean_environment(PYTHON=sys.executable), cwd=tmp_path)
    assert f"ptxgen {version_h()} installed in {folder / 'ptxgen'}: " in result.stdout
    assert (folder / "ptxgen" / "libptxgen.so").is_file()
    assert list((folder / "ptxgen").glob("libabsl_*.so.*"))
