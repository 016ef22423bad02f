"""The ptxgen wheel: python/ptxgen with libptxgen.so, built through the
project's CMake (the C API's target alone, Release), and the Abseil shared
libraries it links, which it finds beside it ($ORIGIN), so that the wheel
also runs on a host without Debian's Abseil; NVRTC comes from the host's
/usr/local/cuda/lib64 and the driver from the host.

    python3 -m pip install --no-build-isolation --no-index .

needs CMake, a C++17 compiler, Debian's libabsl-dev and CUDA at
/usr/local/cuda, and setuptools and wheel (Debian's python3-setuptools,
python3-wheel). The CMake build folder is build/cmake beside setuptools'
own: a second install from the same checkout compiles only what changed.
"""
import os
import re
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from wheel.bdist_wheel import bdist_wheel

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(ROOT, "build")


def version():
    """ptxgen::kVersion, read from include/ptxgen/version.h as CMakeLists.txt
    reads it: the one place it is written."""
    with open(os.path.join(ROOT, "include", "ptxgen", "version.h"), encoding="utf-8") as header:
        match = re.search(r'kVersion\[\] = "([0-9]+\.[0-9]+\.[0-9]+)"', header.read())
    if not match:
        raise RuntimeError("ptxgen: no kVersion found in include/ptxgen/version.h")
    return match.group(1)


def abseil_libraries(library):
    """The Abseil shared libraries `library` loads, where this host has them
    (ldd: each file's soname, behind Debian's symbolic links)."""
    listing = subprocess.run(["ldd", library], check=True, capture_output=True,
                             text=True).stdout
    found = {}
    for line in listing.splitlines():
        fields = line.split()
        if fields and fields[0].startswith("libabsl_"):
            if len(fields) < 3 or not os.path.isabs(fields[2]):
                raise RuntimeError(f"ptxgen: {library} needs {fields[0]}, which ldd did not find")
            found[fields[0]] = fields[2]
    if not found:
        raise RuntimeError(f"ptxgen: ldd found no Abseil library that {library} loads")
    return found


class BuildWithLibrary(build_py):
    """The package's modules, then libptxgen.so and its Abseil libraries
    beside them."""

    def run(self):
        package = os.path.join(self.build_lib, "ptxgen")
        # A module deleted from python/ptxgen must not stay in the wheel.
        shutil.rmtree(package, ignore_errors=True)
        super().run()
        # $PTXGEN_CMAKE_BUILD_DIR: a Release build folder of this checkout
        # that another build made (tools/test.sh shares tools/cmake_check.sh's),
        # kept as configured: only the C API's target is built in it.
        shared = os.environ.get("PTXGEN_CMAKE_BUILD_DIR")
        cmake_build = shared or os.path.join(BUILD, "cmake")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        configure = ["cmake", "-S", ROOT, "-B", cmake_build, "-DCMAKE_BUILD_TYPE=Release",
                     "-DPTXGEN_BUILD_C_API=ON"]
        self.spawn(configure if shared else configure + ["-DPTXGEN_BUILD_CLI=OFF"])
        self.spawn(["cmake", "--build", cmake_build, "--target", "ptxgen_capi",
                    "--parallel", jobs])
        library = os.path.join(cmake_build, "libptxgen.so")
        shutil.copy(library, os.path.join(package, "libptxgen.so"))
        for soname, path in abseil_libraries(library).items():
            shutil.copy(path, os.path.join(package, soname))


class PlatformDistribution(Distribution):
    """Not pure: the wheel holds libptxgen.so, built for this platform (and
    Debian 12's glibc), and installs into platlib."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """ctypes loads libptxgen.so, so the wheel is any Python 3's on this
    platform: py3-none-linux_x86_64."""

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


# setuptools' metadata folder goes to build/ too, not into python/.
os.makedirs(BUILD, exist_ok=True)
setup(
    version=version(),
    packages=["ptxgen"],
    package_dir={"": "python"},
    distclass=PlatformDistribution,
    cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel},
    options={"egg_info": {"egg_base": BUILD}},
)
