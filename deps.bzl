"""The external repositories ptxgen needs, all local (nothing is downloaded).

In a client's WORKSPACE, after its own repositories:

    local_repository(name = "ptxgen", path = "/path/to/ptxgen")  # or http_archive
    load("@ptxgen//:deps.bzl", "ptxgen_dependencies")
    ptxgen_dependencies()

ptxgen's own WORKSPACE calls it too. It defines each repository below only
where the workspace has none of that name yet (the first definition of a
name wins over Bazel's built-in downloads, which `bazel query
//external:NAME` still shows):
  - ptxgen_cuda: the CUDA toolkit at `cuda_path` (headers, NVRTC, cuBLAS;
    the driver is loaded with dlopen at run time). Named so that it cannot
    clash with a client's own @cuda or rules_cuda repositories.
  - rules_cc, rules_java, remote_coverage_tools: what Bazel 4.2.3 would
    otherwise download for any C++ build or test; local stand-ins
    (third_party/rules_cc, Debian's bazel-rules-java at `rules_java_path`,
    third_party/coverage_tools).
Abseil comes from the system (Debian's libabsl-dev, linked statically:
//third_party:absl).
"""

def _ptxgen_folder_repository_impl(ctx):
    # The folder of `marker`, inside the ptxgen repository, as a repository
    # of its own: local_repository needs a path, and a client does not know
    # where ptxgen's checkout lies.
    folder = ctx.path(ctx.attr.marker).dirname
    for entry in folder.readdir():
        ctx.symlink(entry, entry.basename)

_ptxgen_folder_repository = repository_rule(
    implementation = _ptxgen_folder_repository_impl,
    attrs = {"marker": attr.label(allow_single_file = True, mandatory = True)},
    local = True,
)

def ptxgen_dependencies(
        cuda_path = "/usr/local/cuda",
        rules_java_path = "/usr/share/bazel/rules/java"):
    """Defines the repositories ptxgen's targets need, where absent.

    Args:
      cuda_path: the CUDA toolkit (13.0) to compile against.
      rules_java_path: a rules_java that works with Bazel 4.2.3 (Debian's
        bazel-rules-java).
    """
    existing = native.existing_rules()
    if "ptxgen_cuda" not in existing:
        native.new_local_repository(
            name = "ptxgen_cuda",
            build_file = str(Label("//third_party:cuda.BUILD")),
            path = cuda_path,
        )
    if "rules_cc" not in existing:
        _ptxgen_folder_repository(
            name = "rules_cc",
            marker = Label("//third_party/rules_cc:WORKSPACE"),
        )
    if "rules_java" not in existing:
        native.local_repository(
            name = "rules_java",
            path = rules_java_path,
        )
    if "remote_coverage_tools" not in existing:
        _ptxgen_folder_repository(
            name = "remote_coverage_tools",
            marker = Label("//third_party/coverage_tools:WORKSPACE"),
        )
