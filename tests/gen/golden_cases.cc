#include "tests/gen/golden_cases.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ptxgen::golden {

std::string GoldenFileName(absl::string_view config_name,
                           absl::string_view form_name) {
  return absl::StrCat(
      absl::StrReplaceAll(config_name, {{" ", "_"}}), ".",
      absl::StrReplaceAll(form_name, {{"->", "_to_"}, {"+", "_"}}), ".cu");
}

namespace {

// "f16" (the plain form of an element) or a form name.
absl::StatusOr<gen::GemmForm> ParseForm(absl::string_view text) {
  if (text.find('.') != absl::string_view::npos)
    return gen::ParseFormName(text);
  absl::StatusOr<ptx::ScalarType> element = ptx::ParseScalarType(text);
  if (!element.ok()) return element.status();
  if (absl::Status status = gen::CheckGemmElement(*element); !status.ok()) {
    return status;
  }
  return gen::PlainForm(*element);
}

}  // namespace

absl::StatusOr<std::vector<GoldenCase>> ParseGoldenConfigs(
    absl::string_view text) {
  std::vector<GoldenCase> cases;
  std::set<std::string> files;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = absl::StrCat(kConfigsFile, ":", number, ": ");
    const size_t space = line.find(' ');
    if (space == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "'", line, "' is not \"<form> <configuration name>\""));
    }
    GoldenCase golden;
    golden.form_name = std::string(line.substr(0, space));
    golden.config_name =
        std::string(absl::StripAsciiWhitespace(line.substr(space + 1)));
    absl::StatusOr<gen::GemmForm> form = ParseForm(golden.form_name);
    if (!form.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, form.status().message()));
    }
    golden.form = *form;
    absl::StatusOr<gen::GemmConfig> config =
        gen::ParseConfigName(golden.config_name);
    if (!config.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, config.status().message()));
    }
    golden.config = *config;
    const std::string canonical = gen::ConfigName(golden.config);
    if (canonical != golden.config_name) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "write '", golden.config_name, "' as '",
                       canonical, "' (its canonical name)"));
    }
    if (absl::Status status =
            gen::ValidateGemmConfig(golden.config, golden.form.element);
        !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, status.message()));
    }
    if (absl::Status status =
            gen::ValidateGemmConfigForForm(golden.config, golden.form);
        !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, status.message()));
    }
    golden.file_name = GoldenFileName(golden.config_name, golden.form_name);
    if (!files.insert(golden.file_name).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, golden.form_name,
                                                     " '", golden.config_name,
                                                     "' is listed twice"));
    }
    cases.push_back(std::move(golden));
  }
  return cases;
}

absl::StatusOr<std::string> GoldenSource(const GoldenCase& golden) {
  absl::StatusOr<gen::GeneratedGemm> generated =
      gen::GenerateGemm(golden.config, golden.form);
  if (!generated.ok()) return generated.status();
  return std::move(generated->source);
}

std::string AttentionGoldenFileName(const gen::AttentionConfig& config) {
  return absl::StrCat(
      "attention_", ptx::PtxName(config.element), "_d", config.head_dim,
      config.causal ? "_causal" : "", config.variable_lengths ? "_varlen" : "",
      "_", config.consumers, "x", gen::kAttentionRowsPerConsumer, "_n",
      config.block_n, "_s", config.stages, config.query_stages > 1 ? "_q2" : "",
      config.ping_pong ? "_pp" : "", ".cu");
}

namespace {

// "<number><suffix>" -> number.
bool ParseCount(absl::string_view text, absl::string_view suffix, int* count) {
  return absl::ConsumeSuffix(&text, suffix) && absl::SimpleAtoi(text, count);
}

}  // namespace

absl::StatusOr<gen::AttentionConfig> ParseAttentionConfigName(
    absl::string_view name) {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("attention config '", name, "': ", why));
  };
  const size_t colon = name.find(": ");
  if (colon == absl::string_view::npos) {
    return refuse("not \"<element> d<head dim>...: <what>, ...\"");
  }
  gen::AttentionConfig config;
  config.ping_pong = false;  // named only when on
  const std::vector<absl::string_view> computed =
      absl::StrSplit(name.substr(0, colon), ' ');
  absl::StatusOr<ptx::ScalarType> element = ptx::ParseScalarType(computed[0]);
  if (!element.ok()) return refuse(element.status().message());
  config.element = *element;
  if (computed.size() < 2 || !absl::StartsWith(computed[1], "d") ||
      !absl::SimpleAtoi(computed[1].substr(1), &config.head_dim)) {
    return refuse("the element is followed by d<head dim>");
  }
  for (size_t i = 2; i < computed.size(); ++i) {
    if (computed[i] == "causal") {
      config.causal = true;
    } else if (computed[i] == "varlen") {
      config.variable_lengths = true;
    } else {
      return refuse(
          absl::StrCat("'", computed[i], "' is not causal or varlen"));
    }
  }
  const std::vector<absl::string_view> how =
      absl::StrSplit(name.substr(colon + 2), ", ");
  // "<consumers>x64 rows": the rows are a consumer's, always 64.
  absl::string_view consumers = how[0];
  if (how.size() < 3 ||
      !absl::ConsumeSuffix(
          &consumers,
          absl::StrCat("x", gen::kAttentionRowsPerConsumer, " rows")) ||
      !absl::SimpleAtoi(consumers, &config.consumers) ||
      !ParseCount(how[1], " keys", &config.block_n) ||
      !ParseCount(how[2], " stages", &config.stages)) {
    return refuse(absl::StrCat("the tiles are \"<consumers>x",
                               gen::kAttentionRowsPerConsumer,
                               " rows, <keys> keys, <stages> stages\""));
  }
  for (size_t i = 3; i < how.size(); ++i) {
    if (how[i] == "ping-pong") {
      config.ping_pong = true;
    } else if (!ParseCount(how[i], " Q stages", &config.query_stages)) {
      return refuse(
          absl::StrCat("'", how[i], "' is not \"<n> Q stages\" or ping-pong"));
    }
  }
  const std::string canonical = gen::AttentionConfigName(config);
  if (canonical != name) {
    return refuse(absl::StrCat("write it as '", canonical,
                               "' (as AttentionConfigName writes it)"));
  }
  return config;
}

absl::StatusOr<std::vector<AttentionGoldenCase>> ParseAttentionGoldens(
    absl::string_view text) {
  std::vector<AttentionGoldenCase> cases;
  std::set<std::string> files;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = absl::StrCat(kAttentionFile, ":", number, ": ");
    absl::StatusOr<gen::AttentionConfig> config =
        ParseAttentionConfigName(line);
    if (!config.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, config.status().message()));
    }
    if (absl::Status status = gen::ValidateAttentionConfig(*config);
        !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, status.message()));
    }
    AttentionGoldenCase golden;
    golden.config_name = std::string(line);
    golden.config = *config;
    golden.file_name = AttentionGoldenFileName(golden.config);
    if (!files.insert(golden.file_name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "'", line, "' is listed twice"));
    }
    cases.push_back(std::move(golden));
  }
  return cases;
}

absl::StatusOr<std::string> AttentionGoldenSource(
    const AttentionGoldenCase& golden) {
  absl::StatusOr<gen::GeneratedAttention> generated =
      gen::GenerateAttention(golden.config);
  if (!generated.ok()) return generated.status();
  return std::move(generated->source);
}

namespace {

struct Line {
  absl::string_view text;
  bool no_newline = false;  // the text's last line, without a '\n' after it
  bool operator==(const Line& other) const {
    return text == other.text && no_newline == other.no_newline;
  }
  bool operator!=(const Line& other) const { return !(*this == other); }
};

std::vector<Line> Lines(absl::string_view text) {
  std::vector<Line> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    lines.push_back({line, false});
  }
  // StrSplit leaves "" after a final '\n' (and for an empty text).
  if (lines.back().text.empty()) {
    lines.pop_back();
  } else {
    lines.back().no_newline = true;
  }
  return lines;
}

std::string Printed(char marker, const Line& line) {
  std::string out(1, marker);
  for (const char c : line.text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) {
      absl::StrAppendFormat(&out, "\\x%02x", u);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\n');
  if (line.no_newline) out += "\\ No newline at end of file\n";
  return out;
}

enum class Op { kEqual, kDelete, kInsert };

struct Edit {
  Op op;
  size_t a;  // index in `expected` of the line (kEqual, kDelete) or before it
  size_t b;  // index in `actual` likewise
};

// The edit script turning a into b: common prefix and suffix, and a longest
// common subsequence of the lines between (when the table stays small).
std::vector<Edit> EditScript(const std::vector<Line>& a,
                             const std::vector<Line>& b) {
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) {
    ++prefix;
  }
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  const size_t n = a.size() - prefix - suffix;
  const size_t m = b.size() - prefix - suffix;

  std::vector<Edit> edits;
  for (size_t i = 0; i < prefix; ++i) edits.push_back({Op::kEqual, i, i});
  constexpr size_t kMaxTable = size_t{1} << 24;
  if (n > 0 && m > 0 && (n + 1) * (m + 1) <= kMaxTable) {
    // lcs[i][j]: the LCS length of a[prefix+i..] and b[prefix+j..].
    std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& {
      return lcs[i * (m + 1) + j];
    };
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        at(i, j) = a[prefix + i] == b[prefix + j]
                       ? at(i + 1, j + 1) + 1
                       : std::max(at(i + 1, j), at(i, j + 1));
      }
    }
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[prefix + i] == b[prefix + j]) {
        edits.push_back({Op::kEqual, prefix + i, prefix + j});
        ++i, ++j;
      } else if (j == m || (i < n && at(i + 1, j) >= at(i, j + 1))) {
        edits.push_back({Op::kDelete, prefix + i, prefix + j});
        ++i;
      } else {
        edits.push_back({Op::kInsert, prefix + i, prefix + j});
        ++j;
      }
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      edits.push_back({Op::kDelete, prefix + i, prefix});
    }
    for (size_t j = 0; j < m; ++j) {
      edits.push_back({Op::kInsert, prefix + n, prefix + j});
    }
  }
  for (size_t k = 0; k < suffix; ++k) {
    edits.push_back({Op::kEqual, prefix + n + k, prefix + m + k});
  }
  return edits;
}

}  // namespace

std::string LineDiff(absl::string_view expected, absl::string_view actual,
                     absl::string_view expected_label,
                     absl::string_view actual_label, int max_changed_lines) {
  if (expected == actual) return "";
  const std::vector<Line> a = Lines(expected);
  const std::vector<Line> b = Lines(actual);
  const std::vector<Edit> edits = EditScript(a, b);
  std::vector<size_t> changes;
  for (size_t k = 0; k < edits.size(); ++k) {
    if (edits[k].op != Op::kEqual) changes.push_back(k);
  }

  constexpr size_t kContext = 2;
  std::string out =
      absl::StrCat("--- ", expected_label, " (", a.size(), " lines)\n+++ ",
                   actual_label, " (", b.size(), " lines)\n");
  int shown = 0;
  size_t c = 0;
  while (c < changes.size() && shown < max_changed_lines) {
    // A hunk: changes closer than two contexts apart share one.
    const size_t begin = changes[c] >= kContext ? changes[c] - kContext : 0;
    size_t last = c;
    while (last + 1 < changes.size() &&
           changes[last + 1] <= changes[last] + 2 * kContext + 1) {
      ++last;
    }
    const size_t end = std::min(edits.size(), changes[last] + kContext + 1);
    size_t a_count = 0, b_count = 0;
    for (size_t k = begin; k < end; ++k) {
      if (edits[k].op != Op::kInsert) ++a_count;
      if (edits[k].op != Op::kDelete) ++b_count;
    }
    const size_t a_start = edits[begin].a + (a_count > 0 ? 1 : 0);
    const size_t b_start = edits[begin].b + (b_count > 0 ? 1 : 0);
    absl::StrAppend(&out, "@@ -", a_start, ",", a_count, " +", b_start, ",",
                    b_count, " @@\n");
    for (size_t k = begin; k < end; ++k) {
      const Edit& edit = edits[k];
      if (edit.op == Op::kEqual) {
        out += Printed(' ', a[edit.a]);
        continue;
      }
      if (shown == max_changed_lines) break;
      ++shown;
      out += edit.op == Op::kDelete ? Printed('-', a[edit.a])
                                    : Printed('+', b[edit.b]);
    }
    c = last + 1;
  }
  if (static_cast<size_t>(shown) < changes.size()) {
    absl::StrAppend(&out, "... ", changes.size() - shown,
                    " more changed lines not shown\n");
  }
  return out;
}

}  // namespace ptxgen::golden
