"""kernel_bundle: a read-only kernel cache folder made at build time.

The built `ptxgen precompile` compiles the kernels of a --problems file into
a tree artifact, once per build configuration; tests that only need kernels
read it through PTXGEN_CACHE_PATH (tests/kernels/kernel_bundle.h) instead of
each compiling the same ones through NVRTC.
"""

def _kernel_bundle_impl(ctx):
    bundle = ctx.actions.declare_directory(ctx.label.name)
    listing = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.run_shell(
        # A process per problem, as many at once as there are cores: NVRTC
        # compiles on one thread, and concurrent writers of one cache folder
        # are safe. Their reports (a line per kernel, less the folder's
        # name, which is the sandbox's) make the listing.
        command = """set -euo pipefail
lines=$(mktemp -d)
trap 'rm -rf "$lines"' EXIT
grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$2" | split -l 1 -a 4 - "$lines/"
ls "$lines"/* | xargs -P "$(nproc)" -I{} \
    "$1" precompile --problems={} --sms="$3" --out="$4" |
    sed '/^in /d' | sort >"$5"
""",
        arguments = [
            # The target configuration's ptxgen, the one the tests run: an
            # exec (host) one would be a second build of the library.
            ctx.executable._ptxgen.path,
            ctx.file.problems.path,
            str(ctx.attr.sms),
            bundle.path,
            listing.path,
        ],
        tools = [ctx.executable._ptxgen],
        inputs = [ctx.file.problems],
        outputs = [bundle, listing],
        mnemonic = "PtxgenPrecompile",
        progress_message = "Precompiling the kernels of %s" % ctx.file.problems.short_path,
    )
    return [DefaultInfo(
        files = depset([bundle, listing]),
        runfiles = ctx.runfiles(files = [bundle]),
    )]

kernel_bundle = rule(
    implementation = _kernel_bundle_impl,
    attrs = {
        # Lines of `ptxgen gemm` problem flags (`ptxgen precompile --help`).
        "problems": attr.label(allow_single_file = True, mandatory = True),
        # The SM count planned for: the heuristic's pick, so the kernel,
        # depends on it.
        "sms": attr.int(default = 132),
        "_ptxgen": attr.label(
            default = "//tools:ptxgen",
            executable = True,
            cfg = "target",
        ),
    },
)
