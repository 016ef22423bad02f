#include "ptxgen/gen/cuda_source.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ptxgen::gen {

std::string Indent(absl::string_view text, int spaces) {
  const std::string pad(spaces, ' ');
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    lines.push_back(line.empty() ? std::string() : absl::StrCat(pad, line));
  }
  return absl::StrJoin(lines, "\n");
}

const char* CxxTypeName(ptx::RegType type) {
  switch (type) {
    case ptx::RegType::kB16:
      return "unsigned short";
    case ptx::RegType::kB32:
    case ptx::RegType::kPred:
      return "unsigned";
    case ptx::RegType::kB64:
      return "unsigned long long";
    case ptx::RegType::kF32:
      return "float";
    case ptx::RegType::kS32:
      return "int";
  }
  return "unsigned";
}

namespace {

std::string Parameter(const ptx::Slot& slot) {
  const char* type = CxxTypeName(slot.type);
  const bool read_only = slot.access == ptx::Access::kRead;
  if (slot.count == 1) {
    return absl::StrCat(type, read_only ? " " : "& ", slot.role);
  }
  return absl::StrCat(read_only ? "const " : "", type, " (&", slot.role, ")[",
                      slot.count, "]");
}

}  // namespace

absl::StatusOr<std::string> DeviceFunction(absl::string_view name,
                                           const ptx::Statement& statement) {
  std::vector<std::string> parameters;
  ptx::OperandNames names;
  for (const ptx::Slot& slot : statement.slots()) {
    parameters.push_back(Parameter(slot));
    names[slot.role] = {slot.role};
  }
  absl::StatusOr<std::string> body = ptx::RenderInlineAsm(statement, names);
  if (!body.ok()) return body.status();
  return absl::StrCat("// ", statement.description(), "\n",
                      "__device__ __forceinline__ void ", name, "(",
                      absl::StrJoin(parameters, ", "), ") {\n",
                      Indent(*body, 2), "\n}\n");
}

}  // namespace ptxgen::gen
