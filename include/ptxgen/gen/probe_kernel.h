#ifndef PTXGEN_GEN_PROBE_KERNEL_H_
#define PTXGEN_GEN_PROBE_KERNEL_H_

// Assembly probes: minimal sm_90a kernels whose only purpose is to contain
// instruction statements, so that NVRTC and ptxas must accept them. They
// prove an instruction form legal; they compute nothing meaningful.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ptxgen/ptx/statement.h"

namespace ptxgen::gen {

// CUDA C++ source (no includes) for one kernel, `extern "C"` named
// `kernel_name`, containing each statement in its own block. Every slot gets
// a local variable loaded from the kernel's input array; every written slot
// feeds the output, so nothing can be optimized away.
absl::StatusOr<std::string> ProbeKernelSource(
    absl::string_view kernel_name, absl::Span<const ptx::Statement> statements);

}  // namespace ptxgen::gen

#endif  // PTXGEN_GEN_PROBE_KERNEL_H_
