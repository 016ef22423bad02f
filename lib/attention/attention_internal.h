#ifndef PTXGEN_LIB_ATTENTION_ATTENTION_INTERNAL_H_
#define PTXGEN_LIB_ATTENTION_ATTENTION_INTERNAL_H_

// What plan.cc and operand_memory.cc decide and attention.cc reads (private
// to lib/attention).

#include "absl/status/statusor.h"
#include "ptxgen/attention/attention.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gen/attention.h"

namespace ptxgen::attention {

// What every attention kernel compiles with: every kernel's options
// (runtime::KernelCompileOptions) for the target's arch.
compile::CompileOptions AttentionCompileOptions(const AttentionTarget& target);

// The launch of `kernel` for a resolved `problem` on `target` (PlanAttention
// plans it before compiling): a persistent grid for fixed lengths, a CTA a
// tile for variable lengths; refused when the tiles overflow the kernel's
// int.
absl::StatusOr<AttentionGrid> PlanGrid(const AttentionProblem& problem,
                                       const gen::GeneratedAttention& kernel,
                                       const AttentionTarget& target);

// CheckOutputsApart of a problem that is resolved and valid (Run's, every
// run): no resolving, no validating, no allocation.
absl::Status OutputsApart(const AttentionProblem& resolved,
                          const AttentionOperands& operands);

}  // namespace ptxgen::attention

#endif  // PTXGEN_LIB_ATTENTION_ATTENTION_INTERNAL_H_
