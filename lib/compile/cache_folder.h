#ifndef PTXGEN_LIB_COMPILE_CACHE_FOLDER_H_
#define PTXGEN_LIB_COMPILE_CACHE_FOLDER_H_

// How entries lie in a cache folder (private to lib/compile): shared by
// lookups, the size cap and `ptxgen cache`.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ptxgen/compile/files.h"
#include "ptxgen/compile/kernel_cache.h"

namespace ptxgen::compile {

// The name of `key`'s entry inside a cache folder: "<key>.kernel".
std::string EntryName(absl::string_view key);

// The key an entry's file name holds; nothing for any other file
// (temporaries, whatever else lies there).
std::optional<std::string> KeyOfEntryName(absl::string_view file);

// Deletes the temporaries that entry writers which died left in `folder`
// (TrustedFolder::RemoveStaleTemporaries, for entry names alone); returns
// those it deleted.
std::vector<CacheEntryFile> RemoveStaleEntryTemporaries(
    const TrustedFolder& folder);

// The entry files of `folder`, least recently used first.
absl::StatusOr<std::vector<CacheEntryFile>> EntryFiles(
    const TrustedFolder& folder);

// Removes the least recently used entries of `folder`, never the one
// named `keep`, until the rest hold at most `max_bytes`; returns those it
// removed.
std::vector<CacheEntryFile> RemoveLeastRecentlyUsed(const TrustedFolder& folder,
                                                    int64_t max_bytes,
                                                    absl::string_view keep);

}  // namespace ptxgen::compile

#endif  // PTXGEN_LIB_COMPILE_CACHE_FOLDER_H_
