// Entry files of cache folders: listing, the size cap, and the maintenance
// that `ptxgen cache` runs (KernelCache::Contents, Verify, Prune, Clear).
#include "lib/compile/cache_folder.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/compile/cache_entry.h"
#include "ptxgen/base/printable.h"
#include "ptxgen/compile/sha256.h"

namespace ptxgen::compile {
namespace {

constexpr absl::string_view kEntrySuffix = ".kernel";

bool IsEntryName(absl::string_view file) {
  return KeyOfEntryName(file).has_value();
}

CacheEntryFile EntryFileOf(const TrustedFolder& folder, FolderFile file) {
  return {folder.path(), std::move(file.name), file.bytes,
          absl::FromUnixNanos(file.modified_ns)};
}

int64_t TotalBytes(const std::vector<CacheEntryFile>& entries) {
  int64_t total = 0;
  for (const CacheEntryFile& entry : entries) total += entry.bytes;
  return total;
}

absl::Status CheckDiskOn(const CacheConfig& config) {
  if (config.disk_enabled) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "the disk cache is off (PTXGEN_CACHE_DISABLE, or no absolute folder "
      "named by PTXGEN_CACHE_DIR, XDG_CACHE_HOME or HOME)");
}

// Removing is for the folder the environment named, never a stand-in for
// a variable that was refused.
absl::Status CheckNamedFolder(const CacheConfig& config) {
  if (config.refused_variable.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      config.refused_variable,
      " is set but refused (not an absolute path), so nothing is removed "
      "from ",
      base::PrintableValue(config.directory),
      ", the folder used in its place: set ", config.refused_variable,
      " to an absolute path, or unset it"));
}

// The entries of the writable folder, least recently used first (none when
// the folder is not there yet), and the folder, for removing some.
absl::StatusOr<std::pair<TrustedFolder, std::vector<CacheEntryFile>>>
WritableEntries(const CacheConfig& config) {
  if (absl::Status on = CheckDiskOn(config); !on.ok()) return on;
  if (absl::Status named = CheckNamedFolder(config); !named.ok()) return named;
  absl::StatusOr<TrustedFolder> folder =
      TrustedFolder::Open(config.directory, /*create=*/false);
  if (!folder.ok()) return folder.status();
  absl::StatusOr<std::vector<CacheEntryFile>> entries = EntryFiles(*folder);
  if (!entries.ok()) return entries.status();
  return std::make_pair(*std::move(folder), *std::move(entries));
}

// Removes `entries` from `folder`; those it could not remove stay out of
// the result.
std::vector<CacheEntryFile> RemoveEntries(const TrustedFolder& folder,
                                          std::vector<CacheEntryFile> entries) {
  std::vector<CacheEntryFile> removed;
  for (CacheEntryFile& entry : entries) {
    if (folder.RemoveFile(entry.file).ok()) removed.push_back(std::move(entry));
  }
  return removed;
}

CacheFolderContents ContentsOf(const std::string& path, bool writable) {
  CacheFolderContents contents;
  contents.path = path;
  contents.writable = writable;
  absl::StatusOr<TrustedFolder> folder =
      TrustedFolder::Open(path, /*create=*/false);
  absl::StatusOr<std::vector<CacheEntryFile>> entries =
      folder.ok() ? EntryFiles(*folder) : folder.status();
  if (entries.ok()) {
    contents.entries = *std::move(entries);
  } else {
    contents.usable = entries.status();
  }
  return contents;
}

}  // namespace

std::string EntryName(absl::string_view key) {
  return absl::StrCat(key, kEntrySuffix);
}

std::optional<std::string> KeyOfEntryName(absl::string_view file) {
  if (!absl::ConsumeSuffix(&file, kEntrySuffix) || !IsSha256Hex(file))
    return std::nullopt;
  return std::string(file);
}

std::vector<CacheEntryFile> RemoveStaleEntryTemporaries(
    const TrustedFolder& folder) {
  std::vector<CacheEntryFile> removed;
  for (FolderFile& file :
       folder.RemoveStaleTemporaries(kStaleTemporarySeconds, IsEntryName)) {
    removed.push_back(EntryFileOf(folder, std::move(file)));
  }
  return removed;
}

absl::StatusOr<std::vector<CacheEntryFile>> EntryFiles(
    const TrustedFolder& folder) {
  absl::StatusOr<std::vector<FolderFile>> files = folder.ListFiles();
  if (!files.ok()) return files.status();
  std::vector<CacheEntryFile> entries;
  for (FolderFile& file : *files) {
    if (IsEntryName(file.name)) {
      entries.push_back(EntryFileOf(folder, std::move(file)));
    }
  }
  // Ties (one clock tick) broken by name, so the order is the same each time.
  std::sort(entries.begin(), entries.end(),
            [](const CacheEntryFile& a, const CacheEntryFile& b) {
              return std::tie(a.last_use, a.file) <
                     std::tie(b.last_use, b.file);
            });
  return entries;
}

std::vector<CacheEntryFile> RemoveLeastRecentlyUsed(const TrustedFolder& folder,
                                                    int64_t max_bytes,
                                                    absl::string_view keep) {
  absl::StatusOr<std::vector<CacheEntryFile>> entries = EntryFiles(folder);
  if (!entries.ok()) return {};
  int64_t total = TotalBytes(*entries);
  std::vector<CacheEntryFile> oldest;
  for (CacheEntryFile& entry : *entries) {
    if (total <= max_bytes) break;
    if (entry.file == keep) continue;
    total -= entry.bytes;
    oldest.push_back(std::move(entry));
  }
  return RemoveEntries(folder, std::move(oldest));
}

absl::StatusOr<std::vector<CacheFolderContents>> KernelCache::Contents() {
  Warn(ConfigurationWarnings());
  if (absl::Status on = CheckDiskOn(config_); !on.ok()) return on;
  std::vector<CacheFolderContents> folders = {
      ContentsOf(config_.directory, true)};
  for (const std::string& path : config_.read_only_directories) {
    folders.push_back(ContentsOf(path, false));
  }
  return folders;
}

absl::StatusOr<std::string> KernelCache::Verify(
    const CacheEntryFile& entry) const {
  const std::optional<std::string> key = KeyOfEntryName(entry.file);
  if (!key) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", base::PrintableValue(entry.file),
                     "' is not named as a cache entry"));
  }
  absl::StatusOr<TrustedFolder> folder =
      TrustedFolder::Open(entry.folder, false);
  if (!folder.ok()) return folder.status();
  absl::StatusOr<std::string> bytes =
      folder->ReadFile(entry.file, kCacheEntryMagic, kMaxCacheEntryBytes);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<CacheEntry> decoded = DecodeCacheEntry(*bytes);
  if (!decoded.ok()) return decoded.status();
  if (decoded->key != *key) {
    return absl::DataLossError(
        "it holds the entry of another key (a renamed or foreign file)");
  }
  return decoded->name;
}

absl::StatusOr<std::vector<CacheEntryFile>> KernelCache::Prune(
    int64_t max_bytes) {
  Warn(ConfigurationWarnings());
  auto writable = WritableEntries(config_);
  if (absl::IsNotFound(writable.status())) return std::vector<CacheEntryFile>();
  if (!writable.ok()) return writable.status();
  auto& [folder, entries] = *writable;
  std::vector<CacheEntryFile> removed = RemoveStaleEntryTemporaries(folder);
  std::vector<CacheEntryFile> invalid;
  for (const CacheEntryFile& entry : entries) {
    if (!Verify(entry).ok()) invalid.push_back(entry);
  }
  for (CacheEntryFile& entry : RemoveEntries(folder, std::move(invalid))) {
    removed.push_back(std::move(entry));
  }
  if (max_bytes > 0) {
    for (CacheEntryFile& entry :
         RemoveLeastRecentlyUsed(folder, max_bytes, "")) {
      removed.push_back(std::move(entry));
    }
  }
  return removed;
}

absl::StatusOr<std::vector<CacheEntryFile>> KernelCache::Clear() {
  Warn(ConfigurationWarnings());
  auto writable = WritableEntries(config_);
  if (absl::IsNotFound(writable.status())) return std::vector<CacheEntryFile>();
  if (!writable.ok()) return writable.status();
  return RemoveEntries(writable->first, std::move(writable->second));
}

}  // namespace ptxgen::compile
