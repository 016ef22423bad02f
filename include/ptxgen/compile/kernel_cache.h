#ifndef PTXGEN_COMPILE_KERNEL_CACHE_H_
#define PTXGEN_COMPILE_KERNEL_CACHE_H_

// The content-addressed kernel cache: compiled modules kept in memory (the
// most recently used ones) and on disk across processes; in memory, also
// found by a caller's identity of them, without a source
// (KernelCache::FindIdentified).
//
// The key hashes everything that changes the binary: module name, source,
// every NVRTC argument (NvrtcArguments), NVRTC version and
// ptxgen::kVersion; never a path or a pointer. A disk entry is written to a
// temporary of an unpredictable name, fsync'ed and renamed, and carries a
// SHA-256 of its bytes: a truncated, corrupt or foreign entry is discarded with
// a warning and recompiled, never used. Concurrent processes compiling the same
// kernel each write a whole entry and the last rename wins, so one valid entry
// remains.
//
// The SHA-256 is unkeyed: it proves an entry intact, not who wrote it. What
// decides that is the trust rule of compile/files.h: the cache folder is
// used only when it belongs to the effective user (or root) and nobody
// else may write to it, and an entry only when it is a regular file of the
// same kind of owner, writable by nobody else, at most
// kMaxCacheEntryBytes, starting with the entry's magic line. A folder that
// fails the rule is not used at all (one warning, then no reads and no
// writes); an entry that fails it is a miss with a warning.
//
// Read-only folders (PTXGEN_CACHE_PATH: bundles an application ships, e.g.
// from `ptxgen precompile`) are searched after the writable one, each under
// the same rule; one that fails it is skipped with one warning. The cache
// never writes, touches or removes anything in them. With a size cap
// (PTXGEN_CACHE_MAX_BYTES) each write removes the least recently used
// entries of the writable folder beyond it; a disk hit counts as a use.
// With PTXGEN_DUMP_DIR every kernel compiled or loaded from disk leaves its
// source, PTX, log and resources there (see CacheConfig::dump_directory).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/compile/files.h"

namespace ptxgen::compile {

// Where and whether the kernel cache keeps modules on disk.
struct CacheConfig {
  bool disk_enabled = true;
  // An absolute path, created (mode 0700) on the first write when missing.
  std::string directory;
  // Modules kept in memory; beyond this the least recently used one is
  // dropped (its disk entry stays, and a later lookup reloads it).
  int memory_modules = 512;
  // What the environment named and the configuration refused; the cache
  // reports them once, on its first lookup.
  std::vector<std::string> warnings;
  // Absolute paths searched after `directory`, in order, and only read.
  std::vector<std::string> read_only_directories;
  // The most bytes of entries `directory` keeps; 0: no cap.
  int64_t max_bytes = 0;
  // An absolute path (created with mode 0700, under the trust rule) where
  // each kernel compiled or loaded from disk writes <name>.<key>.cu, .ptx,
  // .log (NVRTC's and ptxas's) and .json (inspect.h's ResourcesJson), <key>
  // the first 16 digits of its cache key: once per kernel, never replacing
  // a file that differs. A dump that fails is a warning, never a failed
  // lookup. Empty: no dumps.
  std::string dump_directory;
  // Where a dump looks for nvdisasm or cuobjdump (colon-separated, like
  // $PATH, which CacheConfigFromEnvironment takes): with one found, the
  // dump also writes <name>.<key>.sass. Empty: no SASS.
  std::string disassembler_path;
  // The first variable naming `directory` that was refused (a relative
  // path), when `directory` is the folder used in its place; empty when it
  // is the one the environment named. Prune and Clear remove nothing from
  // such a stand-in.
  std::string refused_variable;
};

// $PTXGEN_CACHE_DIR, else $XDG_CACHE_HOME/ptxgen, else $HOME/.cache/ptxgen;
// each only when it is an absolute path (a relative one is refused with a
// warning and the next is used, see CacheConfig::refused_variable).
// PTXGEN_CACHE_DISABLE set to anything but a false value (0, false, no) turns
// the disk cache off, read-only folders included, and so does an environment
// that names no usable directory. PTXGEN_CACHE_PATH: read-only folders,
// colon-separated (relative ones refused with a warning, empty and repeated
// ones skipped; past a few, refusals are counted in one warning).
// PTXGEN_CACHE_MAX_BYTES: the cap, a byte count with an optional K, M or G
// (KiB, MiB, GiB); anything else is refused with a warning, leaving no cap.
// PTXGEN_DUMP_DIR: the dump folder, absolute. Empty variables count as unset.
CacheConfig CacheConfigFromEnvironment();

// The byte count PTXGEN_CACHE_MAX_BYTES accepts: digits and an optional K,
// M or G (powers of 1024), at least 1; InvalidArgument naming that syntax.
absl::StatusOr<int64_t> ParseByteCount(absl::string_view text);

// The hex SHA-256 key of a compilation request.
std::string KernelCacheKey(absl::string_view name, absl::string_view source,
                           const CompileOptions& options);

// Receives each cache warning; the default logs it at warning level
// (base/log.h). Called without the cache's lock held, possibly from several
// threads at once.
using WarningSink = std::function<void(absl::string_view warning)>;

// One entry file of a cache folder.
struct CacheEntryFile {
  std::string folder;
  std::string file;  // "<key>.kernel"
  int64_t bytes = 0;
  absl::Time
      last_use;  // when it was written, or last loaded from the writable folder
};

// A cache folder and the entry files in it.
struct CacheFolderContents {
  std::string path;
  bool writable = false;  // CacheConfig::directory, not a read-only one
  // OK when the folder is used; NotFound when it is not there yet; else the
  // trust rule it fails.
  absl::Status usable;
  std::vector<CacheEntryFile> entries;  // least recently used first
};

// A module the cache remembers under a caller's identity of it
// (KernelCache::FindIdentified), with what the caller made it from.
struct IdentifiedModule {
  std::shared_ptr<const CompiledModule> module;  // the resident module
  // What the caller gave GetOrCompile beside the identity (a GEMM's
  // gen::GeneratedGemm): kept, never read, by the cache.
  std::shared_ptr<const void> description;
};

// A cache's lookups by identity since it was made: those found (nothing
// generated, nothing hashed) and those missed (the caller generated).
struct IdentityLookups {
  int64_t found = 0;
  int64_t missed = 0;
};

// Compiled modules by the hash of their source and options: in memory for
// the process, on disk across processes (entries checked before use).
//
// In front of the content key, an in-process memo: a caller that can name,
// before it generates anything, everything its request is made from (a
// GEMM's form, configuration and compile options: its identity) finds the
// module by that name, without generating a source or hashing it. The memo
// is memory only and goes with the module it names (ClearMemory, the
// memory_modules bound): across processes, entries stay content-addressed,
// since another build's generator may write another source for the same
// identity.
class KernelCache {
 public:
  // The process-wide cache, configured from the environment on first use.
  static KernelCache& Default();

  explicit KernelCache(CacheConfig config);
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The module for this request from memory, else disk, else NVRTC. Threads
  // asking for a key that is being compiled wait for that compilation. A
  // memory hit (a waiting thread's too) shares the one resident module,
  // whatever number of plans and prepared kernels hold it: its `source` is
  // kMemoryCache, its compile_ms 0, no warnings. A compile or a disk load
  // gives this call its own copy: `source` and `compile_ms` describe this
  // lookup, `cache_warnings` what went wrong on the way. Compile errors are
  // returned (to every waiting thread) and not cached.
  absl::StatusOr<std::shared_ptr<const CompiledModule>> GetOrCompile(
      absl::string_view name, absl::string_view source,
      const CompileOptions& options);

  // GetOrCompile, then, when it succeeded, `identity` remembered as this
  // module's name, with `description`, for FindIdentified. The identity
  // must determine name, source and options within the process; the first
  // one remembered stays. Compile errors are not remembered.
  absl::StatusOr<std::shared_ptr<const CompiledModule>> GetOrCompile(
      absl::string_view name, absl::string_view source,
      const CompileOptions& options, absl::string_view identity,
      std::shared_ptr<const void> description);

  // The module remembered under `identity` (the resident one a memory hit
  // shares) and its description; none when it is not remembered, or
  // no longer (its module left memory), and the caller generates. Threads
  // that miss together each generate; GetOrCompile compiles once.
  std::optional<IdentifiedModule> FindIdentified(absl::string_view identity);

  // How many FindIdentified calls found their module, and missed it.
  IdentityLookups identity_lookups() const;

  void SetWarningSink(WarningSink sink);

  // Forgets the in-memory modules and the identities that name them (disk
  // entries stay); the next lookups go to disk, as a new process would.
  void ClearMemory();

  const CacheConfig& config() const { return config_; }

  // Where the disk entry for `key` lives.
  std::string EntryPath(absl::string_view key) const;

  // ---- Maintenance (`ptxgen cache`) ----
  //
  // Contents, Prune and Clear report the configuration's warnings first,
  // as the first lookup does (once per cache, whichever comes first).

  // The writable folder, then each read-only one. FailedPrecondition when
  // the disk cache is off.
  absl::StatusOr<std::vector<CacheFolderContents>> Contents();
  // The module name of the entry when a lookup would use it: a trusted,
  // intact entry filed under its own key; else the reason it would not.
  absl::StatusOr<std::string> Verify(const CacheEntryFile& entry) const;
  // Removes from the writable folder the temporaries of writers that died
  // (TrustedFolder::RemoveStaleTemporaries), the entries Verify refuses, then
  // the least recently used ones until the rest hold at most `max_bytes`
  // (0: no cap); returns the files it removed, temporaries first.
  // Read-only folders are not touched. FailedPrecondition naming the
  // variable when the writable folder stands in for a refused one.
  absl::StatusOr<std::vector<CacheEntryFile>> Prune(int64_t max_bytes);
  // Removes every entry of the writable folder (autotuning records stay);
  // returns what it removed. Refused as Prune is.
  absl::StatusOr<std::vector<CacheEntryFile>> Clear();

 private:
  struct Pending;

  // Loads or compiles for the one thread that registered the key's Pending,
  // publishes the result to memory and to the threads waiting on it.
  absl::StatusOr<std::shared_ptr<const CompiledModule>> Produce(
      const std::string& key, absl::string_view name, absl::string_view source,
      const CompileOptions& options, Pending& pending,
      std::chrono::steady_clock::time_point start);
  // Disk, then NVRTC (writing the new entry).
  absl::StatusOr<CompiledModule> LoadOrCompile(
      absl::string_view key, absl::string_view name, absl::string_view source,
      const CompileOptions& options, std::vector<std::string>& warnings);
  // The entry for `key` when a folder has a trusted, intact one: the
  // writable folder first, then the read-only ones.
  std::optional<CompiledModule> LoadFromDisk(
      absl::string_view key, absl::string_view name, absl::string_view source,
      const CompileOptions& options, std::vector<std::string>& warnings);
  // The entry for `key` in `folder`; a bad one is a warning, worded for a
  // `read_only` folder as one the cache leaves as it is.
  std::optional<CompiledModule> LoadFrom(const TrustedFolder& folder,
                                         bool read_only, absl::string_view key,
                                         absl::string_view name,
                                         absl::string_view source,
                                         const CompileOptions& options,
                                         std::vector<std::string>& warnings);
  // Writes the entry, then keeps the folder under the size cap.
  void WriteToDisk(absl::string_view key, const CompiledModule& compiled,
                   std::vector<std::string>& warnings);
  // Once per cache, on its first lookup: the configuration's warnings, and
  // the read-only and dump folders opened (those refused are warned of and
  // left out).
  void OpenFolders(std::vector<std::string>& warnings);
  // The configuration's warnings the first time it is called; none after.
  std::vector<std::string> ConfigurationWarnings();
  // Writes `module`'s dump when there is a dump folder; a failure is a
  // warning.
  void Dump(const CompiledModule& module, std::vector<std::string>& warnings);
  // The cache folder when the disk is on and the folder passes the trust
  // rule; the first refusal turns the disk off for good, with one warning.
  std::optional<TrustedFolder> DiskFolder(bool create,
                                          std::vector<std::string>& warnings);
  bool DiskUsable();
  void Warn(const std::vector<std::string>& warnings);

  struct Resident {
    std::shared_ptr<const CompiledModule> module;
    uint64_t last_use = 0;
    // The identities that name it, forgotten with it.
    std::vector<std::string> identities;
  };

  // What an identity names: the module's content key, and the caller's
  // description.
  struct Identified {
    std::string key;
    std::shared_ptr<const void> description;
  };

  // Keeps `module` in memory, dropping the least recently used (and its
  // identities) beyond the configured count.
  void Remember(const std::string& key,
                std::shared_ptr<const CompiledModule> module)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const CacheConfig config_;
  absl::once_flag sweep_temporaries_;
  absl::once_flag report_configuration_;
  absl::once_flag open_folders_;
  // Set once by OpenFolders; only read after it.
  std::vector<TrustedFolder> read_only_folders_;
  std::optional<TrustedFolder> dump_folder_;
  mutable absl::Mutex mutex_;
  bool disk_refused_ ABSL_GUARDED_BY(mutex_) = false;
  absl::flat_hash_map<std::string, Resident> modules_ ABSL_GUARDED_BY(mutex_);
  // By identity; each names a module of modules_.
  absl::flat_hash_map<std::string, Identified> identities_
      ABSL_GUARDED_BY(mutex_);
  IdentityLookups identity_lookups_ ABSL_GUARDED_BY(mutex_);
  uint64_t uses_ ABSL_GUARDED_BY(mutex_) = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<Pending>> pending_
      ABSL_GUARDED_BY(mutex_);
  WarningSink sink_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ptxgen::compile

#endif  // PTXGEN_COMPILE_KERNEL_CACHE_H_
