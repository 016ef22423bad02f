#ifndef PTXGEN_LIB_ATTENTION_ATTENTION_INTERNAL_H_
#define PTXGEN_LIB_ATTENTION_ATTENTION_INTERNAL_H_

// What plan.cc decides and attention.cc reads (private to lib/attention).

#include "ptxgen/attention/attention.h"
#include "ptxgen/compile/compiler.h"

namespace ptxgen::attention {

// What every attention kernel compiles with: a GEMM kernel's options
// (gemm::GemmCompileOptions) for the target's arch.
compile::CompileOptions AttentionCompileOptions(const AttentionTarget& target);

}  // namespace ptxgen::attention

#endif  // PTXGEN_LIB_ATTENTION_ATTENTION_INTERNAL_H_
