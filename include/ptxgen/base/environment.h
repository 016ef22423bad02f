#ifndef PTXGEN_BASE_ENVIRONMENT_H_
#define PTXGEN_BASE_ENVIRONMENT_H_

// Reading ptxgen's environment variables, one rule for all of them.

#include <cstdlib>

#include "absl/strings/string_view.h"

namespace ptxgen::base {

// The variable's value; "" when it is unset. An empty variable means the
// same as an unset one: not configured.
inline absl::string_view EnvironmentVariable(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? absl::string_view() : absl::string_view(value);
}

}  // namespace ptxgen::base

#endif  // PTXGEN_BASE_ENVIRONMENT_H_
