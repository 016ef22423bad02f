// Kernel-cache entries (lib/compile/cache_entry.h), what the disk cache reads
// back from files anyone may have written. The first byte picks the mode:
//   'r' the rest is a whole file: DecodeCacheEntry, and an accepted file
//       must encode back to exactly its bytes;
//   'b' the rest is the body after the magic line: the fuzzer cannot forge
//       SHA-256, so the target appends a valid checksum and the field parser
//       gets to see arbitrary lengths; accepted bodies re-encode identically;
//   'f' (or anything else) the rest holds the six fields, one per line (the
//       last takes the remaining lines): encode -> decode is the identity,
//       and every truncation and any single changed byte is refused.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "fuzz/fuzz_support.h"
#include "lib/compile/cache_entry.h"
#include "ptxgen/compile/sha256.h"

namespace {

namespace compile = ptxgen::compile;

constexpr absl::string_view kMagic = "PTXGEN-KERNEL-CACHE-1\n";

bool SameEntry(const compile::CacheEntry& a, const compile::CacheEntry& b) {
  return a.key == b.key && a.name == b.name && a.source == b.source &&
         a.ptx == b.ptx && a.cubin == b.cubin && a.log == b.log;
}

void CheckReencodes(absl::string_view file) {
  const absl::StatusOr<compile::CacheEntry> entry =
      compile::DecodeCacheEntry(file);
  if (!entry.ok()) {
    FUZZ_CHECK(entry.status().code() == absl::StatusCode::kDataLoss,
               "a refusal that is not DataLoss: ", entry.status().ToString());
    return;
  }
  FUZZ_CHECK(compile::EncodeCacheEntry(*entry) == file, "an accepted file of ",
             file.size(), " bytes encodes differently");
}

void CheckBody(absl::string_view body) {
  std::string file = absl::StrCat(kMagic, body);
  const compile::Sha256Digest checksum = compile::Sha256(file);
  file.append(reinterpret_cast<const char*>(checksum.data()), checksum.size());
  CheckReencodes(file);
}

void CheckFields(absl::string_view text) {
  const std::vector<absl::string_view> lines =
      absl::StrSplit(text, absl::MaxSplits('\n', 5));
  compile::CacheEntry entry;
  std::string* fields[] = {&entry.key, &entry.name,  &entry.source,
                           &entry.ptx, &entry.cubin, &entry.log};
  for (size_t i = 0; i < lines.size() && i < 6; ++i)
    *fields[i] = std::string(lines[i]);
  const std::string file = compile::EncodeCacheEntry(entry);
  const absl::StatusOr<compile::CacheEntry> decoded =
      compile::DecodeCacheEntry(file);
  FUZZ_CHECK(decoded.ok(),
             "an encoded entry is refused: ", decoded.status().message());
  FUZZ_CHECK(SameEntry(*decoded, entry), "encode -> decode changed the entry");
  // A deterministic choice of cut and changed byte from the input.
  const size_t where = compile::Sha256(text)[0] | compile::Sha256(text)[1] << 8;
  for (size_t cut : {file.size() - 1, where % file.size(), size_t{0}}) {
    const absl::StatusOr<compile::CacheEntry> truncated =
        compile::DecodeCacheEntry(absl::string_view(file).substr(0, cut));
    FUZZ_CHECK(!truncated.ok(), "the entry cut to ", cut, " of ", file.size(),
               " bytes is accepted");
  }
  std::string changed = file;
  changed[where % changed.size()] ^= static_cast<char>(1 + (where >> 8) % 255);
  FUZZ_CHECK(!compile::DecodeCacheEntry(changed).ok(), "byte ",
             where % changed.size(), " of ", changed.size(),
             " changed is accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view rest = ptxgen::fuzz::AsText(data + 1, size - 1);
  switch (data[0]) {
    case 'r':
      CheckReencodes(rest);
      break;
    case 'b':
      CheckBody(rest);
      break;
    default:
      CheckFields(rest);
  }
  return 0;
}
