#include "ptxgen/compile/kernel_cache.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/inspect.h"
#include "tests/compile/test_kernels.h"
#include "tests/compile/test_support.h"

namespace ptxgen::compile {
namespace {

using test_kernels::kTinyKernel;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

int64_t FileBytes(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 ? info.st_size : -1;
}

// Makes `path` look last used `seconds` ago.
void SetAge(const std::string& path, int seconds) {
  const struct timeval then[2] = {{time(nullptr) - seconds, 0},
                                  {time(nullptr) - seconds, 0}};
  ASSERT_EQ(utimes(path.c_str(), then), 0) << path;
}

std::set<std::string> Names(const std::string& directory) {
  const std::vector<std::string> files = ListDirectory(directory);
  return std::set<std::string>(files.begin(), files.end());
}

// A cache over a fresh directory whose warnings are collected, not printed.
class CacheTest : public ::testing::Test {
 protected:
  KernelCache& NewCache(bool disk_enabled = true) {
    return NewCache(CacheConfig{disk_enabled, directory_});
  }

  KernelCache& NewCache(CacheConfig config) {
    caches_.push_back(std::make_unique<KernelCache>(std::move(config)));
    caches_.back()->SetWarningSink([this](absl::string_view warning) {
      absl::MutexLock lock(&mutex_);
      warnings_.emplace_back(warning);
    });
    return *caches_.back();
  }

  std::shared_ptr<const CompiledModule> Get(
      KernelCache& cache, absl::string_view source = kTinyKernel) {
    auto module = cache.GetOrCompile("tiny", source, CompileOptions{});
    EXPECT_TRUE(module.ok()) << module.status();
    return module.ok() ? *module : nullptr;
  }

  std::vector<std::string> Warnings() {
    absl::MutexLock lock(&mutex_);
    return warnings_;
  }

  const std::string directory_ = FreshTestDirectory();
  std::vector<std::unique_ptr<KernelCache>> caches_;
  absl::Mutex mutex_;
  std::vector<std::string> warnings_;
};

// ---- keys ----

TEST(KernelCacheKey, IsStableHexSha256) {
  const std::string key = KernelCacheKey("tiny", kTinyKernel, CompileOptions{});
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(key, KernelCacheKey("tiny", kTinyKernel, CompileOptions{}));
}

TEST(KernelCacheKey, EveryInputChangesIt) {
  const CompileOptions base;
  CompileOptions other_arch;
  other_arch.arch = "sm_100a";
  CompileOptions with_flag;
  with_flag.flags = {"-lineinfo"};
  CompileOptions two_flags;
  two_flags.flags = {"-DA=1", "-DB=2"};
  CompileOptions swapped;
  swapped.flags = {"-DB=2", "-DA=1"};
  CompileOptions joined;
  joined.flags = {"-DA=1-DB=2"};
  const std::set<std::string> keys = {
      KernelCacheKey("tiny", kTinyKernel, base),
      KernelCacheKey("tiny", std::string(kTinyKernel) + " ", base),
      KernelCacheKey("tiny2", kTinyKernel, base),
      KernelCacheKey("tiny", kTinyKernel, other_arch),
      KernelCacheKey("tiny", kTinyKernel, with_flag),
      KernelCacheKey("tiny", kTinyKernel, two_flags),
      KernelCacheKey("tiny", kTinyKernel, swapped),
      KernelCacheKey("tiny", kTinyKernel, joined),
      // Bytes moved across the name/source boundary.
      KernelCacheKey("ab", "c", base),
      KernelCacheKey("a", "bc", base),
  };
  EXPECT_EQ(keys.size(), 10u);
}

TEST(KernelCacheKey, DoesNotDependOnTheCacheDirectory) {
  // The key names content only; the directory is where, not what.
  KernelCache a(CacheConfig{true, "/tmp/one"});
  KernelCache b(CacheConfig{true, "/tmp/two"});
  const std::string key = KernelCacheKey("tiny", kTinyKernel, CompileOptions{});
  EXPECT_EQ(a.EntryPath(key), "/tmp/one/" + key + ".kernel");
  EXPECT_EQ(b.EntryPath(key), "/tmp/two/" + key + ".kernel");
}

// ---- hits and misses ----

TEST_F(CacheTest, MissCompilesThenMemoryHits) {
  KernelCache& cache = NewCache();
  auto first = Get(cache);
  auto second = Get(cache);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->source, CacheSource::kCompiled);
  EXPECT_EQ(second->source, CacheSource::kMemoryCache);
  EXPECT_EQ(first->cache_key,
            KernelCacheKey("tiny", kTinyKernel, CompileOptions{}));
  EXPECT_EQ(second->cache_key, first->cache_key);
  EXPECT_TRUE(second->cubin == first->cubin);
  EXPECT_EQ(second->resources[0].static_shared_bytes, 4000);
  EXPECT_LT(second->compile_ms, first->compile_ms);
  EXPECT_TRUE(Warnings().empty());
}

// Memory hits share one module, however many hold it (2,000 plans of one
// kernel held 2,000 copies of its PTX and CUBIN before).
TEST_F(CacheTest, MemoryHitsShareOneModule) {
  KernelCache& cache = NewCache();
  auto first = Get(cache);
  auto second = Get(cache);
  auto third = Get(cache);
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(second.get(), third.get());
  EXPECT_NE(first.get(), second.get()) << "the compile's own, with its time";
  EXPECT_EQ(second->compile_ms, 0);
  EXPECT_TRUE(second->cache_warnings.empty());
}

TEST_F(CacheTest, CreatesTheMissingDirectoryAndOneEntry) {
  KernelCache& cache = NewCache();
  auto module = Get(cache);
  ASSERT_TRUE(module);
  const std::vector<std::string> files = ListDirectory(directory_);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], module->cache_key + ".kernel");
}

TEST_F(CacheTest, NewProcessHitsDiskWithEverythingInspectable) {
  auto compiled = Get(NewCache());
  KernelCache& fresh = NewCache();  // Shares only the directory.
  auto loaded = Get(fresh);
  ASSERT_TRUE(compiled && loaded);
  EXPECT_EQ(loaded->source, CacheSource::kDiskCache);
  EXPECT_EQ(loaded->name, "tiny");
  EXPECT_EQ(loaded->cuda_source, kTinyKernel);
  EXPECT_EQ(loaded->ptx, compiled->ptx);
  EXPECT_TRUE(loaded->cubin == compiled->cubin);
  EXPECT_EQ(loaded->log, compiled->log);
  EXPECT_EQ(loaded->options.arch, "sm_90a");
  ASSERT_EQ(loaded->resources.size(), 1u);
  EXPECT_EQ(loaded->resources[0].registers, compiled->resources[0].registers);
  EXPECT_EQ(loaded->resources[0].static_shared_bytes, 4000);
  EXPECT_EQ(Get(fresh)->source, CacheSource::kMemoryCache);
}

TEST_F(CacheTest, ClearMemoryFallsBackToDisk) {
  KernelCache& cache = NewCache();
  Get(cache);
  cache.ClearMemory();
  EXPECT_EQ(Get(cache)->source, CacheSource::kDiskCache);
}

TEST_F(CacheTest, MemoryKeepsTheMostRecentlyUsedModules) {
  caches_.push_back(std::make_unique<KernelCache>(
      CacheConfig{/*disk_enabled=*/true, directory_, /*memory_modules=*/2}));
  KernelCache& cache = *caches_.back();
  const std::string a = kTinyKernel, b = a + "// b\n", c = a + "// c\n";
  Get(cache, a);
  Get(cache, b);
  EXPECT_EQ(Get(cache, a)->source,
            CacheSource::kMemoryCache);  // a is newer than b
  Get(cache, c);                         // drops b
  EXPECT_EQ(Get(cache, a)->source, CacheSource::kMemoryCache);
  EXPECT_EQ(Get(cache, c)->source, CacheSource::kMemoryCache);
  EXPECT_EQ(Get(cache, b)->source, CacheSource::kDiskCache);
}

// "<entry>.tmp.<16 hex digits>": a temporary as an entry's writer names it.
std::string Temporary(char key_digit, absl::string_view random) {
  return absl::StrCat(std::string(64, key_digit), ".kernel.tmp.", random);
}

TEST_F(CacheTest, TemporariesOfDeadWritersAreDeletedOnAWrite) {
  ASSERT_EQ(mkdir(directory_.c_str(), 0700), 0);
  const std::string stale = Temporary('a', "0000000000004242");
  const std::string fresh = Temporary('b', "0000000000004243");
  WriteFile(directory_ + "/" + stale, "half an entry");
  WriteFile(directory_ + "/" + fresh, "an entry being written");
  SetAge(directory_ + "/" + stale, 7200);
  auto module = Get(NewCache());
  ASSERT_TRUE(module);
  EXPECT_EQ(Names(directory_),
            (std::set<std::string>{fresh, module->cache_key + ".kernel"}));
}

// A user's file that merely holds ".tmp." is never taken for a temporary.
TEST_F(CacheTest, AWriteLeavesTheUsersTmpFilesAlone) {
  ASSERT_EQ(mkdir(directory_.c_str(), 0700), 0);
  WriteFile(directory_ + "/thesis.tmp.tex", "precious");
  WriteFile(directory_ + "/notes.tmp.0123456789abcdef", "precious");
  SetAge(directory_ + "/thesis.tmp.tex", 7200);
  SetAge(directory_ + "/notes.tmp.0123456789abcdef", 7200);
  auto module = Get(NewCache());
  ASSERT_TRUE(module);
  EXPECT_EQ(
      Names(directory_),
      (std::set<std::string>{"thesis.tmp.tex", "notes.tmp.0123456789abcdef",
                             module->cache_key + ".kernel"}));
}

// Past three, the read-only folders skipped are counted in one warning.
TEST_F(CacheTest, ManySkippedReadOnlyFoldersAreCountedInOneWarning) {
  CacheConfig config{true, directory_};
  for (int i = 0; i < 10; ++i) {
    config.read_only_directories.push_back(
        FreshTestDirectory(absl::StrCat("absent", i)));
  }
  Get(NewCache(std::move(config)));
  const std::vector<std::string> warnings = Warnings();
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_TRUE(Contains(warnings[0], "read-only kernel cache folder skipped: "))
      << warnings[0];
  EXPECT_EQ(warnings[3],
            "... and 7 more read-only kernel cache folders skipped");
}

TEST_F(CacheTest, DisabledDiskCacheWritesNothing) {
  KernelCache& cache = NewCache(/*disk_enabled=*/false);
  EXPECT_EQ(Get(cache)->source, CacheSource::kCompiled);
  EXPECT_EQ(Get(cache)->source, CacheSource::kMemoryCache);
  cache.ClearMemory();
  EXPECT_EQ(Get(cache)->source, CacheSource::kCompiled);
  struct stat info;
  EXPECT_NE(stat(directory_.c_str(), &info), 0) << "directory was created";
}

TEST_F(CacheTest, CompileErrorsReachTheCallerAndAreNotCached) {
  KernelCache& cache = NewCache();
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto module = cache.GetOrCompile("broken", test_kernels::kSyntaxErrorKernel,
                                     CompileOptions{});
    ASSERT_FALSE(module.ok());
    EXPECT_TRUE(Contains(module.status().message(), "broken(3): error"));
  }
  EXPECT_TRUE(ListDirectory(directory_).empty());
}

// ---- lookups by identity ----

// GetOrCompile under an identity; the module, or null on an error.
std::shared_ptr<const CompiledModule> GetIdentified(
    KernelCache& cache, absl::string_view identity,
    std::shared_ptr<const void> description,
    absl::string_view source = kTinyKernel,
    const CompileOptions& options = CompileOptions{}) {
  auto module = cache.GetOrCompile("tiny", source, options, identity,
                                   std::move(description));
  return module.ok() ? *module : nullptr;
}

TEST_F(CacheTest, AnIdentityFindsItsModuleAndDescriptionWithoutASource) {
  KernelCache& cache = NewCache();
  EXPECT_FALSE(cache.FindIdentified("tiny, plain").has_value());
  auto description = std::make_shared<const std::string>("what was generated");
  auto compiled = GetIdentified(cache, "tiny, plain", description);
  ASSERT_TRUE(compiled);
  EXPECT_EQ(compiled->source, CacheSource::kCompiled);
  std::optional<IdentifiedModule> found = cache.FindIdentified("tiny, plain");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->module->source, CacheSource::kMemoryCache);
  EXPECT_EQ(found->module->cache_key, compiled->cache_key);
  EXPECT_TRUE(found->module->cubin == compiled->cubin);
  EXPECT_EQ(found->module->cuda_source, kTinyKernel);
  EXPECT_EQ(found->description, description);  // the caller's own object
  EXPECT_FALSE(cache.FindIdentified("tiny, other").has_value());
  const IdentityLookups lookups = cache.identity_lookups();
  EXPECT_EQ(lookups.found, 1);
  EXPECT_EQ(lookups.missed, 2);
  EXPECT_TRUE(Warnings().empty());
}

// The memo stands in front of the content key: the first module named
// stays named, and a lookup by content still finds it.
TEST_F(CacheTest, AnIdentityNamesTheFirstModuleRememberedUnderIt) {
  KernelCache& cache = NewCache();
  auto first = std::make_shared<const std::string>("first");
  ASSERT_TRUE(GetIdentified(cache, "tiny", first));
  ASSERT_TRUE(GetIdentified(cache, "tiny", std::make_shared<int>(2)));
  std::optional<IdentifiedModule> found = cache.FindIdentified("tiny");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->description, first);
  EXPECT_EQ(Get(cache)->source, CacheSource::kMemoryCache);
}

// Different options are different identities, each naming its own module.
TEST_F(CacheTest, IdentitiesOfDifferentOptionsNameTheirOwnModules) {
  KernelCache& cache = NewCache();
  CompileOptions lineinfo;
  lineinfo.flags = {"-lineinfo"};
  auto plain_description = std::make_shared<const std::string>("plain");
  auto lineinfo_description = std::make_shared<const std::string>("lineinfo");
  auto plain = GetIdentified(cache, "tiny", plain_description);
  auto flagged = GetIdentified(cache, "tiny -lineinfo", lineinfo_description,
                               kTinyKernel, lineinfo);
  ASSERT_TRUE(plain && flagged);
  EXPECT_NE(plain->cache_key, flagged->cache_key);
  std::optional<IdentifiedModule> found_plain = cache.FindIdentified("tiny");
  std::optional<IdentifiedModule> found_flagged =
      cache.FindIdentified("tiny -lineinfo");
  ASSERT_TRUE(found_plain.has_value() && found_flagged.has_value());
  EXPECT_EQ(found_plain->module->cache_key, plain->cache_key);
  EXPECT_EQ(found_plain->description, plain_description);
  EXPECT_EQ(found_flagged->module->cache_key, flagged->cache_key);
  EXPECT_EQ(found_flagged->module->options.flags, lineinfo.flags);
  EXPECT_EQ(found_flagged->description, lineinfo_description);
}

// A test that clears memory to reach the disk reaches it by identity too.
TEST_F(CacheTest, ClearMemoryForgetsIdentities) {
  KernelCache& cache = NewCache();
  ASSERT_TRUE(GetIdentified(cache, "tiny", nullptr));
  ASSERT_TRUE(cache.FindIdentified("tiny").has_value());
  cache.ClearMemory();
  EXPECT_FALSE(cache.FindIdentified("tiny").has_value());
  auto loaded = GetIdentified(cache, "tiny", nullptr);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->source, CacheSource::kDiskCache);
  EXPECT_TRUE(cache.FindIdentified("tiny").has_value());
}

TEST_F(CacheTest, AnIdentityLeavesMemoryWithItsModule) {
  KernelCache& cache = NewCache(CacheConfig{/*disk_enabled=*/true, directory_,
                                            /*memory_modules=*/1});
  ASSERT_TRUE(GetIdentified(cache, "a", nullptr));
  ASSERT_TRUE(
      GetIdentified(cache, "b", nullptr, absl::StrCat(kTinyKernel, "// b\n")));
  EXPECT_FALSE(cache.FindIdentified("a").has_value());
  EXPECT_TRUE(cache.FindIdentified("b").has_value());
}

TEST_F(CacheTest, CompileErrorsAreNotRememberedUnderAnIdentity) {
  KernelCache& cache = NewCache();
  for (int attempt = 0; attempt < 2; ++attempt) {
    EXPECT_FALSE(GetIdentified(cache, "broken", nullptr,
                               test_kernels::kSyntaxErrorKernel));
    EXPECT_FALSE(cache.FindIdentified("broken").has_value());
  }
}

// Threads that miss an identity together each generate, as a caller does
// after FindIdentified; the kernel compiles once and is named once.
TEST_F(CacheTest, ConcurrentThreadsMissingAnIdentityCompileOnce) {
  KernelCache& cache = NewCache();
  constexpr int kThreads = 8;
  std::vector<std::shared_ptr<const CompiledModule>> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      if (std::optional<IdentifiedModule> found =
              cache.FindIdentified("tiny")) {
        results[i] = found->module;
      } else {
        results[i] = GetIdentified(cache, "tiny", std::make_shared<int>(i));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  int compiled = 0;
  for (const auto& result : results) {
    ASSERT_TRUE(result);
    EXPECT_EQ(result->cache_key, results[0]->cache_key);
    compiled += result->source == CacheSource::kCompiled ? 1 : 0;
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_TRUE(cache.FindIdentified("tiny").has_value());
  EXPECT_EQ(ListDirectory(directory_).size(), 1u);
}

// ---- corrupt entries: discarded with a warning, recompiled, replaced ----

class CorruptEntryTest : public CacheTest {
 protected:
  // Compiles once, lets `damage` edit the entry, then looks it up again from a
  // fresh cache (as another process would).
  void ExpectRecovery(const std::function<std::string(std::string)>& damage,
                      absl::string_view reason) {
    auto original = Get(NewCache());
    ASSERT_TRUE(original);
    const std::string path = NewCache().EntryPath(original->cache_key);
    const std::string damaged = damage(ReadFile(path));
    WriteFile(path, damaged);

    auto recovered = Get(NewCache());
    ASSERT_TRUE(recovered);
    EXPECT_EQ(recovered->source, CacheSource::kCompiled);
    EXPECT_TRUE(recovered->cubin == original->cubin);
    ASSERT_EQ(recovered->cache_warnings.size(), 1u);
    EXPECT_TRUE(
        Contains(recovered->cache_warnings[0], "discarded and recompiled"));
    EXPECT_TRUE(Contains(recovered->cache_warnings[0], reason));
    EXPECT_EQ(Warnings(), recovered->cache_warnings);  // The sink saw it too.
    // Replaced by a valid entry (not byte-identical: the log carries ptxas's
    // compile times).
    EXPECT_TRUE(ReadFile(path) != damaged);
    EXPECT_EQ(Get(NewCache())->source, CacheSource::kDiskCache);
  }
};

TEST_F(CorruptEntryTest, TruncatedEntry) {
  ExpectRecovery(
      [](const std::string& bytes) {
        return bytes.substr(0, bytes.size() / 2);
      },
      "checksum mismatch");
}

TEST_F(CorruptEntryTest, TruncatedToAlmostNothing) {
  ExpectRecovery([](const std::string& bytes) { return bytes.substr(0, 30); },
                 "truncated");
}

TEST_F(CorruptEntryTest, EmptyFile) {
  ExpectRecovery([](const std::string&) { return std::string(); }, "truncated");
}

TEST_F(CorruptEntryTest, OneFlippedByteInTheCubin) {
  ExpectRecovery(
      [](std::string bytes) {
        bytes[bytes.size() / 2] ^= 0x01;
        return bytes;
      },
      "checksum mismatch");
}

TEST_F(CorruptEntryTest, ForeignFile) {
  ExpectRecovery(
      [](const std::string&) {
        return std::string(
            "\x7f"
            "ELF not ours");
      },
      "foreign file");
}

TEST_F(CorruptEntryTest, ValidEntryOfAnotherRequest) {
  // Intact and checksummed, but written for other source: never used.
  ExpectRecovery(
      [this](const std::string&) {
        KernelCache& other = NewCache();
        auto module = Get(other, std::string(kTinyKernel) + "// other\n");
        return ReadFile(other.EntryPath(module->cache_key));
      },
      "another request");
}

// Not a file to read at all: skipped with a warning (a FIFO must not hang
// the lookup, a link to /dev/zero must not fill memory), then replaced by
// the entry.
TEST_F(CacheTest, AFifoOrALinkWhereAnEntryBelongsIsNotRead) {
  auto original = Get(NewCache());
  ASSERT_TRUE(original);
  const std::string path = NewCache().EntryPath(original->cache_key);
  const struct {
    std::function<void()> replace;
    const char* reason;
  } replacements[] = {
      {[&] { ASSERT_EQ(mkfifo(path.c_str(), 0644), 0); },
       "is not a regular file"},
      {[&] { ASSERT_EQ(symlink("/dev/zero", path.c_str()), 0); },
       "is a symbolic link"},
  };
  for (const auto& replacement : replacements) {
    ASSERT_EQ(unlink(path.c_str()), 0);
    replacement.replace();
    auto recovered = Get(NewCache());
    ASSERT_TRUE(recovered);
    EXPECT_EQ(recovered->source, CacheSource::kCompiled);
    ASSERT_EQ(recovered->cache_warnings.size(), 1u);
    EXPECT_TRUE(Contains(recovered->cache_warnings[0], replacement.reason))
        << recovered->cache_warnings[0];
    EXPECT_EQ(Get(NewCache())->source, CacheSource::kDiskCache);
  }
}

TEST_F(CacheTest, AFileWhereTheFolderBelongsTurnsTheDiskOffWithOneWarning) {
  WriteFile(directory_, "in the way");
  KernelCache& cache = NewCache();
  auto module = Get(cache);
  ASSERT_TRUE(module);
  EXPECT_EQ(module->source, CacheSource::kCompiled);
  ASSERT_EQ(module->cache_warnings.size(), 1u);
  EXPECT_TRUE(
      Contains(module->cache_warnings[0], "kernel cache folder not used"));
  EXPECT_TRUE(Contains(module->cache_warnings[0], "Not a directory"));
  cache.ClearMemory();
  EXPECT_TRUE(Get(cache)->cache_warnings.empty()) << "warned twice";
  EXPECT_EQ(ReadFile(directory_), "in the way");
}

// ---- PTXGEN_DUMP_DIR ----

class DumpTest : public CacheTest {
 protected:
  KernelCache& DumpingCache(bool disk_enabled = true) {
    CacheConfig config{disk_enabled, directory_};
    config.dump_directory = dumps_;
    return NewCache(std::move(config));
  }

  // The dump's file with `extension` of `module`.
  std::string Dumped(const CompiledModule& module,
                     absl::string_view extension) {
    return absl::StrCat(dumps_, "/tiny.", module.cache_key.substr(0, 16), ".",
                        extension);
  }

  const std::string dumps_ = FreshTestDirectory("dumps");
};

TEST_F(DumpTest, ACompiledKernelLeavesItsSourcePtxLogAndResources) {
  auto module = Get(DumpingCache());
  ASSERT_TRUE(module);
  EXPECT_EQ(ListDirectory(dumps_).size(), 4u);
  EXPECT_EQ(ReadFile(Dumped(*module, "cu")), kTinyKernel);
  EXPECT_EQ(ReadFile(Dumped(*module, "ptx")), module->ptx);
  EXPECT_EQ(ReadFile(Dumped(*module, "log")), module->log);
  EXPECT_TRUE(Contains(module->log, "registers")) << "the log is ptxas's -v";
  EXPECT_EQ(ReadFile(Dumped(*module, "json")), ResourcesJson(*module) + "\n");
  EXPECT_TRUE(Warnings().empty());
  struct stat info;
  ASSERT_EQ(stat(dumps_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
}

// With a disassembler where the config says (here one that prints what
// it was given), the dump holds its SASS too, written before the .cu that
// completes a dump.
TEST_F(DumpTest, ADisassemblerAtHandAddsTheSass) {
  const std::string tools = FreshTestDirectory("tools");
  ASSERT_EQ(mkdir(tools.c_str(), 0700), 0) << tools;
  WriteFile(tools + "/nvdisasm",
            "#!/bin/sh\necho \"SASS of a cubin of $(wc -c < \"$1\") bytes\"\n");
  ASSERT_EQ(chmod((tools + "/nvdisasm").c_str(), 0755), 0);
  CacheConfig config{true, directory_};
  config.dump_directory = dumps_;
  config.disassembler_path = tools;
  auto module = Get(NewCache(std::move(config)));
  ASSERT_TRUE(module);
  EXPECT_EQ(ListDirectory(dumps_).size(), 5u);
  EXPECT_EQ(
      ReadFile(Dumped(*module, "sass")),
      absl::StrCat("SASS of a cubin of ", module->cubin.size(), " bytes\n"));
  EXPECT_TRUE(Warnings().empty());
}

TEST_F(DumpTest, AKernelLoadedFromDiskIsDumpedToo) {
  Get(NewCache());
  auto loaded = Get(DumpingCache());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->source, CacheSource::kDiskCache);
  EXPECT_EQ(ReadFile(Dumped(*loaded, "cu")), kTinyKernel);
  EXPECT_EQ(ReadFile(Dumped(*loaded, "log")), loaded->log);
}

// Another process compiling it again (no disk cache: a log with other
// ptxas times) finds it dumped and leaves the files as they are.
TEST_F(DumpTest, AKernelDumpedBeforeIsLeftAsItIs) {
  auto first = Get(DumpingCache(/*disk_enabled=*/false));
  ASSERT_TRUE(first);
  WriteFile(Dumped(*first, "log"), "the first process's log");
  auto again = Get(DumpingCache(/*disk_enabled=*/false));
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->cache_warnings.empty()) << again->cache_warnings[0];
  EXPECT_EQ(ReadFile(Dumped(*first, "log")), "the first process's log");
}

TEST_F(DumpTest, AFileInTheWayIsKeptAndTheKernelStillWorks) {
  ASSERT_EQ(mkdir(dumps_.c_str(), 0700), 0);
  const std::string key = KernelCacheKey("tiny", kTinyKernel, CompileOptions{});
  const std::string in_the_way =
      absl::StrCat(dumps_, "/tiny.", key.substr(0, 16), ".ptx");
  WriteFile(in_the_way, "someone else's notes");
  auto module = Get(DumpingCache());
  ASSERT_TRUE(module);
  EXPECT_FALSE(module->cubin.empty());
  ASSERT_EQ(module->cache_warnings.size(), 1u);
  EXPECT_TRUE(Contains(module->cache_warnings[0],
                       "kernel tiny not dumped (the kernel works)"));
  EXPECT_TRUE(Contains(module->cache_warnings[0], in_the_way));
  EXPECT_TRUE(Contains(module->cache_warnings[0], "not overwritten"));
  EXPECT_EQ(ReadFile(in_the_way), "someone else's notes");
  EXPECT_EQ(Warnings(), module->cache_warnings);
}

TEST_F(DumpTest, AFolderThatCannotBeMadeIsOneWarning) {
  WriteFile(dumps_, "a file where the folder belongs");
  KernelCache& cache = DumpingCache();
  auto module = Get(cache);
  ASSERT_TRUE(module);
  ASSERT_EQ(module->cache_warnings.size(), 1u);
  EXPECT_TRUE(Contains(module->cache_warnings[0],
                       "no kernels are dumped (PTXGEN_DUMP_DIR)"));
  EXPECT_TRUE(
      Get(cache, std::string(kTinyKernel) + "// b\n")->cache_warnings.empty())
      << "warned twice";
}

// ---- the size cap: least recently used entries go ----

TEST_F(CacheTest, TheSizeCapRemovesTheLeastRecentlyUsedEntries) {
  const std::string a = kTinyKernel, b = a + "// b\n", c = a + "// c\n";
  auto first = Get(NewCache(), a);
  auto second = Get(NewCache(), b);
  ASSERT_TRUE(first && second);
  const std::string entry_a = NewCache().EntryPath(first->cache_key);
  const std::string entry_b = NewCache().EntryPath(second->cache_key);
  SetAge(entry_a, 7200);
  SetAge(entry_b, 3600);
  // A disk hit is a use: a becomes the most recent.
  EXPECT_EQ(Get(NewCache(), a)->source, CacheSource::kDiskCache);

  CacheConfig config{true, directory_};
  config.max_bytes = FileBytes(entry_a) * 5 / 2;  // two entries, not three
  auto third = Get(NewCache(std::move(config)), c);
  ASSERT_TRUE(third);
  EXPECT_EQ(Names(directory_),
            (std::set<std::string>{first->cache_key + ".kernel",
                                   third->cache_key + ".kernel"}));
  EXPECT_TRUE(Warnings().empty());
}

TEST_F(CacheTest, TheEntryJustWrittenStaysEvenBeyondTheCap) {
  CacheConfig config{true, directory_};
  config.max_bytes = 1;
  auto module = Get(NewCache(std::move(config)));
  ASSERT_TRUE(module);
  EXPECT_EQ(Names(directory_),
            std::set<std::string>{module->cache_key + ".kernel"});
}

// ---- maintenance: what `ptxgen cache` shows and removes ----

class MaintenanceTest : public CacheTest {
 protected:
  // Entries of a, then b (a the older); `entry_a_`, `entry_b_` their paths.
  void SetUp() override {
    auto a = Get(NewCache(), kTinyKernel);
    auto b = Get(NewCache(), std::string(kTinyKernel) + "// b\n");
    ASSERT_TRUE(a && b);
    key_a_ = a->cache_key;
    key_b_ = b->cache_key;
    entry_a_ = NewCache().EntryPath(key_a_);
    entry_b_ = NewCache().EntryPath(key_b_);
    SetAge(entry_a_, 7200);
    SetAge(entry_b_, 3600);
  }

  std::vector<CacheEntryFile> Entries(KernelCache& cache) {
    absl::StatusOr<std::vector<CacheFolderContents>> contents =
        cache.Contents();
    EXPECT_TRUE(contents.ok()) << contents.status();
    return contents.ok() ? contents->front().entries
                         : std::vector<CacheEntryFile>();
  }

  std::string key_a_, key_b_, entry_a_, entry_b_;
};

TEST_F(MaintenanceTest, ContentsListsEachFolderItsEntriesOldestFirst) {
  CacheConfig config{true, directory_};
  config.read_only_directories = {FreshTestDirectory("absent")};
  absl::StatusOr<std::vector<CacheFolderContents>> contents =
      NewCache(std::move(config)).Contents();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->size(), 2u);
  const CacheFolderContents& writable = (*contents)[0];
  EXPECT_EQ(writable.path, directory_);
  EXPECT_TRUE(writable.writable);
  EXPECT_TRUE(writable.usable.ok());
  ASSERT_EQ(writable.entries.size(), 2u);
  EXPECT_EQ(writable.entries[0].file, key_a_ + ".kernel");
  EXPECT_EQ(writable.entries[0].folder, directory_);
  EXPECT_EQ(writable.entries[0].bytes, FileBytes(entry_a_));
  EXPECT_EQ(writable.entries[1].file, key_b_ + ".kernel");
  EXPECT_LT(writable.entries[0].last_use, writable.entries[1].last_use);
  EXPECT_FALSE((*contents)[1].writable);
  EXPECT_TRUE(absl::IsNotFound((*contents)[1].usable));
}

TEST_F(MaintenanceTest, OtherFilesAreNotEntries) {
  WriteFile(directory_ + "/notes.txt", "mine");
  WriteFile(entry_a_ + ".tmp.0123456789abcdef", "half an entry");
  EXPECT_EQ(Entries(NewCache()).size(), 2u);
}

TEST_F(MaintenanceTest, VerifyNamesTheModuleOrWhyAnEntryWouldNotBeUsed) {
  KernelCache& cache = NewCache();
  std::vector<CacheEntryFile> entries = Entries(cache);
  ASSERT_EQ(entries.size(), 2u);
  absl::StatusOr<std::string> valid = cache.Verify(entries[0]);
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(*valid, "tiny");

  const std::string bytes = ReadFile(entry_a_);
  WriteFile(entry_a_, bytes.substr(0, bytes.size() / 2));
  EXPECT_TRUE(Contains(cache.Verify(entries[0]).status().message(),
                       "checksum mismatch"));
  // Intact, but filed under another key.
  WriteFile(entry_a_, ReadFile(entry_b_));
  EXPECT_TRUE(
      Contains(cache.Verify(entries[0]).status().message(), "another key"));
}

TEST_F(MaintenanceTest, PruneRemovesInvalidEntriesThenTheLeastRecentlyUsed) {
  const std::string corrupt =
      directory_ + "/" + std::string(64, 'c') + ".kernel";
  WriteFile(corrupt, "not an entry");
  KernelCache& cache = NewCache();
  absl::StatusOr<std::vector<CacheEntryFile>> removed = cache.Prune(0);
  ASSERT_TRUE(removed.ok()) << removed.status();
  ASSERT_EQ(removed->size(), 1u);
  EXPECT_EQ((*removed)[0].file, std::string(64, 'c') + ".kernel");
  EXPECT_EQ(Entries(cache).size(), 2u);

  removed = cache.Prune(FileBytes(entry_b_));
  ASSERT_TRUE(removed.ok()) << removed.status();
  ASSERT_EQ(removed->size(), 1u);
  EXPECT_EQ((*removed)[0].file, key_a_ + ".kernel");
  EXPECT_EQ(Names(directory_), std::set<std::string>{key_b_ + ".kernel"});
}

// Prune lists the stale temporaries it removed with the entries; the
// user's files stay, whatever their names hold.
TEST_F(MaintenanceTest, PruneRemovesStaleTemporariesOfEntriesAlone) {
  const std::string stale = Temporary('c', "00000000deadbeef");
  for (const std::string& name : {stale, std::string("thesis.tmp.tex")}) {
    WriteFile(directory_ + "/" + name, "half");
    SetAge(directory_ + "/" + name, 7200);
  }
  absl::StatusOr<std::vector<CacheEntryFile>> removed = NewCache().Prune(0);
  ASSERT_TRUE(removed.ok()) << removed.status();
  ASSERT_EQ(removed->size(), 1u);
  EXPECT_EQ((*removed)[0].file, stale);
  EXPECT_EQ((*removed)[0].folder, directory_);
  EXPECT_EQ((*removed)[0].bytes, 4);
  EXPECT_EQ(Names(directory_),
            (std::set<std::string>{"thesis.tmp.tex", key_a_ + ".kernel",
                                   key_b_ + ".kernel"}));
}

// Removing is for the folder the environment named: when PTXGEN_CACHE_DIR
// was refused, the folder used in its place is left alone.
TEST_F(MaintenanceTest, PruneAndClearRefuseAStandInForARefusedVariable) {
  CacheConfig config{true, directory_};
  config.refused_variable = "PTXGEN_CACHE_DIR";
  KernelCache& cache = NewCache(std::move(config));
  for (const absl::Status& status :
       {cache.Clear().status(), cache.Prune(1).status()}) {
    ASSERT_TRUE(absl::IsFailedPrecondition(status)) << status;
    EXPECT_TRUE(Contains(status.message(),
                         "PTXGEN_CACHE_DIR is set but refused (not an "
                         "absolute path), so nothing is removed from " +
                             directory_))
        << status;
  }
  EXPECT_EQ(Entries(cache).size(), 2u);
}

// `ptxgen cache` hears what a lookup would: the configuration's warnings,
// once per cache.
TEST_F(MaintenanceTest, MaintenanceReportsTheConfigurationsWarningsOnce) {
  CacheConfig config{true, directory_};
  config.warnings = {"PTXGEN_CACHE_MAX_BYTES: '100KB' is not a byte count"};
  KernelCache& cache = NewCache(std::move(config));
  ASSERT_TRUE(cache.Contents().ok());
  ASSERT_TRUE(cache.Prune(0).ok());
  ASSERT_TRUE(cache.Clear().ok());
  Get(cache);
  EXPECT_EQ(Warnings(), std::vector<std::string>{
                            "PTXGEN_CACHE_MAX_BYTES: '100KB' is not a byte "
                            "count"});
}

TEST_F(MaintenanceTest, ClearRemovesEveryEntryAndNothingElse) {
  ASSERT_EQ(mkdir((directory_ + "/autotune").c_str(), 0700), 0);
  WriteFile(directory_ + "/notes.txt", "mine");
  absl::StatusOr<std::vector<CacheEntryFile>> removed = NewCache().Clear();
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->size(), 2u);
  EXPECT_EQ(Names(directory_),
            (std::set<std::string>{"autotune", "notes.txt"}));
}

TEST_F(CacheTest, MaintenanceOfAFolderNotThereYetFindsNothing) {
  KernelCache& cache = NewCache();
  absl::StatusOr<std::vector<CacheFolderContents>> contents = cache.Contents();
  ASSERT_TRUE(contents.ok());
  EXPECT_TRUE(absl::IsNotFound(contents->front().usable));
  EXPECT_TRUE(cache.Prune(0).value().empty());
  EXPECT_TRUE(cache.Clear().value().empty());
}

TEST_F(CacheTest, MaintenanceWithTheDiskOffSaysSo) {
  KernelCache& cache = NewCache(/*disk_enabled=*/false);
  EXPECT_TRUE(
      Contains(cache.Contents().status().message(), "the disk cache is off"));
  EXPECT_TRUE(absl::IsFailedPrecondition(cache.Clear().status()));
}

// ---- concurrency within a process ----

TEST_F(CacheTest, ConcurrentThreadsShareOneCompilation) {
  KernelCache& cache = NewCache();
  constexpr int kThreads = 8;
  std::vector<std::shared_ptr<const CompiledModule>> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { results[i] = Get(cache); });
  }
  for (std::thread& thread : threads) thread.join();
  int compiled = 0;
  for (const auto& result : results) {
    ASSERT_TRUE(result);
    EXPECT_TRUE(result->cubin == results[0]->cubin);
    compiled += result->source == CacheSource::kCompiled ? 1 : 0;
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(ListDirectory(directory_).size(), 1u);
  EXPECT_TRUE(Warnings().empty());
}

TEST_F(CacheTest, ConcurrentThreadsWithDifferentKernels) {
  KernelCache& cache = NewCache();
  constexpr int kThreads = 4;
  std::vector<std::shared_ptr<const CompiledModule>> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      results[i] =
          Get(cache, absl::StrCat(kTinyKernel, "// variant ", i, "\n"));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& result : results) {
    ASSERT_TRUE(result);
    EXPECT_EQ(result->source, CacheSource::kCompiled);
  }
  EXPECT_EQ(ListDirectory(directory_).size(), 4u);
}

}  // namespace
}  // namespace ptxgen::compile
