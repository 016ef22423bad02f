#ifndef PTXGEN_TESTS_GEN_GOLDEN_CASES_H_
#define PTXGEN_TESTS_GEN_GOLDEN_CASES_H_

// The golden generated sources of tests/gen/golden/: which configurations
// they are (GEMMs read from tests/gen/golden/CONFIGS, attention kernels
// from tests/gen/golden/ATTENTION, the lists that golden_test and
// golden_writer share), what each file is called, the text it must hold,
// and a short line diff for when it does not.

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/gen/attention.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/scalar_type.h"

namespace ptxgen::golden {

// The lists, relative to the workspace root (and to a test's runfiles root).
inline constexpr char kGoldenDirectory[] = "tests/gen/golden";
inline constexpr char kConfigsFile[] = "tests/gen/golden/CONFIGS";
inline constexpr char kAttentionFile[] = "tests/gen/golden/ATTENTION";

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

struct AttentionGoldenCase {
  std::string config_name;  // as gen::AttentionConfigName writes it
  gen::AttentionConfig config;
  std::string file_name;  // e.g. "attention_bf16_d64_3x64_n128_s2_q2.cu"
};

// For GoogleTest's messages: "attention 'bf16 d64: 3x64 rows, ...'".
inline void PrintTo(const AttentionGoldenCase& golden, std::ostream* out) {
  *out << "attention '" << golden.config_name << "'";
}

// "attention_", the generated kernel's name after "ptxgen_attention_"
// (element, head dim, mask, lengths, consumers x 64 rows, keys, stages, Q
// stages, ping-pong), ".cu":
// "attention_bf16_d128_causal_2x64_n192_s2_pp.cu".
std::string AttentionGoldenFileName(const gen::AttentionConfig& config);

// Parses exactly what gen::AttentionConfigName writes ("bf16 d128 causal
// varlen: 2x64 rows, 128 keys, 2 stages, 2 Q stages, ping-pong"): refuses
// text that does not parse, and text that parses but is not how
// AttentionConfigName writes the result (another order or spacing, "1 Q
// stages"). The rules of ValidateAttentionConfig are not checked here.
absl::StatusOr<gen::AttentionConfig> ParseAttentionConfigName(
    absl::string_view name);

// Parses ATTENTION: one case a line, a configuration name as
// gen::AttentionConfigName writes it; blank lines and lines starting with
// '#' are skipped. Refuses (naming the line) a name ParseAttentionConfigName
// refuses, a configuration ValidateAttentionConfig refuses, and a case
// given twice.
absl::StatusOr<std::vector<AttentionGoldenCase>> ParseAttentionGoldens(
    absl::string_view text);

// The text the case's golden file holds: GenerateAttention(...).source.
absl::StatusOr<std::string> AttentionGoldenSource(
    const AttentionGoldenCase& golden);

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
