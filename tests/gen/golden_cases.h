#ifndef PTXGEN_TESTS_GEN_GOLDEN_CASES_H_
#define PTXGEN_TESTS_GEN_GOLDEN_CASES_H_

// The golden GEMM sources of tests/gen/golden/: which configurations they
// are (read from tests/gen/golden/CONFIGS, the one list that golden_test
// and golden_writer share), what each file is called, the text it must
// hold, and a short line diff for when it does not.

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::golden {

// The list, relative to the workspace root (and to a test's runfiles root).
inline constexpr char kGoldenDirectory[] = "tests/gen/golden";
inline constexpr char kConfigsFile[] = "tests/gen/golden/CONFIGS";

// How to regenerate the files after an intended change of generated text.
inline constexpr char kUpdateCommand[] = "bash tools/update_golden.sh";

struct GoldenCase {
  std::string config_name;  // canonical: gen::ConfigName of the parsed name
  // "f16", "bf16" (the plain form of that element) or a gen::FormName
  // ("bf16.mk->f32+bias_n.f32+gelu").
  std::string form_name;
  gen::GemmConfig config;
  gen::GemmForm form;
  std::string file_name;  // e.g. "v1_128x128x64.f16.cu"
};

// For GoogleTest's messages: "f16 'v1 128x128x64'".
inline void PrintTo(const GoldenCase& golden, std::ostream* out) {
  *out << golden.form_name << " '" << golden.config_name << "'";
}

// "ws 128x256x64 s3 c2 w1 m1 tma g16 persistent", "bf16" ->
// "ws_128x256x64_s3_c2_w1_m1_tma_g16_persistent.bf16.cu"; a form name is
// written with "->" as "_to_" and "+" as "_" ("f16.mm_to_f16_c").
std::string GoldenFileName(absl::string_view config_name,
                           absl::string_view form_name);

// Parses CONFIGS: one case a line, "<form> <configuration name>" (e.g.
// "f16 v1 128x128x64", "f16.km->f32+gelu ws 128x128x64 ..."); blank lines
// and lines starting with '#' are skipped. Refuses (naming the line) an
// unknown element or form, a name that ParseConfigName refuses or that is
// not written canonically (ConfigName of the parsed name), a configuration
// that ValidateGemmConfig or ValidateGemmConfigForForm refuses, and a case
// given twice.
absl::StatusOr<std::vector<GoldenCase>> ParseGoldenConfigs(
    absl::string_view text);

// The text the case's golden file holds: GenerateGemm(...).source.
absl::StatusOr<std::string> GoldenSource(const GoldenCase& golden);

// A unified-style diff of `expected` against `actual`, line by line: hunks
// headed "@@ -line,count +line,count @@" with two lines of context, '-' for
// lines only in `expected`, '+' for lines only in `actual`, stopping after
// `max_changed_lines` changed lines. Control characters other than tab are
// shown as \xNN. "" when the texts are equal.
std::string LineDiff(absl::string_view expected, absl::string_view actual,
                     absl::string_view expected_label,
                     absl::string_view actual_label,
                     int max_changed_lines = 20);

}  // namespace ptxgen::golden

#endif  // PTXGEN_TESTS_GEN_GOLDEN_CASES_H_
