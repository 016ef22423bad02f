#include "lib/gen/common/device_ops.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ptxgen/gen/cuda_source.h"

namespace ptxgen::gen {

void DeviceOps::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

std::string DeviceOps::Call(const std::string& name,
                            const absl::StatusOr<ptx::Statement>& statement,
                            const Arguments& arguments) {
  if (!statement.ok()) {
    Fail(statement.status());
    return "";
  }
  return Call(name, *statement, arguments);
}

std::string DeviceOps::Call(const std::string& name,
                            const ptx::Statement& statement,
                            const Arguments& arguments) {
  std::vector<std::string> values;
  for (const ptx::Slot& slot : statement.slots()) {
    auto it = arguments.find(slot.role);
    if (it == arguments.end()) {
      Fail(absl::InternalError(absl::StrCat(
          "call of ", name, ": no argument for operand '", slot.role, "'")));
      return "";
    }
    values.push_back(it->second);
  }
  if (values.size() != arguments.size()) {
    Fail(absl::InternalError(
        absl::StrCat("call of ", name, ": arguments name unknown operands")));
    return "";
  }
  Define(name, statement);
  return absl::StrCat(name, "(", absl::StrJoin(values, ", "), ");");
}

void DeviceOps::Define(const std::string& name,
                       const absl::StatusOr<ptx::Statement>& statement) {
  if (!statement.ok()) {
    Fail(statement.status());
    return;
  }
  absl::StatusOr<std::string> definition = DeviceFunction(name, *statement);
  if (!definition.ok()) {
    Fail(definition.status());
    return;
  }
  for (const auto& [existing, text] : definitions_) {
    if (existing != name) continue;
    if (text != *definition) {
      Fail(absl::InternalError(absl::StrCat(
          "device function ", name, " defined twice with different bodies")));
    }
    return;
  }
  definitions_.emplace_back(name, *std::move(definition));
}

std::string DeviceOps::Definitions() const {
  // By name, not by first use: generators may call in an order C++ leaves
  // unspecified (the arguments of one StrCat), and the text must not
  // depend on the compiler that built ptxgen.
  std::vector<std::pair<std::string, std::string>> sorted = definitions_;
  std::sort(sorted.begin(), sorted.end());
  std::string text;
  for (const auto& [name, definition] : sorted) {
    absl::StrAppend(&text, definition, "\n");
  }
  return text;
}

}  // namespace ptxgen::gen
