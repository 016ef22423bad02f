#ifndef PTXGEN_LIB_COMPILE_CACHE_ENTRY_H_
#define PTXGEN_LIB_COMPILE_CACHE_ENTRY_H_

// The on-disk form of one kernel-cache entry (private to //lib/compile).
//
// Layout: the magic line "PTXGEN-KERNEL-CACHE-1\n"; then key, name, source,
// PTX, CUBIN and log, each as an 8-byte little-endian length and its bytes;
// then the SHA-256 of everything before it. Resources and diagnostics are
// parsed again from the stored log, so they cannot disagree with it.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::compile {

// The first bytes of every entry, checked before the rest is read.
inline constexpr absl::string_view kCacheEntryMagic = "PTXGEN-KERNEL-CACHE-1\n";

// The most an entry may hold: real ones take 100-300 KB; a larger file is
// refused before it is read.
inline constexpr int64_t kMaxCacheEntryBytes = int64_t{8} << 20;

struct CacheEntry {
  std::string key;
  std::string name;
  std::string source;
  std::string ptx;
  std::string cubin;
  std::string log;
};

std::string EncodeCacheEntry(const CacheEntry& entry);

// DataLoss naming what is wrong when `bytes` is not a whole, intact entry.
absl::StatusOr<CacheEntry> DecodeCacheEntry(absl::string_view bytes);

}  // namespace ptxgen::compile

#endif  // PTXGEN_LIB_COMPILE_CACHE_ENTRY_H_
