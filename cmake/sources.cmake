# The files of the library and the CLI, found as the BUILD files find them:
# each layer's folder globbed, with the same exclusions. A file added to a
# layer's folder joins both builds; an exclusion, a folder or a file named
# in one build only is caught by tools/cmake_check.sh, which compares these
# lists with `bazel query` of //:ptxgen, //tools:ptxgen and
# //lib/capi:libptxgen.so.
get_filename_component(_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

# lib/<layer>/BUILD.bazel: srcs = glob(["*.cc", ...]) (lib/gen: "**/*.cc"). lib/testing (cuBLAS
# and cuBLASLt wrappers, verification) is test and benchmark support, no
# layer of the library; the CLI's `gemm --run` links two of its files.
set(PTXGEN_LAYERS base ptx gen compile runtime gemm attention)
set(PTXGEN_LIBRARY_SOURCES "")
foreach(_layer IN LISTS PTXGEN_LAYERS)
  file(GLOB_RECURSE _files CONFIGURE_DEPENDS "${_root}/lib/${_layer}/*.cc")
  list(APPEND PTXGEN_LIBRARY_SOURCES ${_files})
endforeach()

# include/BUILD.bazel: hdrs = glob(["ptxgen/<layer>/*.h"]), ptxgen/version.h.
set(PTXGEN_HEADERS "${_root}/include/ptxgen/version.h")
foreach(_layer IN LISTS PTXGEN_LAYERS)
  file(GLOB _files CONFIGURE_DEPENDS "${_root}/include/ptxgen/${_layer}/*.h")
  list(APPEND PTXGEN_HEADERS ${_files})
endforeach()

# ptx_templates/BUILD.bazel: the embed genrule's srcs = glob(["**/*.cu"]).
file(GLOB_RECURSE PTXGEN_TEMPLATES CONFIGURE_DEPENDS "${_root}/ptx_templates/*.cu")

# tools/BUILD.bazel: :cli (cli.cc, cli_emit.cc) and :ptxgen
# (glob(["ptxgen_*.cc"]), with //lib/testing:verification).
file(GLOB PTXGEN_CLI_SOURCES CONFIGURE_DEPENDS "${_root}/tools/cli*.cc" "${_root}/tools/ptxgen_*.cc")
list(APPEND PTXGEN_CLI_SOURCES "${_root}/lib/testing/verification.cc"
     "${_root}/lib/testing/cublas_library.cc")

# lib/capi/BUILD.bazel: libptxgen.so, the C API (:capi's ptxgen.cc and
# status.cc, :problem's problem.cc), its header and its version script.
file(GLOB PTXGEN_C_API_SOURCES CONFIGURE_DEPENDS "${_root}/lib/capi/*.cc")
set(PTXGEN_C_API_HEADER "${_root}/include/ptxgen/ptxgen.h")
set(PTXGEN_C_API_EXPORTS "${_root}/lib/capi/exports.lds")

unset(_root)
unset(_files)
unset(_layer)
