#ifndef PTXGEN_COMPILE_PTXAS_REPORT_H_
#define PTXGEN_COMPILE_PTXAS_REPORT_H_

// Reads the compile log NVRTC returns (front-end messages followed by
// ptxas -v output) into structured resources and diagnostics, so that callers
// and tests check numbers and codes instead of grepping text.

#include <vector>

#include "absl/strings/string_view.h"
#include "ptxgen/compile/compiler.h"

namespace ptxgen::compile {

// What ptxas said about a module: resources per kernel and its warnings.
struct PtxasReport {
  // One per entry function, in log order. Device functions that ptxas kept
  // separate are not kernels and are not listed.
  std::vector<KernelResources> resources;
  // Every warning and every ptxas info line that carries a (Cnnnn) code,
  // in log order.
  std::vector<CompilerDiagnostic> diagnostics;
  // ptxas's own time for the module: the sum of its "Compile time = X ms"
  // lines (the rest of a cold compile is the NVRTC front end).
  double ptxas_milliseconds = 0;
};

// Never fails: lines it does not recognise are skipped, and a kernel whose
// lines are missing keeps zeros.
PtxasReport ParsePtxasReport(absl::string_view log);

// The kind of a diagnostic's log line, read from ptxas's phrase rather than
// its code: ptxas renumbers these between releases (13.0 reports
// serialized wgmma as C7509, C7511 or C7520 and an ignored setmaxnreg as
// C7504, C7505 or C7508), while its phrases stay.
CompilerDiagnostic::Kind DiagnosticKind(absl::string_view line);

}  // namespace ptxgen::compile

#endif  // PTXGEN_COMPILE_PTXAS_REPORT_H_
