#ifndef PTXGEN_COMPILE_COMPILER_H_
#define PTXGEN_COMPILE_COMPILER_H_

// NVRTC compilation of generated CUDA C++ into PTX and CUBIN.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::compile {

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

// A ptxas performance diagnostic a caller should act on.
struct CompilerDiagnostic {
  enum class Kind {
    kWgmmaSerialized,   // C7510, C7511: wgmma pipeline serialized
    kInjectedWait,      // C7517, C7519: ptxas inserted warpgroup waits
    kSetmaxnregIgnored, // C7508
    kOtherWarning,      // any other ptxas/NVRTC warning
  };
  Kind kind = Kind::kOtherWarning;
  std::string code;     // "C7511", or empty
  std::string message;  // the log line
};

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
};

// Compiles `source` (named `name` in diagnostics) with NVRTC, producing PTX
// and CUBIN. A compile error returns InvalidArgument carrying the full log
// and the offending source line.
absl::StatusOr<CompiledModule> CompileCuda(absl::string_view name,
                                           absl::string_view source,
                                           const CompileOptions& options);

}  // namespace ptxgen::compile

#endif  // PTXGEN_COMPILE_COMPILER_H_
