#include "ptxgen/compile/kernel_cache.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "tests/compile/test_kernels.h"
#include "tests/compile/test_support.h"

namespace ptxgen::compile {
namespace {

using test_kernels::kTinyKernel;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A cache over a fresh directory whose warnings are collected, not printed.
class CacheTest : public ::testing::Test {
 protected:
  KernelCache& NewCache(bool disk_enabled = true) {
    caches_.push_back(
        std::make_unique<KernelCache>(CacheConfig{disk_enabled, directory_}));
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
  EXPECT_EQ(Get(cache, a)->source, CacheSource::kMemoryCache);  // a is newer than b
  Get(cache, c);                                                  // drops b
  EXPECT_EQ(Get(cache, a)->source, CacheSource::kMemoryCache);
  EXPECT_EQ(Get(cache, c)->source, CacheSource::kMemoryCache);
  EXPECT_EQ(Get(cache, b)->source, CacheSource::kDiskCache);
}

TEST_F(CacheTest, TemporariesOfDeadWritersAreDeletedOnAWrite) {
  ASSERT_EQ(mkdir(directory_.c_str(), 0700), 0);
  const std::string stale = directory_ + "/x.kernel.tmp.4242.0";
  const std::string fresh = directory_ + "/y.kernel.tmp.4243.0";
  WriteFile(stale, "half an entry");
  WriteFile(fresh, "an entry being written");
  const struct timeval two_hours_ago[2] = {{time(nullptr) - 7200, 0},
                                           {time(nullptr) - 7200, 0}};
  ASSERT_EQ(utimes(stale.c_str(), two_hours_ago), 0);
  auto module = Get(NewCache());
  ASSERT_TRUE(module);
  const std::vector<std::string> files = ListDirectory(directory_);
  const std::set<std::string> names(files.begin(), files.end());
  EXPECT_EQ(names, (std::set<std::string>{"y.kernel.tmp.4243.0",
                                          module->cache_key + ".kernel"}));
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
      [](std::string bytes) { return bytes.substr(0, bytes.size() / 2); },
      "checksum mismatch");
}

TEST_F(CorruptEntryTest, TruncatedToAlmostNothing) {
  ExpectRecovery([](std::string bytes) { return bytes.substr(0, 30); },
                 "truncated");
}

TEST_F(CorruptEntryTest, EmptyFile) {
  ExpectRecovery([](std::string) { return std::string(); }, "truncated");
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
      [](std::string) {
        return std::string(
            "\x7f"
            "ELF not ours");
      },
      "foreign file");
}

TEST_F(CorruptEntryTest, ValidEntryOfAnotherRequest) {
  // Intact and checksummed, but written for other source: never used.
  ExpectRecovery(
      [this](std::string) {
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
      {[&] { ASSERT_EQ(mkfifo(path.c_str(), 0644), 0); }, "is not a regular file"},
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
  EXPECT_TRUE(Contains(module->cache_warnings[0], "kernel cache folder not used"));
  EXPECT_TRUE(Contains(module->cache_warnings[0], "Not a directory"));
  cache.ClearMemory();
  EXPECT_TRUE(Get(cache)->cache_warnings.empty()) << "warned twice";
  EXPECT_EQ(ReadFile(directory_), "in the way");
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
