#include "ptxgen/compile/kernel_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "lib/compile/cache_entry.h"
#include "lib/compile/cache_folder.h"
#include "lib/compile/elapsed.h"
#include "lib/compile/kernel_dump.h"
#include "ptxgen/base/environment.h"
#include "ptxgen/base/log.h"
#include "ptxgen/base/printable.h"
#include "ptxgen/compile/files.h"
#include "ptxgen/compile/ptxas_report.h"
#include "ptxgen/compile/sha256.h"
#include "ptxgen/version.h"

namespace ptxgen::compile {
namespace {

// Length-prefixed, so that moving bytes from one field to the next changes
// the key ("ab" + "c" and "a" + "bc" differ).
void AppendKeyField(absl::string_view field, std::string& out) {
  absl::StrAppend(&out, field.size(), ":", field, ";");
}

void DefaultSink(absl::string_view warning) {
  base::Log(base::LogLevel::kWarning, warning);
}

CompiledModule FromEntry(CacheEntry entry, const CompileOptions& options) {
  CompiledModule module;
  PtxasReport report = ParsePtxasReport(entry.log);
  module.name = std::move(entry.name);
  module.cuda_source = std::move(entry.source);
  module.options = options;
  module.ptx = std::move(entry.ptx);
  module.cubin = std::move(entry.cubin);
  module.log = std::move(entry.log);
  module.resources = std::move(report.resources);
  module.diagnostics = std::move(report.diagnostics);
  module.source = CacheSource::kDiskCache;
  return module;
}

// The entry `bytes` when intact and answering exactly this request.
absl::StatusOr<CompiledModule> DecodeEntry(absl::string_view bytes,
                                           absl::string_view key,
                                           absl::string_view name,
                                           absl::string_view source,
                                           const CompileOptions& options) {
  absl::StatusOr<CacheEntry> entry = DecodeCacheEntry(bytes);
  if (!entry.ok()) return entry.status();
  if (entry->key != key || entry->name != name || entry->source != source) {
    return absl::DataLossError("it belongs to another request (foreign file)");
  }
  return FromEntry(*std::move(entry), options);
}

// `value` of `variable` when it is an absolute path, or nothing with a
// warning (a relative one would depend on the working directory of
// whatever process runs).
std::optional<std::string> AbsolutePath(const char* variable,
                                        absl::string_view value,
                                        absl::string_view purpose,
                                        std::vector<std::string>& warnings) {
  if (absl::StartsWith(value, "/")) return std::string(value);
  warnings.push_back(absl::StrCat(variable, "='", base::PrintableValue(value),
                                  "' is not an absolute path: ignored for ",
                                  purpose));
  return std::nullopt;
}

// Past this many, the warnings about one list's items are counted, not
// said: a PTXGEN_CACHE_PATH of thousands of entries must not flood the log.
constexpr size_t kListedWarnings = 3;

// Appends the first kListedWarnings of `listed` to `warnings`, then one
// line counting the rest as `more`.
void AppendCapped(const std::vector<std::string>& listed,
                  absl::string_view more, std::vector<std::string>& warnings) {
  const size_t said = std::min(listed.size(), kListedWarnings);
  warnings.insert(warnings.end(), listed.begin(), listed.begin() + said);
  if (listed.size() > said) {
    warnings.push_back(
        absl::StrCat("... and ", listed.size() - said, " more ", more));
  }
}

// `variable`'s absolute path followed by `suffix`, or nothing (unset, or a
// relative path, with a warning).
std::optional<std::string> AbsoluteDirectory(
    const char* variable, absl::string_view suffix, absl::string_view purpose,
    std::vector<std::string>& warnings) {
  const absl::string_view value = base::EnvironmentVariable(variable);
  if (value.empty()) return std::nullopt;
  std::optional<std::string> path =
      AbsolutePath(variable, value, purpose, warnings);
  if (!path) return std::nullopt;
  return absl::StrCat(*path, suffix);
}

// The first variable of PTXGEN_CACHE_DIR, XDG_CACHE_HOME and HOME that
// names an absolute path gives the folder; a set one refused on the way
// makes that folder a stand-in (CacheConfig::refused_variable).
void ReadWritableFolder(CacheConfig& config) {
  constexpr std::pair<const char*, absl::string_view> kVariables[] = {
      {"PTXGEN_CACHE_DIR", ""},
      {"XDG_CACHE_HOME", "/ptxgen"},
      {"HOME", "/.cache/ptxgen"}};
  for (const auto& [variable, suffix] : kVariables) {
    if (std::optional<std::string> directory = AbsoluteDirectory(
            variable, suffix, "the kernel cache folder", config.warnings)) {
      config.directory = *std::move(directory);
      return;
    }
    if (config.refused_variable.empty() &&
        !base::EnvironmentVariable(variable).empty()) {
      config.refused_variable = variable;
    }
  }
  config.disk_enabled = false;
}

void ReadLayeredFolders(CacheConfig& config) {
  const absl::string_view path = base::EnvironmentVariable("PTXGEN_CACHE_PATH");
  absl::flat_hash_set<absl::string_view> seen;
  std::vector<std::string> refused;
  for (absl::string_view entry : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    if (!seen.insert(entry).second) continue;  // searched once
    if (std::optional<std::string> folder = AbsolutePath(
            "PTXGEN_CACHE_PATH", entry, "a read-only cache folder", refused)) {
      config.read_only_directories.push_back(*std::move(folder));
    }
  }
  AppendCapped(refused,
               "PTXGEN_CACHE_PATH entries that are not absolute paths, ignored",
               config.warnings);
}

void ReadSizeCap(CacheConfig& config) {
  const absl::string_view cap =
      base::EnvironmentVariable("PTXGEN_CACHE_MAX_BYTES");
  if (cap.empty()) return;
  absl::StatusOr<int64_t> bytes = ParseByteCount(cap);
  if (bytes.ok()) {
    config.max_bytes = *bytes;
  } else {
    config.warnings.push_back(
        absl::StrCat("PTXGEN_CACHE_MAX_BYTES: ", bytes.status().message(),
                     "; the cache has no size cap"));
  }
}

}  // namespace

absl::StatusOr<int64_t> ParseByteCount(absl::string_view text) {
  int shift = 0;
  absl::string_view digits = text;
  if (!digits.empty()) {
    switch (absl::ascii_toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
    }
    if (shift != 0) digits.remove_suffix(1);
  }
  const bool all_digits =
      !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
        return absl::ascii_isdigit(static_cast<unsigned char>(c));
      });
  int64_t count = 0;
  if (!all_digits || !absl::SimpleAtoi(digits, &count) || count < 1 ||
      count > (std::numeric_limits<int64_t>::max() >> shift)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", base::PrintableValue(text),
        "' is not a byte count (write a whole number of at least 1, "
        "with an optional K, M or G for KiB, MiB, GiB)"));
  }
  return count << shift;
}

CacheConfig CacheConfigFromEnvironment() {
  CacheConfig config;
  // Any value but a false one turns the disk off: "on" or "please" mean it.
  const absl::string_view disable =
      base::EnvironmentVariable("PTXGEN_CACHE_DISABLE");
  bool disabled = true;
  config.disk_enabled =
      disable.empty() || (absl::SimpleAtob(disable, &disabled) && !disabled);
  ReadWritableFolder(config);
  ReadLayeredFolders(config);
  ReadSizeCap(config);
  if (std::optional<std::string> dump = AbsoluteDirectory(
          "PTXGEN_DUMP_DIR", "", "the kernel dump folder", config.warnings)) {
    config.dump_directory = *std::move(dump);
    config.disassembler_path = std::string(base::EnvironmentVariable("PATH"));
  }
  return config;
}

std::string KernelCacheKey(absl::string_view name, absl::string_view source,
                           const CompileOptions& options) {
  // v2: every argument NVRTC gets, not only the caller's (v1 entries may
  // hold an empty ptxas report, served by NVRTC's own cache).
  std::string material = "ptxgen kernel cache key v2;";
  AppendKeyField(kVersion, material);
  AppendKeyField(NvrtcVersion(), material);
  const std::vector<std::string> arguments = NvrtcArguments(options);
  AppendKeyField(absl::StrCat(arguments.size()), material);
  for (const std::string& argument : arguments) {
    AppendKeyField(argument, material);
  }
  AppendKeyField(name, material);
  AppendKeyField(source, material);
  return Sha256Hex(material);
}

struct KernelCache::Pending {
  absl::Notification done;
  absl::StatusOr<std::shared_ptr<const CompiledModule>> result;
};

KernelCache& KernelCache::Default() {
  // Never destroyed: other static objects may still compile at exit.
  static KernelCache* const cache =
      new KernelCache(CacheConfigFromEnvironment());
  return *cache;
}

KernelCache::KernelCache(CacheConfig config)
    : config_(std::move(config)), sink_(DefaultSink) {}

std::string KernelCache::EntryPath(absl::string_view key) const {
  return absl::StrCat(config_.directory, "/", EntryName(key));
}

void KernelCache::SetWarningSink(WarningSink sink) {
  absl::MutexLock lock(&mutex_);
  sink_ = std::move(sink);
}

void KernelCache::ClearMemory() {
  absl::MutexLock lock(&mutex_);
  modules_.clear();
  identities_.clear();
}

void KernelCache::Remember(const std::string& key,
                           std::shared_ptr<const CompiledModule> module) {
  // Identities already naming the key keep naming it.
  Resident& resident = modules_[key];
  resident.module = std::move(module);
  resident.last_use = ++uses_;
  if (static_cast<int64_t>(modules_.size()) <=
      std::max(1, config_.memory_modules)) {
    return;
  }
  auto oldest = modules_.begin();
  for (auto it = modules_.begin(); it != modules_.end(); ++it) {
    if (it->second.last_use < oldest->second.last_use) oldest = it;
  }
  for (const std::string& identity : oldest->second.identities) {
    identities_.erase(identity);
  }
  modules_.erase(oldest);
}

void KernelCache::Warn(const std::vector<std::string>& warnings) {
  if (warnings.empty()) return;
  WarningSink sink;
  {
    absl::MutexLock lock(&mutex_);
    sink = sink_;
  }
  for (const std::string& warning : warnings) sink(warning);
}

bool KernelCache::DiskUsable() {
  absl::MutexLock lock(&mutex_);
  return config_.disk_enabled && !disk_refused_;
}

std::optional<TrustedFolder> KernelCache::DiskFolder(
    bool create, std::vector<std::string>& warnings) {
  if (!DiskUsable()) return std::nullopt;
  absl::StatusOr<TrustedFolder> folder =
      TrustedFolder::Open(config_.directory, create);
  if (folder.ok()) return *std::move(folder);
  // A folder not there yet is the first run's normal miss.
  if (absl::IsNotFound(folder.status())) return std::nullopt;
  bool first_refusal = false;
  {
    absl::MutexLock lock(&mutex_);
    first_refusal = !std::exchange(disk_refused_, true);
  }
  if (first_refusal) {
    warnings.push_back(absl::StrCat(
        "kernel cache folder not used (no reads, no writes; kernels are "
        "compiled instead): ",
        folder.status().message()));
  }
  return std::nullopt;
}

std::vector<std::string> KernelCache::ConfigurationWarnings() {
  std::vector<std::string> warnings;
  absl::call_once(report_configuration_, [&] { warnings = config_.warnings; });
  return warnings;
}

void KernelCache::OpenFolders(std::vector<std::string>& warnings) {
  absl::call_once(open_folders_, [&] {
    for (std::string& warning : ConfigurationWarnings()) {
      warnings.push_back(std::move(warning));
    }
    std::vector<std::string> skipped;
    for (const std::string& path : config_.read_only_directories) {
      if (!config_.disk_enabled) break;
      absl::StatusOr<TrustedFolder> folder = TrustedFolder::Open(path, false);
      if (folder.ok()) {
        read_only_folders_.push_back(*std::move(folder));
      } else {
        skipped.push_back(
            absl::StrCat("read-only kernel cache folder skipped: ",
                         folder.status().message()));
      }
    }
    AppendCapped(skipped, "read-only kernel cache folders skipped", warnings);
    if (config_.dump_directory.empty()) return;
    absl::StatusOr<TrustedFolder> dump =
        TrustedFolder::Open(config_.dump_directory, /*create=*/true);
    if (dump.ok()) {
      dump_folder_ = *std::move(dump);
    } else {
      warnings.push_back(
          absl::StrCat("no kernels are dumped (PTXGEN_DUMP_DIR): ",
                       dump.status().message()));
    }
  });
}

std::optional<CompiledModule> KernelCache::LoadFrom(
    const TrustedFolder& folder, bool read_only, absl::string_view key,
    absl::string_view name, absl::string_view source,
    const CompileOptions& options, std::vector<std::string>& warnings) {
  const std::string path =
      base::PrintableValue(absl::StrCat(folder.path(), "/", EntryName(key)));
  absl::StatusOr<std::string> bytes =
      folder.ReadFile(EntryName(key), kCacheEntryMagic, kMaxCacheEntryBytes);
  absl::StatusOr<CompiledModule> loaded =
      bytes.ok() ? DecodeEntry(*bytes, key, name, source, options)
                 : absl::StatusOr<CompiledModule>(bytes.status());
  if (loaded.ok()) {
    base::Log(base::LogLevel::kDebug,
              absl::StrCat("kernel cache: ", name, " loaded from ", path));
    return *std::move(loaded);
  }
  // A missing entry is the normal miss; anything else is worth a word. A
  // bad file in the writable folder is replaced by the recompiled entry.
  if (absl::IsNotFound(loaded.status())) return std::nullopt;
  if (read_only) {
    warnings.push_back(absl::StrCat("read-only kernel cache entry ", path,
                                    " not used: ", loaded.status().message()));
  } else {
    warnings.push_back(absl::StrCat("kernel cache entry ", path,
                                    absl::IsDataLoss(loaded.status())
                                        ? " discarded and recompiled: "
                                        : " not used, compiling instead: ",
                                    loaded.status().message()));
  }
  return std::nullopt;
}

std::optional<CompiledModule> KernelCache::LoadFromDisk(
    absl::string_view key, absl::string_view name, absl::string_view source,
    const CompileOptions& options, std::vector<std::string>& warnings) {
  if (std::optional<TrustedFolder> folder =
          DiskFolder(/*create=*/false, warnings)) {
    if (std::optional<CompiledModule> loaded =
            LoadFrom(*folder, false, key, name, source, options, warnings)) {
      // A use: the size cap removes the least recently used entries.
      folder->Touch(EntryName(key));
      return loaded;
    }
  }
  for (const TrustedFolder& folder : read_only_folders_) {
    if (std::optional<CompiledModule> loaded =
            LoadFrom(folder, true, key, name, source, options, warnings)) {
      return loaded;
    }
  }
  return std::nullopt;
}

void KernelCache::WriteToDisk(absl::string_view key,
                              const CompiledModule& compiled,
                              std::vector<std::string>& warnings) {
  std::optional<TrustedFolder> folder = DiskFolder(/*create=*/true, warnings);
  if (!folder) return;
  // Once per cache: what writers that crashed left behind.
  absl::call_once(sweep_temporaries_,
                  [&] { RemoveStaleEntryTemporaries(*folder); });
  const CacheEntry entry{std::string(key), compiled.name,  compiled.cuda_source,
                         compiled.ptx,     compiled.cubin, compiled.log};
  if (absl::Status written =
          folder->WriteFileAtomically(EntryName(key), EncodeCacheEntry(entry));
      !written.ok()) {
    warnings.push_back(absl::StrCat(
        "kernel cache entry not written (the kernel works, uncached): ",
        written.message()));
    return;
  }
  if (config_.max_bytes <= 0) return;
  for (const CacheEntryFile& removed :
       RemoveLeastRecentlyUsed(*folder, config_.max_bytes, EntryName(key))) {
    base::Log(
        base::LogLevel::kDebug,
        absl::StrCat("kernel cache: removed ",
                     base::PrintableValue(removed.folder), "/", removed.file,
                     ", the least recently used, to keep "
                     "the folder within ",
                     config_.max_bytes, " bytes"));
  }
}

void KernelCache::Dump(const CompiledModule& module,
                       std::vector<std::string>& warnings) {
  if (!dump_folder_) return;
  if (absl::Status dumped =
          DumpModule(*dump_folder_, module, config_.disassembler_path);
      !dumped.ok()) {
    warnings.push_back(
        absl::StrCat("kernel ", module.name,
                     " not dumped (the kernel works): ", dumped.message()));
  }
}

absl::StatusOr<CompiledModule> KernelCache::LoadOrCompile(
    absl::string_view key, absl::string_view name, absl::string_view source,
    const CompileOptions& options, std::vector<std::string>& warnings) {
  OpenFolders(warnings);
  if (std::optional<CompiledModule> loaded =
          LoadFromDisk(key, name, source, options, warnings)) {
    return *std::move(loaded);
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CompiledModule> compiled = CompileCuda(name, source, options);
  if (!compiled.ok()) return compiled;
  base::Log(base::LogLevel::kInfo,
            absl::StrFormat("kernel cache: compiled %s in %.0f ms", name,
                            MillisecondsSince(start)));
  WriteToDisk(key, *compiled, warnings);
  return compiled;
}

absl::StatusOr<std::shared_ptr<const CompiledModule>> KernelCache::GetOrCompile(
    absl::string_view name, absl::string_view source,
    const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::string key = KernelCacheKey(name, source, options);
  std::shared_ptr<const CompiledModule> cached;
  std::shared_ptr<Pending> pending;
  bool owner = false;
  {
    absl::MutexLock lock(&mutex_);
    if (auto it = modules_.find(key); it != modules_.end()) {
      cached = it->second.module;
      it->second.last_use = ++uses_;
    } else if (auto it = pending_.find(key); it != pending_.end()) {
      pending = it->second;
    } else {
      pending = std::make_shared<Pending>();
      pending_.emplace(key, pending);
      owner = true;
    }
  }
  if (owner) return Produce(key, name, source, options, *pending, start);
  if (cached == nullptr) {
    pending->done.WaitForNotification();
    if (!pending->result.ok()) return pending->result.status();
    cached = *pending->result;
  }
  return cached;
}

absl::StatusOr<std::shared_ptr<const CompiledModule>> KernelCache::GetOrCompile(
    absl::string_view name, absl::string_view source,
    const CompileOptions& options, absl::string_view identity,
    std::shared_ptr<const void> description) {
  absl::StatusOr<std::shared_ptr<const CompiledModule>> module =
      GetOrCompile(name, source, options);
  if (!module.ok()) return module;
  absl::MutexLock lock(&mutex_);
  auto resident = modules_.find((*module)->cache_key);
  // Gone from memory already (ClearMemory, the bound): nothing to name.
  if (resident == modules_.end()) return module;
  if (identities_
          .try_emplace(identity,
                       Identified{resident->first, std::move(description)})
          .second) {
    resident->second.identities.emplace_back(identity);
  }
  return module;
}

std::optional<IdentifiedModule> KernelCache::FindIdentified(
    absl::string_view identity) {
  IdentifiedModule found;
  std::shared_ptr<const CompiledModule> cached;
  {
    absl::MutexLock lock(&mutex_);
    auto named = identities_.find(identity);
    if (named == identities_.end()) {
      ++identity_lookups_.missed;
      return std::nullopt;
    }
    ++identity_lookups_.found;
    // An identity leaves with its module (Remember, ClearMemory).
    Resident& resident = modules_.at(named->second.key);
    resident.last_use = ++uses_;
    cached = resident.module;
    found.description = named->second.description;
  }
  found.module = std::move(cached);
  return found;
}

IdentityLookups KernelCache::identity_lookups() const {
  absl::MutexLock lock(&mutex_);
  return identity_lookups_;
}

absl::StatusOr<std::shared_ptr<const CompiledModule>> KernelCache::Produce(
    const std::string& key, absl::string_view name, absl::string_view source,
    const CompileOptions& options, Pending& pending,
    std::chrono::steady_clock::time_point start) {
  std::vector<std::string> warnings;
  absl::StatusOr<CompiledModule> produced =
      LoadOrCompile(key, name, source, options, warnings);
  std::shared_ptr<const CompiledModule> shared;
  if (produced.ok()) {
    produced->cache_key = key;
    Dump(*produced, warnings);
    // The resident copy is what every memory hit shares, as such a hit
    // sees it: from memory, in no time, with no warnings (they belong to
    // this lookup alone).
    auto resident = std::make_shared<CompiledModule>(*produced);
    resident->source = CacheSource::kMemoryCache;
    resident->compile_ms = 0;
    shared = std::move(resident);
    pending.result = shared;
  } else {
    pending.result = produced.status();
  }
  {
    absl::MutexLock lock(&mutex_);
    if (shared != nullptr) Remember(key, shared);
    pending_.erase(key);
  }
  pending.done.Notify();
  Warn(warnings);
  if (!produced.ok()) return produced.status();
  produced->compile_ms = MillisecondsSince(start);
  produced->cache_warnings = std::move(warnings);
  return std::make_shared<const CompiledModule>(*std::move(produced));
}

}  // namespace ptxgen::compile
