#ifndef PTXGEN_LIB_GEN_COMMON_DEVICE_OPS_H_
#define PTXGEN_LIB_GEN_COMMON_DEVICE_OPS_H_

// Collects the instruction statements a generated kernel uses as device
// functions and renders calls to them with arguments named by slot role.
// Errors are sticky (as in AsmJit): a generator emits freely and checks
// status() once at the end.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxgen/ptx/statement.h"

namespace ptxgen::gen {

class DeviceOps {
 public:
  using Arguments = std::map<std::string, std::string>;

  // "name(arg, ...);" with arguments in slot order. The first call for a
  // name defines the function; later calls must pass the same statement.
  std::string Call(const std::string& name, const ptx::Statement& statement,
                   const Arguments& arguments);
  std::string Call(const std::string& name,
                   const absl::StatusOr<ptx::Statement>& statement,
                   const Arguments& arguments);

  // Defines the function `name` for a template that calls it itself, with
  // its arguments in the statement's slot order, as Call would render
  // them.
  void Define(const std::string& name,
              const absl::StatusOr<ptx::Statement>& statement);

  // The definitions, ordered by name.
  std::string Definitions() const;
  const absl::Status& status() const { return status_; }

 private:
  void Fail(absl::Status status);

  std::vector<std::pair<std::string, std::string>> definitions_;
  absl::Status status_;
};

}  // namespace ptxgen::gen

#endif  // PTXGEN_LIB_GEN_COMMON_DEVICE_OPS_H_
