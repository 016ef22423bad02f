"""ptxgen_fuzzer: a libFuzzer target of the ptxgen library.

Fuzz targets build only under --config=fuzz (clang-14 with ASan, UBSan and
libFuzzer's coverage instrumentation, see .bazelrc): they are tagged manual
so that `bazel test //...` (the default gcc build) skips them, and anything
else that names one without the config gets an error that says so.
tools/sanitize.sh builds and runs every target over a copy of its seed
corpus, fuzz/corpus/<name>/.
"""

def ptxgen_fuzzer(name, deps = [], **kwargs):
    native.cc_binary(
        name = name,
        srcs = [name + ".cc"],
        testonly = True,
        linkopts = select(
            {"//fuzz:fuzzing": ["-fsanitize=fuzzer"]},
            no_match_error = "fuzz targets build with --config=fuzz (see tools/sanitize.sh)",
        ),
        deps = deps + [
            "//fuzz:fuzz_support",
            "//third_party:absl",
        ],
        tags = ["manual", "fuzzer"],
        **kwargs
    )
