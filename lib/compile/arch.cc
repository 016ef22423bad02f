#include "ptxgen/compile/arch.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ptxgen::compile {

absl::StatusOr<ArchName> ParseArchName(absl::string_view name) {
  ArchName arch;
  absl::string_view rest = name;
  arch.is_ptx = absl::ConsumePrefix(&rest, "compute_");
  const bool known_prefix = arch.is_ptx || absl::ConsumePrefix(&rest, "sm_");
  if (absl::ConsumeSuffix(&rest, "a")) {
    arch.variant = 'a';
  } else if (absl::ConsumeSuffix(&rest, "f")) {
    arch.variant = 'f';
  }
  int number = 0;
  const bool digits =
      (rest.size() == 2 || rest.size() == 3) &&
      std::all_of(rest.begin(), rest.end(), absl::ascii_isdigit) &&
      absl::SimpleAtoi(rest, &number);
  if (!known_prefix || !digits) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown architecture '", name,
        "' (expected sm_XY or compute_XY with an optional a or f suffix, "
        "such as sm_90a)"));
  }
  arch.major = number / 10;
  arch.minor = number % 10;
  return arch;
}

}  // namespace ptxgen::compile
