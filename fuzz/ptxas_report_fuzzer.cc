// The compile-log parser (compile::ParsePtxasReport), which reads whatever
// NVRTC and ptxas print, and logs read back from the disk cache. It never
// fails. Invariants: counts are never negative; every diagnostic's kind
// follows from ptxas's phrase in its message (not its code, which ptxas
// renumbers) and its message is one whole line of the log; the
// same log with CRLF line ends gives the same report; parsing is
// deterministic.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "fuzz/fuzz_support.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/ptxas_report.h"

namespace {

namespace compile = ptxgen::compile;
bool SameReport(const compile::PtxasReport& a, const compile::PtxasReport& b) {
  if (a.resources.size() != b.resources.size() ||
      a.diagnostics.size() != b.diagnostics.size()) {
    return false;
  }
  for (size_t i = 0; i < a.resources.size(); ++i) {
    const compile::KernelResources& x = a.resources[i];
    const compile::KernelResources& y = b.resources[i];
    if (x.kernel != y.kernel || x.registers != y.registers ||
        x.static_shared_bytes != y.static_shared_bytes ||
        x.stack_frame_bytes != y.stack_frame_bytes ||
        x.spill_store_bytes != y.spill_store_bytes ||
        x.spill_load_bytes != y.spill_load_bytes) {
      return false;
    }
  }
  for (size_t i = 0; i < a.diagnostics.size(); ++i) {
    const compile::CompilerDiagnostic& x = a.diagnostics[i];
    const compile::CompilerDiagnostic& y = b.diagnostics[i];
    if (x.kind != y.kind || x.code != y.code || x.kernel != y.kernel ||
        x.message != y.message) {
      return false;
    }
  }
  // NaN (a log may say "Compile time = nan ms") equals itself here.
  return a.ptxas_milliseconds == b.ptxas_milliseconds ||
         (a.ptxas_milliseconds != a.ptxas_milliseconds &&
          b.ptxas_milliseconds != b.ptxas_milliseconds);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view log = ptxgen::fuzz::AsText(data, size);
  const compile::PtxasReport report = compile::ParsePtxasReport(log);
  for (const compile::KernelResources& kernel : report.resources) {
    FUZZ_CHECK(kernel.registers >= 0 && kernel.static_shared_bytes >= 0 &&
                   kernel.stack_frame_bytes >= 0 &&
                   kernel.spill_store_bytes >= 0 &&
                   kernel.spill_load_bytes >= 0,
               "negative resources for '", kernel.kernel, "'");
    FUZZ_CHECK(!absl::StrContains(kernel.kernel, '\'') &&
                   !absl::StrContains(kernel.kernel, '\n'),
               "kernel name '", kernel.kernel, "' runs past its quotes");
  }
  for (const compile::CompilerDiagnostic& diagnostic : report.diagnostics) {
    FUZZ_CHECK(diagnostic.kind == compile::DiagnosticKind(diagnostic.message),
               "message '", diagnostic.message, "' with the wrong kind");
    FUZZ_CHECK(!diagnostic.message.empty() &&
                   !absl::StrContains(diagnostic.message, '\n') &&
                   absl::StrContains(log, diagnostic.message),
               "diagnostic message '", diagnostic.message,
               "' is not a log line");
    FUZZ_CHECK(!absl::StrContains(diagnostic.kernel, '\'') &&
                   !absl::StrContains(diagnostic.kernel, '\n'),
               "diagnostic kernel '", diagnostic.kernel, "'");
  }
  FUZZ_CHECK(SameReport(report, compile::ParsePtxasReport(log)),
             "two parses of one log differ");
  if (!absl::StrContains(log, '\r')) {
    const std::string crlf = absl::StrReplaceAll(log, {{"\n", "\r\n"}});
    FUZZ_CHECK(SameReport(report, compile::ParsePtxasReport(crlf)),
               "CRLF line ends change the report");
  }
  return 0;
}
