#include "ptxgen/compile/kernel_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "lib/compile/cache_entry.h"
#include "lib/compile/elapsed.h"
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
  std::cerr << "ptxgen: warning: " << warning << std::endl;
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

// The entry at `path` when it is intact and answers exactly this request.
absl::StatusOr<CompiledModule> LoadEntry(const std::string& path,
                                         absl::string_view key,
                                         absl::string_view name,
                                         absl::string_view source,
                                         const CompileOptions& options) {
  absl::StatusOr<std::string> bytes = ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<CacheEntry> entry = DecodeCacheEntry(*bytes);
  if (!entry.ok()) return entry.status();
  if (entry->key != key || entry->name != name || entry->source != source) {
    return absl::DataLossError("it belongs to another request (foreign file)");
  }
  return FromEntry(*std::move(entry), options);
}

}  // namespace

CacheConfig CacheConfigFromEnvironment() {
  CacheConfig config;
  // Any value but a false one turns the disk off: "on" or "please" mean it.
  const absl::string_view disable = EnvironmentVariable("PTXGEN_CACHE_DISABLE");
  bool disabled = true;
  config.disk_enabled =
      disable.empty() || (absl::SimpleAtob(disable, &disabled) && !disabled);
  const absl::string_view explicit_dir = EnvironmentVariable("PTXGEN_CACHE_DIR");
  const absl::string_view xdg = EnvironmentVariable("XDG_CACHE_HOME");
  const absl::string_view home = EnvironmentVariable("HOME");
  if (!explicit_dir.empty()) {
    config.directory = std::string(explicit_dir);
  } else if (absl::StartsWith(xdg, "/")) {
    config.directory = absl::StrCat(xdg, "/ptxgen");
  } else if (!home.empty()) {
    config.directory = absl::StrCat(home, "/.cache/ptxgen");
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
  return absl::StrCat(config_.directory, "/", key, ".kernel");
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

absl::StatusOr<CompiledModule> KernelCache::LoadOrCompile(
    absl::string_view key, absl::string_view name, absl::string_view source,
    const CompileOptions& options, std::vector<std::string>& warnings) {
  const std::string path = EntryPath(key);
  if (config_.disk_enabled) {
    absl::StatusOr<CompiledModule> loaded =
        LoadEntry(path, key, name, source, options);
    if (loaded.ok()) return loaded;
    // A missing entry is the normal miss; anything else is worth a word.
    // A bad file is replaced below by the recompiled entry.
    if (absl::IsDataLoss(loaded.status())) {
      warnings.push_back(absl::StrCat(
          "kernel cache entry ", path,
          " discarded and recompiled: ", loaded.status().message()));
    } else if (!absl::IsNotFound(loaded.status())) {
      warnings.push_back(
          absl::StrCat("kernel cache entry unreadable, "
                       "compiling instead: ",
                       loaded.status().message()));
    }
  }
  absl::StatusOr<CompiledModule> compiled = CompileCuda(name, source, options);
  if (!compiled.ok() || !config_.disk_enabled) return compiled;
  // Once per cache: what writers that crashed left behind.
  absl::call_once(sweep_temporaries_, RemoveStaleTemporaries, config_.directory,
                  kStaleTemporarySeconds);
  const CacheEntry entry{std::string(key),      compiled->name,
                         compiled->cuda_source, compiled->ptx,
                         compiled->cubin,       compiled->log};
  if (absl::Status written =
          WriteFileAtomically(config_.directory, path, EncodeCacheEntry(entry));
      !written.ok()) {
    warnings.push_back(absl::StrCat(
        "kernel cache entry not written (the kernel works, uncached): ",
        written.message()));
  }
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
