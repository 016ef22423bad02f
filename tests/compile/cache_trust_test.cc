// The kernel cache runs only what its owner compiled: a planted entry (or a
// folder others can write to) is never loaded, whatever its checksum says.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/kernel_cache.h"
#include "tests/compile/test_kernels.h"
#include "tests/compile/test_support.h"

namespace ptxgen::compile {
namespace {

using test_kernels::kTinyKernel;

// The uid the tests give to "another user" where they may (as root).
constexpr uid_t kOtherUser = 65534;

// Gives `path` to kOtherUser, or says why that cannot be done here.
absl::Status GiveAway(const std::string& path) {
  if (geteuid() != 0) {
    return absl::FailedPreconditionError("giving a file away needs root");
  }
  if (chown(path.c_str(), kOtherUser, kOtherUser) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "chown to uid ", kOtherUser, " fails here: ", strerror(errno)));
  }
  return absl::OkStatus();
}

void CopyFile(const std::string& from, const std::string& to) {
  std::ofstream(to, std::ios::binary | std::ios::trunc) << ReadFile(from);
}

// A trusted cache compiles the tiny kernel once: its entry is a valid,
// checksummed file that an attacker could copy anywhere (or an innocent
// process could have written under another user).
class CacheTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KernelCache source(CacheConfig{true, FreshTestDirectory("source")});
    auto module = source.GetOrCompile("tiny", kTinyKernel, {});
    ASSERT_TRUE(module.ok()) << module.status();
    valid_entry_ = source.EntryPath((*module)->cache_key);
    key_ = (*module)->cache_key;
  }

  // A cache over `directory` whose warnings are collected.
  KernelCache& Cache(const std::string& directory,
                     std::vector<std::string> read_only = {}) {
    CacheConfig config{true, directory};
    config.read_only_directories = std::move(read_only);
    caches_.push_back(std::make_unique<KernelCache>(std::move(config)));
    caches_.back()->SetWarningSink([this](absl::string_view warning) {
      absl::MutexLock lock(&mutex_);
      warnings_.emplace_back(warning);
    });
    return *caches_.back();
  }

  std::shared_ptr<const CompiledModule> Lookup(KernelCache& cache) {
    auto module = cache.GetOrCompile("tiny", kTinyKernel, {});
    EXPECT_TRUE(module.ok()) << module.status();
    return module.ok() ? *module : nullptr;
  }

  // A folder holding a copy of the valid entry, with `folder_mode`.
  std::string PlantedFolder(mode_t folder_mode) {
    std::string folder = FreshTestDirectory("planted");
    EXPECT_EQ(mkdir(folder.c_str(), 0700), 0);
    CopyFile(valid_entry_, EntryIn(folder));
    EXPECT_EQ(chmod(folder.c_str(), folder_mode), 0);
    return folder;
  }

  std::string EntryIn(const std::string& folder) const {
    return absl::StrCat(folder, "/", key_, ".kernel");
  }

  std::vector<std::string> Warnings() {
    absl::MutexLock lock(&mutex_);
    return warnings_;
  }

  // The folder is refused whole: compiled, one warning naming the folder,
  // its mode and the rule, and nothing read or written there.
  void ExpectFolderRefused(const std::string& folder, const std::string& mode) {
    const std::vector<std::string> before = ListDirectory(folder);
    KernelCache& cache = Cache(folder);
    auto module = Lookup(cache);
    ASSERT_TRUE(module);
    EXPECT_EQ(module->source, CacheSource::kCompiled);
    ASSERT_EQ(module->cache_warnings.size(), 1u);
    const std::string& warning = module->cache_warnings[0];
    EXPECT_TRUE(Contains(warning, "kernel cache folder not used")) << warning;
    EXPECT_TRUE(Contains(warning, folder)) << warning;
    EXPECT_TRUE(Contains(warning, "mode " + mode)) << warning;
    EXPECT_TRUE(Contains(warning, "not writable by group or others"))
        << warning;
    cache.ClearMemory();
    EXPECT_TRUE(Lookup(cache)->cache_warnings.empty()) << "warned twice";
    EXPECT_EQ(ListDirectory(folder), before) << "the cache wrote into it";
  }

  // The entry is a miss with one warning naming `reason`; the recompiled
  // entry replaces it, and the next process hits that one.
  void ExpectEntryRefused(const std::string& folder,
                          const std::string& reason) {
    auto module = Lookup(Cache(folder));
    ASSERT_TRUE(module);
    EXPECT_EQ(module->source, CacheSource::kCompiled);
    ASSERT_EQ(module->cache_warnings.size(), 1u);
    EXPECT_TRUE(Contains(module->cache_warnings[0], reason))
        << module->cache_warnings[0];
    EXPECT_EQ(Lookup(Cache(folder))->source, CacheSource::kDiskCache);
  }

  std::string valid_entry_;
  std::string key_;
  std::vector<std::unique_ptr<KernelCache>> caches_;
  absl::Mutex mutex_;
  std::vector<std::string> warnings_;
};

TEST_F(CacheTrustTest, AValidEntryInATrustedFolderIsAHit) {
  const std::string folder = PlantedFolder(0700);
  EXPECT_EQ(Lookup(Cache(folder))->source, CacheSource::kDiskCache);
  EXPECT_TRUE(Warnings().empty());
}

TEST_F(CacheTrustTest, AWorldWritableFolderIsNotUsedAtAll) {
  ExpectFolderRefused(PlantedFolder(0777), "0777");
}

TEST_F(CacheTrustTest, AGroupWritableFolderIsNotUsedAtAll) {
  ExpectFolderRefused(PlantedFolder(0770), "0770");
}

TEST_F(CacheTrustTest, AStickyWorldWritableFolderIsNotUsedEither) {
  // /tmp's mode: others cannot replace our files, but they can plant theirs.
  ExpectFolderRefused(PlantedFolder(01777), "1777");
}

TEST_F(CacheTrustTest, AFolderOfAnotherOwnerIsNotUsedAtAll) {
  const std::string folder = PlantedFolder(0755);
  if (absl::Status given = GiveAway(folder); !given.ok()) {
    GTEST_SKIP() << given.message();
  }
  ExpectFolderRefused(folder, "0755");
  ASSERT_FALSE(Warnings().empty());
  EXPECT_TRUE(Contains(Warnings().front(), absl::StrCat("uid ", kOtherUser)));
}

TEST_F(CacheTrustTest, ALinkToATrustedFolderIsFollowed) {
  const std::string folder = PlantedFolder(0700);
  const std::string link = FreshTestDirectory("link");
  ASSERT_EQ(symlink(folder.c_str(), link.c_str()), 0);
  EXPECT_EQ(Lookup(Cache(link))->source, CacheSource::kDiskCache);
}

TEST_F(CacheTrustTest, ALinkToAnUntrustedFolderIsNotUsed) {
  const std::string folder = PlantedFolder(0777);
  const std::string link = FreshTestDirectory("link");
  ASSERT_EQ(symlink(folder.c_str(), link.c_str()), 0);
  ExpectFolderRefused(link, "0777");
}

TEST_F(CacheTrustTest, AWorldWritableEntryIsRefused) {
  const std::string folder = PlantedFolder(0700);
  ASSERT_EQ(chmod(EntryIn(folder).c_str(), 0666), 0);
  ExpectEntryRefused(folder, "mode 0666");
}

TEST_F(CacheTrustTest, AnEntryOfAnotherOwnerIsRefused) {
  const std::string folder = PlantedFolder(0700);
  if (absl::Status given = GiveAway(EntryIn(folder)); !given.ok()) {
    GTEST_SKIP() << given.message();
  }
  ExpectEntryRefused(folder, absl::StrCat("owner uid ", kOtherUser));
}

TEST_F(CacheTrustTest, ALinkInPlaceOfAnEntryIsNotFollowed) {
  const std::string folder = PlantedFolder(0700);
  ASSERT_EQ(unlink(EntryIn(folder).c_str()), 0);
  ASSERT_EQ(symlink(valid_entry_.c_str(), EntryIn(folder).c_str()), 0);
  ExpectEntryRefused(folder, "is a symbolic link");
}

// Defect: a 1 GiB file cost 12 s and 1 GB of memory before its rejection.
// Now its size alone refuses it, before a byte is read.
TEST_F(CacheTrustTest, AnOversizedEntryIsRefusedBeforeItIsRead) {
  const std::string folder = PlantedFolder(0700);
  const int fd = open(EntryIn(folder).c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, int64_t{1} << 30), 0);  // sparse: no disk used
  close(fd);
  ExpectEntryRefused(folder, "holds 1073741824 bytes, more than the");
}

// Defect: temporaries were named path.tmp.<pid>.<counter>, so a stale one
// of a dead process with the same PID (PID 1 in every container) made each
// write fail and warn for an hour. The names are random now.
TEST_F(CacheTrustTest, TemporariesNamedAsTheOldSchemeWouldDoNotBlockWrites) {
  const std::string folder = FreshTestDirectory("fresh");
  ASSERT_EQ(mkdir(folder.c_str(), 0700), 0);
  for (int counter = 0; counter < 4; ++counter) {
    std::ofstream(
        absl::StrCat(EntryIn(folder), ".tmp.", getpid(), ".", counter))
        << "left by a dead writer";
  }
  auto module = Lookup(Cache(folder));
  ASSERT_TRUE(module);
  EXPECT_TRUE(module->cache_warnings.empty()) << module->cache_warnings[0];
  EXPECT_EQ(Lookup(Cache(folder))->source, CacheSource::kDiskCache);
}

// ---- read-only folders (PTXGEN_CACHE_PATH): bundles ----

// The modification time of `path`, in ns.
int64_t ModifiedNs(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return -1;
  return int64_t{info.st_mtim.tv_sec} * 1000000000 + info.st_mtim.tv_nsec;
}

TEST_F(CacheTrustTest,
       AReadOnlyFolderIsSearchedAfterTheWritableOneAndOnlyRead) {
  const std::string bundle = PlantedFolder(0700);
  const std::string writable = FreshTestDirectory("writable");
  const int64_t before = ModifiedNs(EntryIn(bundle));
  auto module = Lookup(Cache(writable, {FreshTestDirectory("absent"), bundle}));
  ASSERT_TRUE(module);
  EXPECT_EQ(module->source, CacheSource::kDiskCache);
  // One warning: the absent folder, skipped; the bundle answered.
  ASSERT_EQ(module->cache_warnings.size(), 1u);
  EXPECT_TRUE(Contains(module->cache_warnings[0],
                       "read-only kernel cache folder skipped: no folder"));
  EXPECT_EQ(ListDirectory(bundle), std::vector<std::string>{key_ + ".kernel"});
  EXPECT_EQ(ModifiedNs(EntryIn(bundle)), before)
      << "a bundle's entry was touched";
  EXPECT_TRUE(ListDirectory(writable).empty())
      << "a hit wrote to the writable folder";
}

TEST_F(CacheTrustTest, TheWritableFolderIsAskedFirst) {
  const std::string writable = PlantedFolder(0700);
  const std::string bundle = FreshTestDirectory("bundle");
  ASSERT_EQ(mkdir(bundle.c_str(), 0700), 0);
  CopyFile(valid_entry_, EntryIn(bundle));
  ASSERT_EQ(chmod(EntryIn(bundle).c_str(), 0666), 0);  // would be refused
  auto module = Lookup(Cache(writable, {bundle}));
  ASSERT_TRUE(module);
  EXPECT_EQ(module->source, CacheSource::kDiskCache);
  EXPECT_TRUE(module->cache_warnings.empty()) << module->cache_warnings[0];
}

// A bundle others may write is not used at all: one warning naming the
// folder, its mode and the rule; the kernel is compiled into the writable
// folder and nothing in the bundle changes.
TEST_F(CacheTrustTest, AReadOnlyFolderOthersMayWriteIsSkipped) {
  for (const mode_t mode : {mode_t{0777}, mode_t{0770}}) {
    const std::string bundle = PlantedFolder(mode);
    const std::string writable =
        FreshTestDirectory(absl::StrCat("writable", mode));
    KernelCache& cache = Cache(writable, {bundle});
    auto module = Lookup(cache);
    ASSERT_TRUE(module);
    EXPECT_EQ(module->source, CacheSource::kCompiled);
    ASSERT_EQ(module->cache_warnings.size(), 1u);
    const std::string& warning = module->cache_warnings[0];
    EXPECT_TRUE(Contains(warning, "read-only kernel cache folder skipped"))
        << warning;
    EXPECT_TRUE(Contains(warning, bundle)) << warning;
    EXPECT_TRUE(Contains(warning, absl::StrFormat("mode %04o", mode)))
        << warning;
    EXPECT_TRUE(Contains(warning, "not writable by group or others"))
        << warning;
    EXPECT_EQ(ListDirectory(bundle),
              std::vector<std::string>{key_ + ".kernel"});
    EXPECT_EQ(ListDirectory(writable),
              std::vector<std::string>{key_ + ".kernel"});
    cache.ClearMemory();
    EXPECT_TRUE(Lookup(cache)->cache_warnings.empty()) << "warned twice";
    // Cleaned up so that PlantedFolder can make it again.
    ASSERT_EQ(chmod(bundle.c_str(), 0700), 0);
    ASSERT_EQ(unlink(EntryIn(bundle).c_str()), 0);
    ASSERT_EQ(rmdir(bundle.c_str()), 0);
  }
}

TEST_F(CacheTrustTest, AReadOnlyFolderOfAnotherOwnerIsSkipped) {
  const std::string bundle = PlantedFolder(0755);
  if (absl::Status given = GiveAway(bundle); !given.ok()) {
    GTEST_SKIP() << given.message();
  }
  auto module = Lookup(Cache(FreshTestDirectory("writable"), {bundle}));
  ASSERT_TRUE(module);
  EXPECT_EQ(module->source, CacheSource::kCompiled);
  ASSERT_EQ(module->cache_warnings.size(), 1u);
  EXPECT_TRUE(
      Contains(module->cache_warnings[0], absl::StrCat("uid ", kOtherUser)));
}

// An entry that fails the rule in a trusted bundle is not used, and stays:
// the cache never writes there.
TEST_F(CacheTrustTest, AnUntrustedEntryOfAReadOnlyFolderIsLeftAsItIs) {
  const std::string bundle = PlantedFolder(0700);
  ASSERT_EQ(chmod(EntryIn(bundle).c_str(), 0666), 0);
  const std::string writable = FreshTestDirectory("writable");
  auto module = Lookup(Cache(writable, {bundle}));
  ASSERT_TRUE(module);
  EXPECT_EQ(module->source, CacheSource::kCompiled);
  ASSERT_EQ(module->cache_warnings.size(), 1u);
  EXPECT_TRUE(
      Contains(module->cache_warnings[0], "read-only kernel cache entry"));
  EXPECT_TRUE(Contains(module->cache_warnings[0], "mode 0666"));
  EXPECT_EQ(ReadFile(EntryIn(bundle)), ReadFile(valid_entry_));
  EXPECT_EQ(ListDirectory(writable),
            std::vector<std::string>{key_ + ".kernel"});
}

TEST_F(CacheTrustTest, TheFoldersItCreatesAreOnlyItsOwners) {
  const std::string root = FreshTestDirectory("made");
  const std::string folder = root + "/a/b";
  ASSERT_TRUE(Lookup(Cache(folder)));
  for (const std::string& made : {root, root + "/a", folder}) {
    struct stat info;
    ASSERT_EQ(stat(made.c_str(), &info), 0) << made;
    EXPECT_EQ(info.st_mode & 0777, 0700u) << made;
    EXPECT_EQ(info.st_uid, geteuid()) << made;
  }
}

}  // namespace
}  // namespace ptxgen::compile
