#ifndef PTXGEN_LIB_COMPILE_KERNEL_DUMP_H_
#define PTXGEN_LIB_COMPILE_KERNEL_DUMP_H_

// PTXGEN_DUMP_DIR's files of one kernel (private to lib/compile).

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/files.h"

namespace ptxgen::compile {

// Writes <name>.<key>.ptx, .log, .json, .sass (when inspect.h's
// DisassembleSass finds a disassembler in `disassembler_path`) and, last,
// .cu into `folder`, <name>
// the module's name with every byte but letters, digits, '_' and '-' made
// '_' (at most 96 of them), <key> the first 16 digits of its cache key. A
// kernel whose .cu is there with the same bytes was dumped before (by this
// process or another) and is left as it is: its log, which carries ptxas's
// times, would differ. No file is replaced; the first one that differs is
// the error.
absl::Status DumpModule(const TrustedFolder& folder,
                        const CompiledModule& module,
                        absl::string_view disassembler_path);

}  // namespace ptxgen::compile

#endif  // PTXGEN_LIB_COMPILE_KERNEL_DUMP_H_
