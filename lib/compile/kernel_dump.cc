#include "lib/compile/kernel_dump.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ptxgen/compile/inspect.h"

namespace ptxgen::compile {
namespace {

// Long enough to tell kernels apart, short enough for any file system
// beside the key and the extension.
constexpr size_t kMaxNameBytes = 96;
constexpr size_t kKeyDigits = 16;

// A module name is any text; a file name must be one path component that
// a shell user can type.
std::string FileNameOf(absl::string_view name, absl::string_view key) {
  std::string base;
  for (const char c : name.substr(0, kMaxNameBytes)) {
    base.push_back(absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
                           c == '_' || c == '-'
                       ? c
                       : '_');
  }
  return absl::StrCat(base.empty() ? "kernel" : base, ".",
                      key.substr(0, kKeyDigits));
}

}  // namespace

absl::Status DumpModule(const TrustedFolder& folder,
                        const CompiledModule& module,
                        absl::string_view disassembler_path) {
  const std::string base = FileNameOf(module.name, module.cache_key);
  const std::string source_file = absl::StrCat(base, ".cu");
  absl::StatusOr<std::string> dumped = folder.ReadFile(
      source_file, "", static_cast<int64_t>(module.cuda_source.size()));
  if (dumped.ok() && *dumped == module.cuda_source) return absl::OkStatus();
  std::vector<std::pair<std::string, std::string>> files = {
      {absl::StrCat(base, ".ptx"), module.ptx},
      {absl::StrCat(base, ".log"), module.log},
      {absl::StrCat(base, ".json"), absl::StrCat(ResourcesJson(module), "\n")},
  };
  // SASS where a disassembler is at hand: a dump without it is complete.
  if (!disassembler_path.empty()) {
    absl::StatusOr<std::string> sass =
        DisassembleSass(module, disassembler_path);
    if (sass.ok())
      files.push_back({absl::StrCat(base, ".sass"), *std::move(sass)});
  }
  files.push_back({source_file, module.cuda_source});
  for (const auto& [name, bytes] : files) {
    if (absl::Status written = folder.WriteFileOnce(name, bytes);
        !written.ok()) {
      return written;
    }
  }
  return absl::OkStatus();
}

}  // namespace ptxgen::compile
