// GEMM configuration names: gen::ParseConfigName, then ValidateGemmConfig
// for both GEMM element types. A configuration the validator accepts must
// round-trip: its ConfigName parses back to the same fields, gives the same
// name again and validates again. Any parsed configuration must have a name.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "fuzz/fuzz_support.h"
#include "fuzz/gemm_config_util.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/scalar_type.h"

namespace {

using ptxgen::fuzz::SameFields;
using ptxgen::gen::GemmConfig;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name(ptxgen::fuzz::AsText(data, size));
  const absl::StatusOr<GemmConfig> parsed = ptxgen::gen::ParseConfigName(name);
  if (!parsed.ok()) {
    FUZZ_CHECK(!parsed.status().message().empty(),
               "a refusal without a reason");
    return 0;
  }
  const std::string canonical = ptxgen::gen::ConfigName(*parsed);
  FUZZ_CHECK(!canonical.empty(), "no name for '", name, "'");
  for (ptxgen::ptx::ScalarType element :
       {ptxgen::ptx::ScalarType::kF16, ptxgen::ptx::ScalarType::kBF16}) {
    if (!ptxgen::gen::ValidateGemmConfig(*parsed, element).ok()) continue;
    const absl::StatusOr<GemmConfig> again =
        ptxgen::gen::ParseConfigName(canonical);
    FUZZ_CHECK(again.ok(), "the name '", canonical, "' of the valid '", name,
               "' does not parse: ", again.status().message());
    FUZZ_CHECK(SameFields(*again, *parsed), "'", name, "' -> '", canonical,
               "' parses back to other fields ('",
               ptxgen::gen::ConfigName(*again), "')");
    FUZZ_CHECK(ptxgen::gen::ConfigName(*again) == canonical, "the name of '",
               canonical, "' changed");
    FUZZ_CHECK(ptxgen::gen::ValidateGemmConfig(*again, element).ok(), "'",
               canonical, "' no longer validates");
  }
  return 0;
}
