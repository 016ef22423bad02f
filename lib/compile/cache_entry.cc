#include "lib/compile/cache_entry.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ptxgen/compile/sha256.h"

namespace ptxgen::compile {
namespace {

constexpr size_t kChecksumBytes = 32;

void AppendField(absl::string_view field, std::string& out) {
  uint64_t size = field.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(size >> (8 * i)));
  out.append(field.data(), field.size());
}

// Takes one length-prefixed field off the front of `bytes`.
bool TakeField(absl::string_view& bytes, std::string& field) {
  if (bytes.size() < 8) return false;
  uint64_t size = 0;
  for (int i = 0; i < 8; ++i) {
    size |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  }
  bytes.remove_prefix(8);
  if (size > bytes.size()) return false;
  field = std::string(bytes.substr(0, size));
  bytes.remove_prefix(size);
  return true;
}

}  // namespace

std::string EncodeCacheEntry(const CacheEntry& entry) {
  std::string out(kCacheEntryMagic);
  for (const std::string* field : {&entry.key, &entry.name, &entry.source,
                                   &entry.ptx, &entry.cubin, &entry.log}) {
    AppendField(*field, out);
  }
  const Sha256Digest checksum = Sha256(out);
  out.append(reinterpret_cast<const char*>(checksum.data()), checksum.size());
  return out;
}

absl::StatusOr<CacheEntry> DecodeCacheEntry(absl::string_view bytes) {
  // A file cut inside the magic line is truncated; one that disagrees with
  // it is someone else's.
  if (!absl::StartsWith(kCacheEntryMagic,
                        bytes.substr(0, kCacheEntryMagic.size()))) {
    return absl::DataLossError(
        "not a ptxgen kernel cache entry (foreign file)");
  }
  if (bytes.size() < kCacheEntryMagic.size() + kChecksumBytes) {
    return absl::DataLossError("truncated: shorter than an empty entry");
  }
  const absl::string_view body = bytes.substr(0, bytes.size() - kChecksumBytes);
  const Sha256Digest expected = Sha256(body);
  if (std::memcmp(expected.data(), bytes.data() + body.size(),
                  kChecksumBytes) != 0) {
    return absl::DataLossError("checksum mismatch (truncated or corrupt)");
  }
  absl::string_view fields = body.substr(kCacheEntryMagic.size());
  CacheEntry entry;
  for (std::string* field : {&entry.key, &entry.name, &entry.source, &entry.ptx,
                             &entry.cubin, &entry.log}) {
    if (!TakeField(fields, *field)) {
      return absl::DataLossError("malformed: a field runs past the end");
    }
  }
  if (!fields.empty())
    return absl::DataLossError("malformed: bytes after the last field");
  return entry;
}

}  // namespace ptxgen::compile
