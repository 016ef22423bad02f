#include "ptxgen/compile/kernel_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "lib/compile/cache_entry.h"
#include "lib/compile/elapsed.h"
#include "ptxgen/base/printable.h"
#include "ptxgen/compile/environment.h"
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
  // Paths and compiler text come from outside: no escape sequence of theirs
  // reaches the terminal.
  std::cerr << "ptxgen: warning: " << base::Printable(warning) << std::endl;
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

// The name of `key`'s entry inside the cache folder.
std::string EntryName(absl::string_view key) {
  return absl::StrCat(key, ".kernel");
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

// An absolute path from `variable`, or nothing (with a warning when the
// variable names a relative path, which would depend on the working
// directory of whatever process runs).
std::optional<std::string> AbsoluteDirectory(const char* variable,
                                             absl::string_view suffix,
                                             std::vector<std::string>& warnings) {
  const absl::string_view value = EnvironmentVariable(variable);
  if (value.empty()) return std::nullopt;
  if (!absl::StartsWith(value, "/")) {
    warnings.push_back(absl::StrCat(
        variable, "='", value, "' is not an absolute path: ignored for the "
        "kernel cache folder"));
    return std::nullopt;
  }
  return absl::StrCat(value, suffix);
}

}  // namespace

CacheConfig CacheConfigFromEnvironment() {
  CacheConfig config;
  // Any value but a false one turns the disk off: "on" or "please" mean it.
  const absl::string_view disable = EnvironmentVariable("PTXGEN_CACHE_DISABLE");
  bool disabled = true;
  config.disk_enabled =
      disable.empty() || (absl::SimpleAtob(disable, &disabled) && !disabled);
  std::optional<std::string> directory =
      AbsoluteDirectory("PTXGEN_CACHE_DIR", "", config.warnings);
  if (!directory) {
    directory = AbsoluteDirectory("XDG_CACHE_HOME", "/ptxgen", config.warnings);
  }
  if (!directory) {
    directory = AbsoluteDirectory("HOME", "/.cache/ptxgen", config.warnings);
  }
  if (directory) {
    config.directory = *std::move(directory);
  } else {
    config.disk_enabled = false;
  }
  return config;
}

std::string KernelCacheKey(absl::string_view name, absl::string_view source,
                           const CompileOptions& options) {
  std::string material = "ptxgen kernel cache key v1;";
  AppendKeyField(kVersion, material);
  AppendKeyField(NvrtcVersion(), material);
  AppendKeyField(options.arch, material);
  AppendKeyField(absl::StrCat(options.flags.size()), material);
  for (const std::string& flag : options.flags) AppendKeyField(flag, material);
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
}

void KernelCache::Remember(const std::string& key,
                           std::shared_ptr<const CompiledModule> module) {
  modules_[key] = Resident{std::move(module), ++uses_};
  if (static_cast<int64_t>(modules_.size()) <= std::max(1, config_.memory_modules)) {
    return;
  }
  auto oldest = modules_.begin();
  for (auto it = modules_.begin(); it != modules_.end(); ++it) {
    if (it->second.last_use < oldest->second.last_use) oldest = it;
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

std::optional<CompiledModule> KernelCache::LoadFromDisk(
    absl::string_view key, absl::string_view name, absl::string_view source,
    const CompileOptions& options, std::vector<std::string>& warnings) {
  std::optional<TrustedFolder> folder = DiskFolder(/*create=*/false, warnings);
  if (!folder) return std::nullopt;
  absl::StatusOr<std::string> bytes =
      folder->ReadFile(EntryName(key), kCacheEntryMagic, kMaxCacheEntryBytes);
  absl::StatusOr<CompiledModule> loaded =
      bytes.ok() ? DecodeEntry(*bytes, key, name, source, options)
                 : absl::StatusOr<CompiledModule>(bytes.status());
  if (loaded.ok()) return *std::move(loaded);
  // A missing entry is the normal miss; anything else is worth a word. A
  // bad file is replaced by the recompiled entry.
  if (!absl::IsNotFound(loaded.status())) {
    warnings.push_back(absl::StrCat(
        "kernel cache entry ", EntryPath(key),
        absl::IsDataLoss(loaded.status()) ? " discarded and recompiled: "
                                          : " not used, compiling instead: ",
        loaded.status().message()));
  }
  return std::nullopt;
}

void KernelCache::WriteToDisk(absl::string_view key,
                              const CompiledModule& compiled,
                              std::vector<std::string>& warnings) {
  std::optional<TrustedFolder> folder = DiskFolder(/*create=*/true, warnings);
  if (!folder) return;
  // Once per cache: what writers that crashed left behind.
  absl::call_once(sweep_temporaries_, [&] {
    folder->RemoveStaleTemporaries(kStaleTemporarySeconds);
  });
  const CacheEntry entry{std::string(key),     compiled.name,
                         compiled.cuda_source, compiled.ptx,
                         compiled.cubin,       compiled.log};
  if (absl::Status written =
          folder->WriteFileAtomically(EntryName(key), EncodeCacheEntry(entry));
      !written.ok()) {
    warnings.push_back(absl::StrCat(
        "kernel cache entry not written (the kernel works, uncached): ",
        written.message()));
  }
}

absl::StatusOr<CompiledModule> KernelCache::LoadOrCompile(
    absl::string_view key, absl::string_view name, absl::string_view source,
    const CompileOptions& options, std::vector<std::string>& warnings) {
  absl::call_once(report_configuration_, [&] {
    warnings.insert(warnings.end(), config_.warnings.begin(),
                    config_.warnings.end());
  });
  if (std::optional<CompiledModule> loaded =
          LoadFromDisk(key, name, source, options, warnings)) {
    return *std::move(loaded);
  }
  absl::StatusOr<CompiledModule> compiled = CompileCuda(name, source, options);
  if (compiled.ok()) WriteToDisk(key, *compiled, warnings);
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
  auto module = std::make_shared<CompiledModule>(*cached);
  module->source = CacheSource::kMemoryCache;
  module->compile_ms = MillisecondsSince(start);
  return module;
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
    // The shared copy holds no warnings: they belong to this lookup alone.
    shared = std::make_shared<const CompiledModule>(*produced);
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
