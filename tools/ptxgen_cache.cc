// `ptxgen cache list|verify|prune|clear`: what the kernel cache holds, which
// entries a lookup would use, and removing the others or all of them.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "ptxgen/base/printable.h"
#include "ptxgen/compile/kernel_cache.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace ptxgen::tools {
namespace {

constexpr char kFolders[] =
    "The folders are those a lookup uses: the writable one (PTXGEN_CACHE_DIR,\n"
    "else $XDG_CACHE_HOME/ptxgen, else ~/.cache/ptxgen), then the read-only\n"
    "ones of PTXGEN_CACHE_PATH, with a lookup's warnings about them. When a\n"
    "variable naming the writable folder is set but refused (a relative\n"
    "path), prune and clear remove nothing from the one used in its place.";

std::string EntryLine(const compile::CacheEntryFile& entry) {
  return absl::StrCat("  ", entry.file, "  ", entry.bytes, " bytes  last used ",
                      absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", entry.last_use,
                                       absl::UTCTimeZone()),
                      "\n");
}

int64_t TotalBytes(const std::vector<compile::CacheEntryFile>& entries) {
  int64_t total = 0;
  for (const compile::CacheEntryFile& entry : entries) total += entry.bytes;
  return total;
}

// "<path> (writable|read-only): N entries, M bytes", or why it is not used.
std::string FolderLine(const compile::CacheFolderContents& folder) {
  const std::string head =
      absl::StrCat(base::PrintableValue(folder.path),
                   folder.writable ? " (writable)" : " (read-only)");
  if (absl::IsNotFound(folder.usable))
    return absl::StrCat(head, ": not there\n");
  if (!folder.usable.ok()) {
    return absl::StrCat(head, ": not used: ", folder.usable.message(), "\n");
  }
  return absl::StrCat(head, ": ", folder.entries.size(), " entries, ",
                      TotalBytes(folder.entries), " bytes\n");
}

absl::StatusOr<std::string> RunList(const cli::ParsedFlags&) {
  absl::StatusOr<std::vector<compile::CacheFolderContents>> folders =
      compile::KernelCache::Default().Contents();
  if (!folders.ok()) return folders.status();
  std::string text;
  size_t entries = 0;
  int64_t bytes = 0;
  for (const compile::CacheFolderContents& folder : *folders) {
    absl::StrAppend(&text, FolderLine(folder));
    for (const compile::CacheEntryFile& entry : folder.entries) {
      absl::StrAppend(&text, EntryLine(entry));
    }
    entries += folder.entries.size();
    bytes += TotalBytes(folder.entries);
  }
  return absl::StrCat(text, "total: ", entries, " entries, ", bytes,
                      " bytes\n");
}

absl::StatusOr<std::string> RunVerify(const cli::ParsedFlags&) {
  compile::KernelCache& cache = compile::KernelCache::Default();
  absl::StatusOr<std::vector<compile::CacheFolderContents>> folders =
      cache.Contents();
  if (!folders.ok()) return folders.status();
  std::string text;
  int valid = 0, invalid = 0;
  for (const compile::CacheFolderContents& folder : *folders) {
    absl::StrAppend(&text, FolderLine(folder));
    for (const compile::CacheEntryFile& entry : folder.entries) {
      absl::StatusOr<std::string> name = cache.Verify(entry);
      ++(name.ok() ? valid : invalid);
      absl::StrAppend(&text, name.ok() ? "  valid    " : "  invalid  ",
                      entry.file, "  ",
                      name.ok() ? *name : name.status().message(), "\n");
    }
  }
  absl::StrAppend(&text, valid + invalid, " entries: ", valid, " valid, ",
                  invalid, " invalid");
  if (invalid > 0) {
    absl::StrAppend(&text,
                    " (lookups skip them; 'ptxgen cache prune' removes "
                    "those of the writable folder)");
  }
  return absl::StrCat(text, "\n");
}

// A line per file removed (an entry, or a temporary of a writer that
// died), then the count.
std::string RemovedText(const std::vector<compile::CacheEntryFile>& removed) {
  std::string text;
  for (const compile::CacheEntryFile& entry : removed) {
    absl::StrAppend(&text, "removed ", base::PrintableValue(entry.folder), "/",
                    entry.file, "  ", entry.bytes, " bytes\n");
  }
  return absl::StrCat(text, "removed ", removed.size(), " files, ",
                      TotalBytes(removed), " bytes\n");
}

// --max-bytes, else PTXGEN_CACHE_MAX_BYTES, else no cap (0).
absl::StatusOr<int64_t> PruneCap(const cli::ParsedFlags& flags) {
  if (!flags.Has("max-bytes"))
    return compile::KernelCache::Default().config().max_bytes;
  absl::StatusOr<int64_t> bytes =
      compile::ParseByteCount(flags.Text("max-bytes"));
  if (!bytes.ok()) {
    return cli::UsageError(
        absl::StrCat("--max-bytes: ", bytes.status().message()));
  }
  return *bytes;
}

absl::StatusOr<std::string> RunPrune(const cli::ParsedFlags& flags) {
  absl::StatusOr<int64_t> cap = PruneCap(flags);
  if (!cap.ok()) return cap.status();
  absl::StatusOr<std::vector<compile::CacheEntryFile>> removed =
      compile::KernelCache::Default().Prune(*cap);
  if (!removed.ok()) return removed.status();
  return RemovedText(*removed);
}

absl::StatusOr<std::string> RunClear(const cli::ParsedFlags&) {
  absl::StatusOr<std::vector<compile::CacheEntryFile>> removed =
      compile::KernelCache::Default().Clear();
  if (!removed.ok()) return removed.status();
  return RemovedText(*removed);
}

cli::Subcommand CacheAction(const std::string& action, std::string summary,
                            const std::string& description,
                            cli::RunFunction run) {
  cli::Subcommand command;
  command.name = absl::StrCat("cache ", action);
  command.summary = std::move(summary);
  command.description = absl::StrCat(description, "\n", kFolders);
  command.examples = {absl::StrCat("ptxgen cache ", action)};
  command.run = std::move(run);
  return command;
}

}  // namespace

std::vector<cli::Subcommand> CacheSubcommands() {
  cli::Subcommand prune = CacheAction(
      "prune",
      "remove the writable cache folder's invalid entries, then the least "
      "recently used beyond a size",
      "Removes from the writable folder the temporaries of entry writers\n"
      "that died (files named <entry>.tmp.<16 hex digits>, an hour old),\n"
      "every entry 'ptxgen cache verify' calls invalid, then, with a cap\n"
      "(--max-bytes, else PTXGEN_CACHE_MAX_BYTES), the least recently used\n"
      "entries until the rest fit, and lists each file it removed. Nothing\n"
      "else is removed, and read-only folders are not touched.",
      RunPrune);
  prune.flags = {cli::TextFlag(
      "max-bytes", "N",
      "The most bytes of entries to keep: digits with an optional K, M or G "
      "(KiB, MiB, GiB). Default: PTXGEN_CACHE_MAX_BYTES, else no cap.")};
  prune.examples.push_back("ptxgen cache prune --max-bytes=512M");
  return {
      CacheAction(
          "list", "the kernel cache's folders, entries and sizes",
          "Lists each cache folder, whether it is used, and its entries\n"
          "(file, size, last use: written, or loaded from the writable\n"
          "folder), least recently used first, then the total.",
          RunList),
      CacheAction(
          "verify", "which kernel cache entries a lookup would use",
          "Reads every entry as a lookup would (the trust rule, the\n"
          "checksum, its own key) and says for each whether it is valid\n"
          "(with its kernel's name) or why not.",
          RunVerify),
      prune,
      CacheAction(
          "clear", "remove every entry of the writable cache folder",
          "Removes every kernel entry of the writable folder; autotuning\n"
          "records (its autotune/ folder) and read-only folders stay.",
          RunClear),
  };
}

}  // namespace ptxgen::tools
