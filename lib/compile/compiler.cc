#include "ptxgen/compile/compiler.h"

#include <nvrtc.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/compile/elapsed.h"
#include "ptxgen/compile/arch.h"
#include "ptxgen/compile/ptxas_report.h"

namespace ptxgen::compile {
namespace {

absl::Status Rejected(const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat("compile: ", rule));
}

bool HasNul(absl::string_view text) {
  return text.find('\0') != absl::string_view::npos;
}

// A CUBIN exists only for a real architecture: "sm_90a", not "compute_90a".
absl::Status ValidateArch(absl::string_view arch) {
  absl::StatusOr<ArchName> parsed = ParseArchName(arch);
  if (!parsed.ok()) return Rejected(std::string(parsed.status().message()));
  if (parsed->is_ptx) {
    return Rejected(absl::StrCat(
        "arch must be a real architecture such as sm_90a (a CUBIN needs "
        "one), not '",
        arch, "'"));
  }
  return absl::OkStatus();
}

bool StartsWithAny(absl::string_view flag,
                   std::initializer_list<absl::string_view> prefixes) {
  for (absl::string_view prefix : prefixes) {
    if (absl::StartsWith(flag, prefix)) return true;
  }
  return false;
}

constexpr absl::string_view kWritesFiles =
    "writes files of its own (appending to, or through a symlink planted "
    "at, whatever path it names) or reads them past the cache key";
constexpr absl::string_view kNoKernel =
    "compiles into no kernel (no CUBIN, or one without the entry)";

// NVRTC options refused by name, with either dash and any value.
struct RefusedOption {
  absl::string_view name;
  absl::string_view why;
};
constexpr RefusedOption kRefusedOptions[] = {
    {"time", kWritesFiles},
    {"fdevice-time-trace", kWritesFiles},
    {"create-pch", kWritesFiles},
    {"pch", kWritesFiles},
    {"pch-dir", kWritesFiles},
    {"use-pch", kWritesFiles},
    {"fdevice-syntax-only", kNoKernel},
    {"dlink-time-opt", kNoKernel},
    {"dlto", kNoKernel},
    {"optix-ir", kNoKernel},
};

// "--time=x.csv" -> "time".
absl::string_view OptionName(absl::string_view flag) {
  absl::ConsumePrefix(&flag, "-");
  absl::ConsumePrefix(&flag, "-");
  return flag.substr(0, flag.find('='));
}

absl::Status ValidateFlag(absl::string_view flag) {
  if (flag.empty() || HasNul(flag)) {
    return Rejected("a flag must be non-empty text without NUL bytes");
  }
  if (StartsWithAny(flag, {"-arch", "--gpu-architecture"})) {
    return Rejected(
        absl::StrCat("flag '", flag,
                     "' names the architecture; set CompileOptions::arch, "
                     "which is always passed (two would conflict)"));
  }
  if (StartsWithAny(flag,
                    {"-I", "--include-path", "-include", "--pre-include"})) {
    return Rejected(
        absl::StrCat("flag '", flag,
                     "' adds headers; generated sources include none, and "
                     "files outside the source would escape the cache key"));
  }
  for (const RefusedOption& option : kRefusedOptions) {
    if (OptionName(flag) == option.name) {
      return Rejected(absl::StrCat("flag '", flag, "' ", option.why));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(absl::string_view name, absl::string_view source,
                             const CompileOptions& options) {
  if (name.empty() || HasNul(name)) {
    return Rejected("a module name must be non-empty text without NUL bytes");
  }
  // NVRTC reads C strings: a NUL would silently cut the source short.
  if (HasNul(source)) return Rejected("the source must not contain NUL bytes");
  return ValidateCompileOptions(options);
}

// Destroys the NVRTC program on every return path.
class Program {
 public:
  Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (program_ != nullptr) nvrtcDestroyProgram(&program_);
  }
  nvrtcProgram* address() { return &program_; }
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

absl::Status NvrtcFailure(absl::string_view call, nvrtcResult result) {
  return absl::InternalError(absl::StrCat(
      "compile: ", call, " failed: ", nvrtcGetErrorString(result)));
}

// NVRTC hands text out with a trailing NUL, binaries without.
absl::StatusOr<std::string> Fetch(nvrtcProgram program, absl::string_view what,
                                  nvrtcResult (*size_of)(nvrtcProgram, size_t*),
                                  nvrtcResult (*copy)(nvrtcProgram, char*),
                                  bool is_text) {
  size_t size = 0;
  if (nvrtcResult result = size_of(program, &size); result != NVRTC_SUCCESS) {
    return NvrtcFailure(absl::StrCat(what, " size"), result);
  }
  std::string bytes(size, '\0');
  if (size > 0) {
    if (nvrtcResult result = copy(program, bytes.data());
        result != NVRTC_SUCCESS) {
      return NvrtcFailure(what, result);
    }
  }
  if (is_text && !bytes.empty() && bytes.back() == '\0') bytes.pop_back();
  return bytes;
}

// Line `number` (1-based) of `text`, or empty when out of range.
absl::string_view LineOf(absl::string_view text, int number) {
  int current = 1;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (current++ == number) return line;
  }
  return {};
}

// "name(12): error: ..." or "name(12): catastrophic error: ..." -> 12.
int FrontEndErrorLine(absl::string_view line, absl::string_view name) {
  int number = 0;
  if (!absl::ConsumePrefix(&line, name) || !absl::ConsumePrefix(&line, "("))
    return 0;
  const size_t close = line.find(')');
  if (close == absl::string_view::npos ||
      !absl::SimpleAtoi(line.substr(0, close), &number)) {
    return 0;
  }
  const absl::string_view rest = line.substr(close);
  return absl::StartsWith(rest, "): error") ||
                 absl::StartsWith(rest, "): catastrophic error")
             ? number
             : 0;
}

// "ptxas application ptx input, line 27; error   : ..." -> 27.
int PtxasErrorLine(absl::string_view line) {
  int number = 0;
  const size_t at = line.find(", line ");
  if (!absl::StartsWith(line, "ptxas") || at == absl::string_view::npos)
    return 0;
  line.remove_prefix(at + 7);
  const size_t semicolon = line.find(';');
  if (semicolon == absl::string_view::npos ||
      !absl::StartsWith(line.substr(semicolon), "; error") ||
      !absl::SimpleAtoi(line.substr(0, semicolon), &number)) {
    return 0;
  }
  return number;
}

// The first error and the line it points at: a source line for front-end
// errors, a PTX line for ptxas errors (in generated code usually inline asm,
// which the PTX holds verbatim).
std::string FirstErrorLocation(absl::string_view log, absl::string_view name,
                               absl::string_view source,
                               absl::string_view ptx) {
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (const int number = FrontEndErrorLine(line, name); number > 0) {
      return absl::StrCat(line, "\n  ", number, " | ", LineOf(source, number));
    }
    if (const int number = PtxasErrorLine(line); number > 0) {
      return absl::StrCat(line, "\n  PTX line ", number, " | ",
                          absl::StripAsciiWhitespace(LineOf(ptx, number)));
    }
  }
  return "";
}

absl::Status CompileError(absl::string_view name, absl::string_view source,
                          const CompileOptions& options, nvrtcProgram program,
                          nvrtcResult result, absl::string_view log) {
  // ptxas errors leave the PTX behind; front-end errors leave none.
  const std::string ptx =
      Fetch(program, "nvrtcGetPTX", nvrtcGetPTXSize, nvrtcGetPTX, true)
          .value_or("");
  const std::string location = FirstErrorLocation(log, name, source, ptx);
  return absl::InvalidArgumentError(absl::StrCat(
      "compile: '", name, "' does not compile for ", options.arch, " (",
      nvrtcGetErrorString(result), ")",
      location.empty() ? "" : absl::StrCat("\nfirst error: ", location),
      "\nfull log:\n", log));
}

}  // namespace

std::vector<std::string> NvrtcArguments(const CompileOptions& options) {
  std::vector<std::string> arguments = {
      absl::StrCat("--gpu-architecture=", options.arch), "-Xptxas=-v",
      "--no-cache"};
  bool picks_standard = false;
  for (const std::string& flag : options.flags) {
    picks_standard = picks_standard || StartsWithAny(flag, {"-std", "--std"});
  }
  if (!picks_standard) arguments.push_back("-std=c++17");
  arguments.insert(arguments.end(), options.flags.begin(), options.flags.end());
  return arguments;
}

absl::Status ValidateCompileOptions(const CompileOptions& options) {
  if (absl::Status arch = ValidateArch(options.arch); !arch.ok()) return arch;
  for (const std::string& flag : options.flags) {
    if (absl::Status valid = ValidateFlag(flag); !valid.ok()) return valid;
  }
  return absl::OkStatus();
}

absl::StatusOr<CompiledModule> CompileCuda(absl::string_view name,
                                           absl::string_view source,
                                           const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (absl::Status valid = ValidateRequest(name, source, options);
      !valid.ok()) {
    return valid;
  }
  const std::string name_text(name);
  const std::string source_text(source);
  Program program;
  if (nvrtcResult result =
          nvrtcCreateProgram(program.address(), source_text.c_str(),
                             name_text.c_str(), 0, nullptr, nullptr);
      result != NVRTC_SUCCESS) {
    return NvrtcFailure("nvrtcCreateProgram", result);
  }
  const std::vector<std::string> arguments = NvrtcArguments(options);
  std::vector<const char*> argv;
  for (const std::string& argument : arguments)
    argv.push_back(argument.c_str());
  const nvrtcResult compiled = nvrtcCompileProgram(
      program.get(), static_cast<int>(argv.size()), argv.data());

  absl::StatusOr<std::string> log =
      Fetch(program.get(), "nvrtcGetProgramLog", nvrtcGetProgramLogSize,
            nvrtcGetProgramLog, true);
  if (!log.ok()) return log.status();
  if (compiled != NVRTC_SUCCESS) {
    return CompileError(name, source, options, program.get(), compiled, *log);
  }
  absl::StatusOr<std::string> ptx =
      Fetch(program.get(), "nvrtcGetPTX", nvrtcGetPTXSize, nvrtcGetPTX, true);
  if (!ptx.ok()) return ptx.status();
  absl::StatusOr<std::string> cubin = Fetch(
      program.get(), "nvrtcGetCUBIN", nvrtcGetCUBINSize, nvrtcGetCUBIN, false);
  if (!cubin.ok()) return cubin.status();

  CompiledModule module;
  module.name = name_text;
  module.cuda_source = source_text;
  module.options = options;
  module.ptx = *std::move(ptx);
  module.cubin = *std::move(cubin);
  PtxasReport report = ParsePtxasReport(*log);
  module.resources = std::move(report.resources);
  module.diagnostics = std::move(report.diagnostics);
  module.log = *std::move(log);
  if (module.cubin.empty() || module.resources.empty()) {
    return Rejected(absl::StrCat("'", name, "' compiled into no kernel (",
                                 module.cubin.size(),
                                 " CUBIN bytes, no entry in ptxas's report) "
                                 "with NVRTC flags '",
                                 absl::StrJoin(options.flags, " "), "'"));
  }
  module.compile_ms = MillisecondsSince(start);
  module.source = CacheSource::kCompiled;
  return module;
}

const std::string& NvrtcVersion() {
  static const std::string* const version = [] {
    int major = 0;
    int minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
      return new std::string("unknown");
    }
    return new std::string(absl::StrCat(major, ".", minor));
  }();
  return *version;
}

}  // namespace ptxgen::compile
