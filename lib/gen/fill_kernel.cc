#include "ptxgen/gen/fill_kernel.h"

#include "absl/strings/str_cat.h"
#include "lib/gen/device_ops.h"
#include "ptxgen/gen/templates.h"
#include "ptxgen/ptx/convert.h"

namespace ptxgen::gen {

std::string RandomFillKernelName(ptx::ScalarType element) {
  return absl::StrCat("ptxgen_fill_random_", ptx::PtxName(element));
}

absl::StatusOr<std::string> RandomFillSource(ptx::ScalarType element) {
  DeviceOps ops;
  const std::string round = ops.Call(
      absl::StrCat("cvt_round_", ptx::PtxName(element)),
      ptx::CvtRoundFromF32(element),
      {{"result", "value"}, {"value", "(2.0f * uniform - 1.0f) * scale"}});
  if (!ops.status().ok()) return ops.status();
  absl::StatusOr<absl::string_view> text = EmbeddedTemplate("fill_random.cu");
  if (!text.ok()) return text.status();
  return FillTemplate("fill_random.cu", *text,
                      {{"ELEMENT", std::string(ptx::PtxName(element))},
                       {"KERNEL_NAME", RandomFillKernelName(element)},
                       {"DEVICE_FUNCTIONS", ops.Definitions()},
                       {"ROUND", round}});
}

}  // namespace ptxgen::gen
