// The --emit views of statements and compiled kernels, and the --op
// families of small statements.
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "ptxgen/compile/inspect.h"
#include "ptxgen/compile/kernel_cache.h"
#include "ptxgen/gen/probe_kernel.h"
#include "tools/cli.h"

namespace ptxgen::cli {
namespace {

// ---- Compiled views ----

std::string KernelResourcesText(const compile::KernelResources& kernel) {
  return absl::StrFormat(
      "kernel %s\n"
      "  registers            %d\n"
      "  static shared bytes  %d\n"
      "  stack frame bytes    %d\n"
      "  spill store bytes    %d\n"
      "  spill load bytes     %d\n",
      kernel.kernel, kernel.registers, kernel.static_shared_bytes,
      kernel.stack_frame_bytes, kernel.spill_store_bytes,
      kernel.spill_load_bytes);
}

// compile::ToJson's object after the schema and "cache" (a reader need not
// know which of ToJson's "source" values count as hits), then `fields`.
std::string JsonText(const compile::CompiledModule& module,
                     const JsonFields& fields) {
  const bool hit = module.source != compile::CacheSource::kCompiled;
  const std::string json = compile::ToJson(module);
  std::string text = absl::StrCat(
      "{\"schema\":", kJsonSchemaVersion, ",\"cache\":\"", hit ? "hit" : "miss",
      "\",", absl::string_view(json).substr(1, json.size() - 2));
  for (const auto& [key, value] : fields) {
    absl::StrAppend(&text, ",", compile::JsonString(key), ":", value);
  }
  return absl::StrCat(text, "}\n");
}

// ---- Statement views ----

// NVVM's register prefixes, so the lines read like compiler output.
const char* RegisterPrefix(ptx::RegType type) {
  switch (type) {
    case ptx::RegType::kB16:
      return "%rs";
    case ptx::RegType::kB32:
      return "%r";
    case ptx::RegType::kS32:  // its own numbering: a .s32 declaration
      return "%s";
    case ptx::RegType::kB64:
      return "%rd";
    case ptx::RegType::kF32:
      return "%f";
    case ptx::RegType::kPred:
      return "%p";
  }
  return "%r";
}

// Numbers each register class from 0 in slot order and declares the
// registers used, so the lines paste into a PTX function body.
absl::StatusOr<std::string> PtxLinesText(const ptx::Statement& statement) {
  std::map<ptx::RegType, int> used;  // ordered: declarations are stable
  ptx::OperandNames names;
  for (const ptx::Slot& slot : statement.slots()) {
    std::vector<std::string>& registers = names[slot.role];
    for (int i = 0; i < slot.count; ++i) {
      registers.push_back(
          absl::StrCat(RegisterPrefix(slot.type), used[slot.type]++));
    }
  }
  absl::StatusOr<std::string> lines = ptx::RenderPtx(statement, names);
  if (!lines.ok()) return lines.status();
  std::string text;
  for (const auto& [type, count] : used) {
    absl::StrAppend(&text, ".reg .", ptx::PtxRegTypeName(type), " ",
                    RegisterPrefix(type), "<", count, ">;\n");
  }
  return absl::StrCat(text, *lines, "\n");
}

absl::StatusOr<std::string> AsmText(const ptx::Statement& statement) {
  ptx::OperandNames names;
  for (const ptx::Slot& slot : statement.slots()) {
    names[slot.role] = {slot.role};
  }
  absl::StatusOr<std::string> text = ptx::RenderInlineAsm(statement, names);
  if (!text.ok()) return text.status();
  return absl::StrCat(*text, "\n");
}

// ---- Operations ----

const Operation* FindOperation(absl::Span<const Operation> operations,
                               absl::string_view name) {
  for (const Operation& operation : operations) {
    if (operation.name == name) return &operation;
  }
  return nullptr;
}

bool Reads(const Operation& operation, absl::string_view flag) {
  for (const std::string& name : operation.flags) {
    if (name == flag) return true;
  }
  return false;
}

// Refuses a flag the chosen operation would ignore, naming the operations
// that do read it.
absl::Status CheckOperationFlags(absl::Span<const Operation> operations,
                                 const Operation& chosen,
                                 const ParsedFlags& flags) {
  for (const std::string& flag : flags.GivenNames()) {
    if (flag == "op" || flag == "emit" || Reads(chosen, flag)) continue;
    std::vector<std::string> readers;
    for (const Operation& operation : operations) {
      if (Reads(operation, flag)) readers.push_back(operation.name);
    }
    return UsageError(
        absl::StrCat("--", flag, " does not apply to --op=", chosen.name,
                     " (only to --op=", absl::StrJoin(readers, ", "), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ResourcesView(const compile::CompiledModule& module) {
  std::string text;
  for (const compile::KernelResources& kernel : module.resources) {
    absl::StrAppend(&text, KernelResourcesText(kernel));
  }
  if (module.diagnostics.empty()) {
    absl::StrAppend(&text, "warnings: none\n");
    return text;
  }
  absl::StrAppend(&text, "warnings:\n");
  for (const compile::CompilerDiagnostic& diagnostic : module.diagnostics) {
    absl::StrAppend(&text, "  ", diagnostic.message, "\n");
  }
  return text;
}

absl::StatusOr<std::string> EmitCompiled(absl::string_view module_name,
                                         absl::string_view source,
                                         const compile::CompileOptions& options,
                                         absl::string_view emit) {
  if (emit == "cuda") return std::string(source);
  absl::StatusOr<std::shared_ptr<const compile::CompiledModule>> module =
      compile::KernelCache::Default().GetOrCompile(module_name, source,
                                                   options);
  if (!module.ok()) return module.status();
  return EmitCompiled(**module, emit);
}

absl::StatusOr<std::string> EmitCompiled(const compile::CompiledModule& module,
                                         absl::string_view emit,
                                         const JsonFields& json_fields) {
  if (emit == "cuda") return module.cuda_source;
  if (emit == "ptx") return module.ptx;
  if (emit == "sass") return compile::DisassembleSass(module);
  if (emit == "resources") return ResourcesView(module);
  if (emit == "json") return JsonText(module, json_fields);
  return absl::InternalError(
      absl::StrCat("no compiled view named '", emit, "'"));
}

absl::StatusOr<std::string> EmitStatement(
    absl::string_view kernel_name,
    const absl::StatusOr<ptx::Statement>& statement, absl::string_view emit) {
  if (!statement.ok()) return statement.status();
  if (emit == "asm") return AsmText(*statement);
  if (emit == "ptx-lines") return PtxLinesText(*statement);
  absl::StatusOr<std::string> source =
      gen::ProbeKernelSource(kernel_name, {*statement});
  if (!source.ok()) return source.status();
  return EmitCompiled(kernel_name, *source, compile::CompileOptions(), emit);
}

StatementBuilder Fixed(ptx::Statement (*build)()) {
  return [build](const ParsedFlags&) -> absl::StatusOr<ptx::Statement> {
    return build();
  };
}

Flag OperationFlag(absl::Span<const Operation> operations) {
  std::vector<Choice> choices;
  for (const Operation& operation : operations) {
    std::string help = operation.help;
    if (!operation.flags.empty()) {
      absl::StrAppend(&help, " [--", absl::StrJoin(operation.flags, ", --"),
                      "]");
    }
    choices.push_back({operation.name, std::move(help)});
  }
  return Required(ChoiceFlag("op", "OP", std::move(choices),
                             "The instruction; the flags in [ ] apply to it.",
                             ""));
}

absl::StatusOr<std::string> RunOperation(absl::string_view family,
                                         absl::Span<const Operation> operations,
                                         const ParsedFlags& flags) {
  const Operation* operation = FindOperation(operations, flags.Text("op"));
  if (operation == nullptr) {
    return absl::InternalError(
        absl::StrCat(family, ": no operation named '", flags.Text("op"), "'"));
  }
  if (absl::Status checked = CheckOperationFlags(operations, *operation, flags);
      !checked.ok()) {
    return checked;
  }
  const std::string kernel = absl::StrReplaceAll(
      absl::StrCat("probe_", family, "_", operation->name), {{"-", "_"}});
  return EmitStatement(kernel, operation->build(flags), flags.Text("emit"));
}

}  // namespace ptxgen::cli
