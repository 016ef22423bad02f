#include "ptxgen/compile/ptxas_report.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ptxgen::compile {
namespace {

// The lines ptxas -v writes start "ptxas info    : ", "ptxas warning : "
// or, for a function's stack and spill line, "ptxas         .     ".
enum class PtxasLine { kInfo, kWarning, kProperties, kNotPtxas };

PtxasLine ClassifyPtxasLine(absl::string_view line, absl::string_view* body) {
  if (!absl::ConsumePrefix(&line, "ptxas")) return PtxasLine::kNotPtxas;
  line = absl::StripLeadingAsciiWhitespace(line);
  PtxasLine kind = PtxasLine::kNotPtxas;
  if (absl::ConsumePrefix(&line, "info")) {
    kind = PtxasLine::kInfo;
  } else if (absl::ConsumePrefix(&line, "warning")) {
    kind = PtxasLine::kWarning;
  } else if (absl::ConsumePrefix(&line, ".")) {
    *body = absl::StripAsciiWhitespace(line);
    return PtxasLine::kProperties;
  }
  line = absl::StripLeadingAsciiWhitespace(line);
  if (kind == PtxasLine::kNotPtxas || !absl::ConsumePrefix(&line, ":")) {
    return PtxasLine::kNotPtxas;
  }
  *body = absl::StripAsciiWhitespace(line);
  return kind;
}

// The text between `open` and the next `close`, or empty.
absl::string_view Between(absl::string_view text, absl::string_view open,
                          char close) {
  const size_t start = text.find(open);
  if (start == absl::string_view::npos) return {};
  text.remove_prefix(start + open.size());
  const size_t end = text.find(close);
  return end == absl::string_view::npos ? absl::string_view()
                                        : text.substr(0, end);
}

// "(C7511)" -> "C7511"; empty when the line carries no ptxas code.
std::string PtxasCode(absl::string_view body) {
  const absl::string_view code = Between(body, "(C", ')');
  int number = 0;
  if (code.empty() || !absl::SimpleAtoi(code, &number)) return "";
  return absl::StrCat("C", code);
}

CompilerDiagnostic Diagnostic(absl::string_view line, std::string code) {
  CompilerDiagnostic diagnostic;
  diagnostic.kind = DiagnosticKind(line);
  diagnostic.code = std::move(code);
  diagnostic.kernel = std::string(Between(line, "function '", '\''));
  diagnostic.message = std::string(line);
  return diagnostic;
}

// NVRTC's own warnings: "name(3): warning #177-D: ..." from the front end
// and "nvrtc: warning: ..." about options. Quoted source lines below a
// front-end message are indented, so they never match.
bool IsNvrtcWarning(absl::string_view line, std::string* code) {
  if (line.empty() || absl::ascii_isspace(line[0])) return false;
  if (absl::StartsWith(line, "nvrtc: warning")) return true;
  if (!absl::StrContains(line, "): warning")) return false;
  *code = std::string(Between(line, "warning #", ':'));
  return true;
}

struct Count {
  absl::string_view unit;
  int KernelResources::*field;
};

constexpr Count kCounts[] = {
    {"registers", &KernelResources::registers},
    {"bytes smem", &KernelResources::static_shared_bytes},
    {"bytes stack frame", &KernelResources::stack_frame_bytes},
    {"bytes spill stores", &KernelResources::spill_store_bytes},
    {"bytes spill loads", &KernelResources::spill_load_bytes},
};

// Applies "Used 10 registers, used 1 barriers, 1024 bytes smem" or
// "0 bytes stack frame, 0 bytes spill stores, ..." to `kernel`; items it
// does not track (barriers, cmem, cumulative stack) are skipped.
void ApplyCounts(absl::string_view body, KernelResources& kernel) {
  for (absl::string_view item : absl::StrSplit(body, ',')) {
    item = absl::StripAsciiWhitespace(item);
    absl::ConsumePrefix(&item, "Used ");
    const size_t digits = item.find_first_not_of("0123456789");
    int value = 0;
    if (digits == absl::string_view::npos ||
        !absl::SimpleAtoi(item.substr(0, digits), &value)) {
      continue;
    }
    const absl::string_view unit =
        absl::StripAsciiWhitespace(item.substr(digits));
    for (const Count& count : kCounts) {
      if (unit == count.unit) kernel.*count.field = value;
    }
  }
}

}  // namespace

CompilerDiagnostic::Kind DiagnosticKind(absl::string_view line) {
  if (absl::StrContains(line, "wgmma.mma_async instructions are serialized")) {
    return CompilerDiagnostic::Kind::kWgmmaSerialized;
  }
  if (absl::StrContains(line, "is injected in around line")) {
    return CompilerDiagnostic::Kind::kInjectedWait;
  }
  if (absl::StrContains(line, "'setmaxnreg' ignored")) {
    return CompilerDiagnostic::Kind::kSetmaxnregIgnored;
  }
  return CompilerDiagnostic::Kind::kOtherWarning;
}

PtxasReport ParsePtxasReport(absl::string_view log) {
  PtxasReport report;
  // ptxas reports an entry as "Compiling entry function 'k'", then
  // "Function properties for k" and its stack line, then "Used ..."; the
  // properties of device functions it kept separate follow the same way
  // but belong to no kernel.
  std::string properties_of;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    absl::string_view body;
    const PtxasLine kind = ClassifyPtxasLine(line, &body);
    std::string code;
    if (kind == PtxasLine::kNotPtxas) {
      if (IsNvrtcWarning(line, &code)) {
        report.diagnostics.push_back(Diagnostic(line, std::move(code)));
      }
      continue;
    }
    code = PtxasCode(body);
    if (kind == PtxasLine::kWarning || !code.empty()) {
      report.diagnostics.push_back(Diagnostic(line, std::move(code)));
    } else if (absl::ConsumePrefix(&body, "Compiling entry function '")) {
      KernelResources kernel;
      kernel.kernel = std::string(body.substr(0, body.find('\'')));
      report.resources.push_back(std::move(kernel));
    } else if (absl::ConsumePrefix(&body, "Function properties for ")) {
      properties_of = std::string(body);
    } else if (absl::ConsumePrefix(&body, "Compile time = ")) {
      double milliseconds = 0;
      if (absl::ConsumeSuffix(&body, " ms") &&
          absl::SimpleAtod(body, &milliseconds)) {
        report.ptxas_milliseconds += milliseconds;
      }
    } else if (report.resources.empty()) {
      continue;
    } else if (kind == PtxasLine::kProperties) {
      if (properties_of == report.resources.back().kernel) {
        ApplyCounts(body, report.resources.back());
      }
    } else if (absl::StartsWith(body, "Used ")) {
      ApplyCounts(body, report.resources.back());
    }
  }
  return report;
}

}  // namespace ptxgen::compile
