#include "lib/gemm/autotune_record.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ptxgen/base/flat_json.h"
#include "ptxgen/compile/inspect.h"

namespace ptxgen::gemm {

std::string AutotuneRecordText(const AutotuneRecord& record) {
  using compile::JsonString;
  return absl::StrCat(
      kAutotuneRecordStart, ",\"key\":", JsonString(record.key),
      ",\"config\":", JsonString(gen::ConfigName(record.config)),
      ",\"problem\":", JsonString(record.problem),
      ",\"device\":", JsonString(record.device),
      ",\"ptxgen\":", JsonString(record.ptxgen),
      ",\"milliseconds\":", absl::StrFormat("%.6f", record.milliseconds),
      "}\n");
}

absl::StatusOr<gen::GemmConfig> ParseAutotuneRecord(
    absl::string_view text, absl::string_view key,
    const std::vector<gen::GemmConfig>& candidates) {
  absl::StatusOr<std::map<std::string, std::string>> fields =
      base::ParseFlatJsonObject(text);
  if (!fields.ok()) return absl::DataLossError(fields.status().message());
  const auto field = [&](const char* name) {
    const auto it = fields->find(name);
    return it == fields->end() ? std::string() : it->second;
  };
  if (!absl::StartsWith(text, kAutotuneRecordStart)) {
    return absl::DataLossError(
        "is not an autotune record of schema 'ptxgen-autotune 2'");
  }
  if (field("key") != key) {
    return absl::DataLossError("is not a record for this problem and device");
  }
  absl::StatusOr<gen::GemmConfig> config =
      gen::ParseConfigName(field("config"));
  if (!config.ok() || std::find(candidates.begin(), candidates.end(),
                                *config) == candidates.end()) {
    return absl::DataLossError("names no candidate configuration");
  }
  return *config;
}

}  // namespace ptxgen::gemm
