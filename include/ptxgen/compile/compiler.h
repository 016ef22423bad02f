#ifndef PTXGEN_COMPILE_COMPILER_H_
#define PTXGEN_COMPILE_COMPILER_H_

// NVRTC compilation of generated CUDA C++ into PTX and CUBIN.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::compile {

// How NVRTC compiles one translation unit.
struct CompileOptions {
  std::string arch = "sm_90a";  // NVRTC --gpu-architecture
  // Further NVRTC options, passed in this order ("-lineinfo", "-DX=1", ...).
  std::vector<std::string> flags;
};

// ptxas's report for one kernel (parsed from its -v output).
struct KernelResources {
  std::string kernel;  // mangled or extern "C" name
  int registers = 0;
  int static_shared_bytes = 0;
  int stack_frame_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
};

// A ptxas performance diagnostic a caller should act on, classified by
// ptxas's phrase (its codes change between releases).
struct CompilerDiagnostic {
  enum class Kind {
    kWgmmaSerialized,    // "wgmma.mma_async instructions are serialized"
    kInjectedWait,       // ptxas inserted warpgroup waits or arrives
    kSetmaxnregIgnored,  // "'setmaxnreg' ignored"
    kOtherWarning,       // any other ptxas/NVRTC warning
  };
  Kind kind = Kind::kOtherWarning;
  std::string code;     // "C7511", "177-D", or empty
  std::string kernel;   // the function the line names, or empty
  std::string message;  // the log line
};

// Where a compiled module came from: NVRTC in this call, the process's
// memory cache or the disk cache.
enum class CacheSource { kCompiled, kMemoryCache, kDiskCache };

// Everything produced for one translation unit; kept together so a cached
// kernel can still be inspected.
struct CompiledModule {
  std::string name;
  std::string cuda_source;
  CompileOptions options;
  std::string ptx;
  std::string cubin;  // bytes
  std::string log;    // NVRTC and ptxas output
  std::vector<KernelResources> resources;
  std::vector<CompilerDiagnostic> diagnostics;
  double compile_ms = 0;  // wall time of this lookup or compilation
  CacheSource source = CacheSource::kCompiled;
  std::string cache_key;  // hex content hash; empty when not cached
  // What the cache had to work around during this lookup (a corrupt entry
  // discarded, an entry it could not write); also sent to the cache's sink.
  std::vector<std::string> cache_warnings;
};

// Compiles `source` (named `name` in diagnostics) with NVRTC, producing PTX
// and CUBIN. A compile error returns InvalidArgument carrying the full log
// and the offending source line.
//
// NVRTC gets NvrtcArguments(options). Flags that
// name the architecture (use `arch`) or add include paths or pre-included
// headers (generated sources include no headers, and files outside the
// source would escape the cache key) are rejected, as are flags that write
// or read files of their own (--time, --fdevice-time-trace, the PCH flags)
// and flags that compile into no kernel (-fdevice-syntax-only, -dlto,
// --optix-ir). Whatever the flags, a module without a CUBIN holding a
// kernel ptxas compiled is refused.
absl::StatusOr<CompiledModule> CompileCuda(absl::string_view name,
                                           absl::string_view source,
                                           const CompileOptions& options);

// Every argument NVRTC gets for `options`, in order:
// --gpu-architecture=<arch>; -Xptxas=-v (ptxas's report: the resources and
// diagnostics); --no-cache (NVRTC 13 serves a compile it has seen before
// from the driver's compute cache without running ptxas, so the report
// would come back empty on a GPU host; ptxgen's own cache keeps the
// report); -std=c++17 unless a flag picks another standard; then `flags`.
// All of them are part of every cache key.
std::vector<std::string> NvrtcArguments(const CompileOptions& options);

// The rules CompileCuda holds `options` to (a real architecture; flags as
// above), for callers that take options long before they compile.
absl::Status ValidateCompileOptions(const CompileOptions& options);

// The linked NVRTC's version, "13.0"; part of every cache key.
const std::string& NvrtcVersion();

}  // namespace ptxgen::compile

#endif  // PTXGEN_COMPILE_COMPILER_H_
