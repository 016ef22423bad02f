// TrustedFolder: the trust rule every folder and file ptxgen keeps between
// processes must pass before it is believed.
#include "ptxgen/compile/files.h"

#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "tests/compile/test_support.h"

namespace ptxgen::compile {
namespace {

constexpr char kMagic[] = "MAGIC 1\n";

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class TrustedFolderTest : public ::testing::Test {
 protected:
  TrustedFolder Made() {
    absl::StatusOr<TrustedFolder> folder = TrustedFolder::Open(path_, true);
    EXPECT_TRUE(folder.ok()) << folder.status();
    return *std::move(folder);
  }

  const std::string path_ = FreshTestDirectory();
};

TEST_F(TrustedFolderTest, ARelativePathIsRefused) {
  absl::StatusOr<TrustedFolder> folder = TrustedFolder::Open("cache/dir", true);
  EXPECT_TRUE(absl::IsInvalidArgument(folder.status())) << folder.status();
  EXPECT_TRUE(Contains(folder.status().message(), "not an absolute path"));
}

TEST_F(TrustedFolderTest, AMissingFolderIsNotFoundUnlessCreated) {
  EXPECT_TRUE(absl::IsNotFound(TrustedFolder::Open(path_, false).status()));
  Made();
  EXPECT_TRUE(TrustedFolder::Open(path_, false).ok());
}

TEST_F(TrustedFolderTest, AFolderOthersMayWriteIsRefusedNamingTheRule) {
  ASSERT_EQ(mkdir(path_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(path_.c_str(), 0757), 0);
  absl::StatusOr<TrustedFolder> folder = TrustedFolder::Open(path_, true);
  ASSERT_TRUE(absl::IsPermissionDenied(folder.status())) << folder.status();
  EXPECT_TRUE(Contains(folder.status().message(), path_));
  EXPECT_TRUE(Contains(folder.status().message(), "mode 0757"));
  EXPECT_TRUE(Contains(folder.status().message(),
                       "owned by the effective user"));
}

TEST_F(TrustedFolderTest, WrittenFilesReadBackWithTheirMagic) {
  TrustedFolder folder = Made();
  ASSERT_TRUE(folder.WriteFileAtomically("entry", std::string(kMagic) + "body").ok());
  absl::StatusOr<std::string> bytes = folder.ReadFile("entry", kMagic, 1000);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, std::string(kMagic) + "body");
  EXPECT_EQ(ListDirectory(path_), std::vector<std::string>{"entry"});
}

TEST_F(TrustedFolderTest, ReadFileSaysWhyItRefuses) {
  TrustedFolder folder = Made();
  WriteFile(path_ + "/other", "OTHER 1\nbody");
  WriteFile(path_ + "/short", "MAG");
  WriteFile(path_ + "/large", std::string(kMagic) + std::string(100, 'x'));
  ASSERT_EQ(mkdir((path_ + "/folder").c_str(), 0700), 0);
  const struct {
    const char* name;
    absl::StatusCode code;
    const char* reason;
  } kCases[] = {
      {"missing", absl::StatusCode::kNotFound, "no file"},
      {"other", absl::StatusCode::kDataLoss, "a foreign file"},
      {"short", absl::StatusCode::kDataLoss, "truncated inside its magic line"},
      {"large", absl::StatusCode::kFailedPrecondition, "more than the 64"},
      {"folder", absl::StatusCode::kFailedPrecondition, "not a regular file"},
      {"../escape", absl::StatusCode::kInvalidArgument, "not a file name"},
  };
  for (const auto& c : kCases) {
    absl::StatusOr<std::string> bytes = folder.ReadFile(c.name, kMagic, 64);
    EXPECT_EQ(bytes.status().code(), c.code) << c.name << ": " << bytes.status();
    EXPECT_TRUE(Contains(bytes.status().message(), c.reason))
        << c.name << ": " << bytes.status();
  }
}

TEST_F(TrustedFolderTest, SubfoldersFollowTheSameRuleAndNoLinks) {
  TrustedFolder folder = Made();
  ASSERT_TRUE(folder.Subfolder("records", true).ok());
  ASSERT_EQ(symlink(path_.c_str(), (path_ + "/linked").c_str()), 0);
  EXPECT_TRUE(Contains(folder.Subfolder("linked", false).status().message(),
                       "symbolic link"));
  ASSERT_EQ(mkdir((path_ + "/open").c_str(), 0700), 0);
  ASSERT_EQ(chmod((path_ + "/open").c_str(), 0777), 0);
  EXPECT_TRUE(absl::IsPermissionDenied(folder.Subfolder("open", false).status()));
}

// Temporaries of writers that died: deleted once an hour old, not sooner.
TEST_F(TrustedFolderTest, StaleTemporariesAreSweptYoungOnesKept) {
  TrustedFolder folder = Made();
  WriteFile(path_ + "/x.tmp.dead", "half");
  WriteFile(path_ + "/x.tmp.alive", "half");
  const struct timeval two_hours_ago[2] = {{time(nullptr) - 7200, 0},
                                           {time(nullptr) - 7200, 0}};
  ASSERT_EQ(utimes((path_ + "/x.tmp.dead").c_str(), two_hours_ago), 0);
  folder.RemoveStaleTemporaries(kStaleTemporarySeconds);
  EXPECT_EQ(ListDirectory(path_), std::vector<std::string>{"x.tmp.alive"});
}

}  // namespace
}  // namespace ptxgen::compile
