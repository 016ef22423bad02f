#ifndef PTXGEN_LIB_GEMM_AUTOTUNE_RECORD_H_
#define PTXGEN_LIB_GEMM_AUTOTUNE_RECORD_H_

// The autotuner's remembered choices as files: one JSON object each, named
// by its key, in the autotune/ folder of a cache folder (the writable one,
// or a bundle's). A record says which device and ptxgen made it, so that
// records can be read, compared and merged (copying files) by people.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::gemm {

// How every record starts: its schema, also the magic the trusted read
// checks (compile::TrustedFolder::ReadFile).
inline constexpr char kAutotuneRecordStart[] =
    "{\"schema\":\"ptxgen-autotune 2\"";

struct AutotuneRecord {
  std::string key;  // the hash of everything that decides the choice
  gen::GemmConfig config;
  // Notes for people, not read back: what was tuned, where, by which ptxgen.
  std::string problem;
  std::string device;
  std::string ptxgen;
  double milliseconds = 0;  // the choice's median time
};

// The record's file: one line of JSON starting with kAutotuneRecordStart.
std::string AutotuneRecordText(const AutotuneRecord& record);

// The configuration `text` records for `key`, when it is one of
// `candidates`; DataLoss saying why not otherwise (not JSON of this schema,
// another key, a configuration that is no candidate).
absl::StatusOr<gen::GemmConfig> ParseAutotuneRecord(
    absl::string_view text, absl::string_view key,
    const std::vector<gen::GemmConfig>& candidates);

}  // namespace ptxgen::gemm

#endif  // PTXGEN_LIB_GEMM_AUTOTUNE_RECORD_H_
