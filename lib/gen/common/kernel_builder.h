#ifndef PTXGEN_LIB_GEN_COMMON_KERNEL_BUILDER_H_
#define PTXGEN_LIB_GEN_COMMON_KERNEL_BUILDER_H_

// The generation machinery every kernel family uses (GEMM today, attention
// next): device functions collected from layer-1 statements, templates
// filled with the family's values, the plan block that writes each number
// the host planned once, and the kernel's signature from its parameter
// table. Errors are sticky, as DeviceOps' are: a family generates freely
// and checks status() once at the end.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lib/gen/common/device_ops.h"
#include "ptxgen/gen/planned_constant.h"
#include "ptxgen/gen/templates.h"

namespace ptxgen::gen {

// A kernel parameter as the signature declares it, and what it means (for
// the comment above the kernel).
struct KernelParameterText {
  std::string declaration;
  std::string meaning;
};

class KernelBuilder {
 public:
  DeviceOps& ops() { return ops_; }

  // Keeps the first error.
  void Check(const absl::Status& result);
  // The first error, the builder's own or its device functions'.
  absl::Status status() const;

  // Template `name` filled with `values`; empty, with the error kept, when
  // it cannot be.
  std::string Fill(absl::string_view name, const TemplateValues& values);

  // What a template's plan slot holds until PlaceThePlan replaces it.
  static constexpr char kPlanMarker[] = "@@PLAN@@\n";

  // Puts the plan block in place of kPlanMarker in `source`: the constants
  // (and arrays) of `planned` the source reads (an unread constexpr draws a
  // compiler warning), under a comment naming `planner`, the host function that
  // planned them. Returns those constants.
  static std::vector<PlannedConstant> PlaceThePlan(
      const std::vector<PlannedConstant>& planned, absl::string_view planner,
      std::string& source);

 private:
  DeviceOps ops_;
  absl::Status status_;
};

// Plan constants as the kernel declares them.
PlannedConstant PlanInt(const std::string& name, int64_t value);
PlannedConstant PlanBytes(const std::string& name, int64_t value);
PlannedConstant PlanBool(const std::string& name, bool value);
// An array the kernel indexes with unrolled constants (offsets of a tile's
// wgmma operands, the row of each accumulator register), so that every
// index folds to a number.
PlannedConstant PlanIntArray(const std::string& name,
                             const std::vector<int>& values);
PlannedConstant PlanBytesArray(const std::string& name,
                               const std::vector<uint32_t>& values);

// `extern "C" __global__ void __launch_bounds__(threads, 1)` and the
// kernel's name and parameters, one per line.
std::string KernelSignature(absl::string_view name, int threads,
                            const std::vector<KernelParameterText>& parameters);

// The comment listing the parameters: "// Parameters (<table>, in
// order):" and a line per parameter.
std::string ParameterDocs(absl::string_view table,
                          const std::vector<KernelParameterText>& parameters);

}  // namespace ptxgen::gen

#endif  // PTXGEN_LIB_GEN_COMMON_KERNEL_BUILDER_H_
