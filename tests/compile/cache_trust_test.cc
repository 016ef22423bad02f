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
    return absl::FailedPreconditionError(
        absl::StrCat("chown to uid ", kOtherUser, " fails here: ", strerror(errno)));
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
  KernelCache& Cache(const std::string& directory) {
    caches_.push_back(std::make_unique<KernelCache>(CacheConfig{true, directory}));
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
    const std::string folder = FreshTestDirectory("planted");
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
    EXPECT_TRUE(Contains(warning, "not writable by group or others")) << warning;
    cache.ClearMemory();
    EXPECT_TRUE(Lookup(cache)->cache_warnings.empty()) << "warned twice";
    EXPECT_EQ(ListDirectory(folder), before) << "the cache wrote into it";
  }

  // The entry is a miss with one warning naming `reason`; the recompiled
  // entry replaces it, and the next process hits that one.
  void ExpectEntryRefused(const std::string& folder, const std::string& reason) {
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
    std::ofstream(absl::StrCat(EntryIn(folder), ".tmp.", getpid(), ".", counter))
        << "left by a dead writer";
  }
  auto module = Lookup(Cache(folder));
  ASSERT_TRUE(module);
  EXPECT_TRUE(module->cache_warnings.empty()) << module->cache_warnings[0];
  EXPECT_EQ(Lookup(Cache(folder))->source, CacheSource::kDiskCache);
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
