#include "ptxgen/gen/probe_kernel.h"

#include "absl/strings/str_cat.h"
#include "ptxgen/gen/cuda_source.h"

namespace ptxgen::gen {
namespace {

std::string VariableName(int statement, const ptx::Slot& slot) {
  return absl::StrCat("s", statement, "_", slot.role);
}

// Declares and loads one slot's variable; `next_input` walks the input array.
std::string DeclareSlot(const std::string& name, const ptx::Slot& slot,
                        int& next_input) {
  const char* type = CxxTypeName(slot.type);
  std::string text;
  if (slot.count == 1) {
    text =
        absl::StrCat(type, " ", name, " = (", type, ")in[", next_input, "];\n");
  } else {
    text = absl::StrCat(type, " ", name, "[", slot.count, "];\n",
                        "#pragma unroll\n", "for (int i = 0; i < ", slot.count,
                        "; ++i) ", name, "[i] = (", type, ")in[", next_input,
                        " + i];\n");
  }
  next_input += slot.count;
  return text;
}

std::string ConsumeSlot(const std::string& name, const ptx::Slot& slot) {
  if (slot.count == 1) {
    return absl::StrCat("sink += (unsigned long long)", name, ";\n");
  }
  return absl::StrCat("#pragma unroll\n", "for (int i = 0; i < ", slot.count,
                      "; ++i) sink += (unsigned long long)", name, "[i];\n");
}

absl::StatusOr<std::string> ProbeBlock(int index,
                                       const ptx::Statement& statement,
                                       int& next_input) {
  std::string declarations;
  std::string consumers;
  ptx::OperandNames names;
  for (const ptx::Slot& slot : statement.slots()) {
    const std::string name = VariableName(index, slot);
    names[slot.role] = {name};
    absl::StrAppend(&declarations, DeclareSlot(name, slot, next_input));
    if (slot.access != ptx::Access::kRead) {
      absl::StrAppend(&consumers, ConsumeSlot(name, slot));
    }
  }
  absl::StatusOr<std::string> asm_text = ptx::RenderInlineAsm(statement, names);
  if (!asm_text.ok()) return asm_text.status();
  return absl::StrCat(
      "{  // ", statement.description(), "\n",
      Indent(absl::StrCat(declarations, *asm_text, "\n", consumers), 2), "}\n");
}

}  // namespace

absl::StatusOr<std::string> ProbeKernelSource(
    absl::string_view kernel_name,
    absl::Span<const ptx::Statement> statements) {
  std::string body = "unsigned long long sink = 0;\n";
  int next_input = 0;
  for (size_t i = 0; i < statements.size(); ++i) {
    absl::StatusOr<std::string> block =
        ProbeBlock(static_cast<int>(i), statements[i], next_input);
    if (!block.ok()) return block.status();
    absl::StrAppend(&body, *block);
  }
  absl::StrAppend(&body, "out[threadIdx.x] = sink;\n");
  return absl::StrCat(
      "// ptxgen assembly probe: ", statements.size(), " statement(s).\n",
      "extern \"C\" __global__ void __launch_bounds__(128, 1)\n", kernel_name,
      "(const unsigned long long* __restrict__ in,\n",
      "    unsigned long long* __restrict__ out) {\n", Indent(body, 2), "}\n");
}

}  // namespace ptxgen::gen
