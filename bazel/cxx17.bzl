"""A check, at analysis time, that C++ is compiled as C++17 or later.

ptxgen's sources and headers are C++17, and Bazel 4's default C++ toolchain
compiles with -std=c++0x: without `build --cxxopt=-std=c++17` a client's
build would fail in hundreds of compiler errors. Every ptxgen library
depends on //bazel:cxx17, which reads the C++ compile command line of the
configured toolchain (its flags, then --copt and --cxxopt: the last -std=
wins, as with the compiler) and fails the build with one message instead.
A command line without -std= is left to the compiler's default.
"""

load("@bazel_tools//tools/build_defs/cc:action_names.bzl", "CPP_COMPILE_ACTION_NAME")
load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

# -std= values (after c++ / gnu++) older than C++17.
_PRE_CXX17 = ["98", "03", "0x", "11", "1y", "14"]

def _cxx17_check_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    variables = cc_common.create_compile_variables(
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        user_compile_flags = ctx.fragments.cpp.copts + ctx.fragments.cpp.cxxopts,
    )
    flags = cc_common.get_memory_inefficient_command_line(
        feature_configuration = feature_configuration,
        action_name = CPP_COMPILE_ACTION_NAME,
        variables = variables,
    )
    standard = None
    for flag in flags:
        if flag.startswith("-std=") or flag.startswith("--std="):
            standard = flag
    if standard:
        version = standard.split("=", 1)[1].replace("gnu++", "").replace("c++", "")
        if version in _PRE_CXX17:
            fail(("ptxgen needs C++17 or later, but this build compiles C++ with %s. " +
                  "Add `build --cxxopt=-std=c++17` to your .bazelrc " +
                  "(or pass --cxxopt=-std=c++17).") % standard)
    return [CcInfo()]

cxx17_check = rule(
    implementation = _cxx17_check_impl,
    attrs = {
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)
