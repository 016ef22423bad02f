#ifndef PTXGEN_COMPILE_INSPECT_H_
#define PTXGEN_COMPILE_INSPECT_H_

// Looking at what was compiled: SASS through NVIDIA's disassemblers, and a
// JSON summary for tools and logs.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/compile/compiler.h"

namespace ptxgen::compile {

// The SASS of `module`'s CUBIN, from `nvdisasm` (preferred) or
// `cuobjdump -sass`, looked up in `search_path` (colon-separated, like
// $PATH). NotFound naming both tools when neither is there.
absl::StatusOr<std::string> DisassembleSass(const CompiledModule& module,
                                            absl::string_view search_path);

// The same, searching $PATH.
absl::StatusOr<std::string> DisassembleSass(const CompiledModule& module);

// One JSON object on one line: name, source ("compiled", "memory_cache",
// "disk_cache"), compile_ms, cache_key, arch, and "kernels" with each
// kernel's registers, static_shared_bytes (ptxas's figure: dynamic shared
// memory is the launch's), stack_bytes, spill_store_bytes,
// spill_load_bytes and the warnings that name it; diagnostics that name no
// kernel go to the module's "warnings", and "cache_warnings" follows.
// Deterministic for a given module: fields in fixed order, compile_ms with
// three decimals.
std::string ToJson(const CompiledModule& module);

// What ToJson says of the module itself, the same for every lookup of it
// (no source, compile_ms or cache_warnings): name, cache_key, arch, kernels
// and warnings. The .json file of a PTXGEN_DUMP_DIR dump.
std::string ResourcesJson(const CompiledModule& module);

// `text` as a JSON string literal, quotes included. Control characters
// (below U+0020) are escaped and bytes that are not valid UTF-8 become
// U+FFFD, so the output is always valid JSON, safe to print.
std::string JsonString(absl::string_view text);

}  // namespace ptxgen::compile

#endif  // PTXGEN_COMPILE_INSPECT_H_
