// Entry files of cache folders: listing, the size cap, and the maintenance
// that `ptxgen cache` runs (KernelCache::Contents, Verify, Prune, Clear).
#include "lib/compile/cache_folder.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/compile/cache_entry.h"

namespace ptxgen::compile {
namespace {

constexpr absl::string_view kEntrySuffix = ".kernel";
// A hex SHA-256.
constexpr size_t kKeyDigits = 64;

bool IsKey(absl::string_view text) {
  return text.size() == kKeyDigits &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
                  (c >= 'a' && c <= 'f');
         });
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

// The entries of the writable folder, least recently used first (none when
// the folder is not there yet), and the folder.
absl::StatusOr<std::pair<TrustedFolder, std::vector<CacheEntryFile>>>
WritableEntries(const CacheConfig& config) {
  if (absl::Status on = CheckDiskOn(config); !on.ok()) return on;
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
  if (!absl::ConsumeSuffix(&file, kEntrySuffix) || !IsKey(file))
    return std::nullopt;
  return std::string(file);
}

absl::StatusOr<std::vector<CacheEntryFile>> EntryFiles(
    const TrustedFolder& folder) {
  absl::StatusOr<std::vector<FolderFile>> files = folder.ListFiles();
  if (!files.ok()) return files.status();
  std::vector<CacheEntryFile> entries;
  for (const FolderFile& file : *files) {
    if (!KeyOfEntryName(file.name)) continue;
    entries.push_back({folder.path(), file.name, file.bytes,
                       absl::FromUnixNanos(file.modified_ns)});
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

absl::StatusOr<std::vector<CacheFolderContents>> KernelCache::Contents() const {
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
        absl::StrCat("'", entry.file, "' is not named as a cache entry"));
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
    int64_t max_bytes) const {
  auto writable = WritableEntries(config_);
  if (absl::IsNotFound(writable.status())) return std::vector<CacheEntryFile>();
  if (!writable.ok()) return writable.status();
  auto& [folder, entries] = *writable;
  folder.RemoveStaleTemporaries(kStaleTemporarySeconds);
  std::vector<CacheEntryFile> invalid;
  for (const CacheEntryFile& entry : entries) {
    if (!Verify(entry).ok()) invalid.push_back(entry);
  }
  std::vector<CacheEntryFile> removed =
      RemoveEntries(folder, std::move(invalid));
  if (max_bytes > 0) {
    for (CacheEntryFile& entry :
         RemoveLeastRecentlyUsed(folder, max_bytes, "")) {
      removed.push_back(std::move(entry));
    }
  }
  return removed;
}

absl::StatusOr<std::vector<CacheEntryFile>> KernelCache::Clear() const {
  auto writable = WritableEntries(config_);
  if (absl::IsNotFound(writable.status())) return std::vector<CacheEntryFile>();
  if (!writable.ok()) return writable.status();
  return RemoveEntries(writable->first, std::move(writable->second));
}

}  // namespace ptxgen::compile
