// TrustedFolder: the trust rule every folder and file ptxgen keeps between
// processes must pass before it is believed.
#include "ptxgen/compile/files.h"

#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <functional>
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

// Nothing is created through a link: a link to a missing folder would
// otherwise make every lookup miss, and every write vanish, without a word.
TEST_F(TrustedFolderTest, ALinkToAMissingFolderIsRefusedByName) {
  const std::string target = path_ + ".missing";
  ASSERT_EQ(symlink(target.c_str(), path_.c_str()), 0);
  for (const bool create : {false, true}) {
    absl::StatusOr<TrustedFolder> folder = TrustedFolder::Open(path_, create);
    ASSERT_TRUE(absl::IsFailedPrecondition(folder.status()))
        << create << " " << folder.status();
    EXPECT_TRUE(Contains(folder.status().message(),
                         path_ + " is a symbolic link to a missing folder"))
        << folder.status();
  }
  absl::StatusOr<TrustedFolder> below =
      TrustedFolder::Open(path_ + "/sub", /*create=*/true);
  EXPECT_TRUE(absl::IsFailedPrecondition(below.status())) << below.status();
  struct stat info;
  EXPECT_NE(stat(target.c_str(), &info), 0) << "created through the link";
}

// A path may hold any byte but NUL: quoted in a message it stays on its
// line.
TEST_F(TrustedFolderTest, MessagesShowAPathsControlBytesEscaped) {
  absl::StatusOr<TrustedFolder> folder =
      TrustedFolder::Open(path_ + "\nptxgen: error: forged", false);
  ASSERT_TRUE(absl::IsNotFound(folder.status())) << folder.status();
  EXPECT_TRUE(
      Contains(folder.status().message(), path_ + "\\x0aptxgen: error: forged"))
      << folder.status();
  EXPECT_FALSE(Contains(folder.status().message(), "\n"));
}

TEST_F(TrustedFolderTest, AFolderOthersMayWriteIsRefusedNamingTheRule) {
  ASSERT_EQ(mkdir(path_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(path_.c_str(), 0757), 0);
  absl::StatusOr<TrustedFolder> folder = TrustedFolder::Open(path_, true);
  ASSERT_TRUE(absl::IsPermissionDenied(folder.status())) << folder.status();
  EXPECT_TRUE(Contains(folder.status().message(), path_));
  EXPECT_TRUE(Contains(folder.status().message(), "mode 0757"));
  EXPECT_TRUE(
      Contains(folder.status().message(), "owned by the effective user"));
}

TEST_F(TrustedFolderTest, WrittenFilesReadBackWithTheirMagic) {
  TrustedFolder folder = Made();
  ASSERT_TRUE(
      folder.WriteFileAtomically("entry", std::string(kMagic) + "body").ok());
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
    EXPECT_EQ(bytes.status().code(), c.code)
        << c.name << ": " << bytes.status();
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
  EXPECT_TRUE(
      absl::IsPermissionDenied(folder.Subfolder("open", false).status()));
}

// Makes `path` two hours old: a stale temporary's age.
void MakeStale(const std::string& path) {
  const struct timeval two_hours_ago[2] = {{time(nullptr) - 7200, 0},
                                           {time(nullptr) - 7200, 0}};
  ASSERT_EQ(utimes(path.c_str(), two_hours_ago), 0) << path;
}

bool WritesX(absl::string_view name) { return name == "x"; }

// Temporaries of writers that died: deleted once an hour old, not sooner.
TEST_F(TrustedFolderTest, StaleTemporariesAreSweptYoungOnesKept) {
  TrustedFolder folder = Made();
  WriteFile(path_ + "/x.tmp.00000000000000de", "half");
  WriteFile(path_ + "/x.tmp.00000000000000a1", "half");
  MakeStale(path_ + "/x.tmp.00000000000000de");
  const std::vector<FolderFile> removed =
      folder.RemoveStaleTemporaries(kStaleTemporarySeconds, WritesX);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].name, "x.tmp.00000000000000de");
  EXPECT_EQ(removed[0].bytes, 4);
  EXPECT_EQ(ListDirectory(path_),
            std::vector<std::string>{"x.tmp.00000000000000a1"});
}

// The user's own files may hold ".tmp." too (thesis.tmp.tex): only the
// exact form a writer gives its temporaries, for a name it writes, is
// ever deleted.
TEST_F(TrustedFolderTest,
       OnlyFilesNamedAsTemporariesOfTheWritersNamesAreSwept) {
  TrustedFolder folder = Made();
  const std::vector<std::string> users = {"thesis.tmp.tex",
                                          "x.tmp.0123456789abcde",
                                          "x.tmp.0123456789abcdef0",
                                          "x.tmp.0123456789ABCDEF",
                                          "x.tmp.0123456789abcdeg",
                                          "y.tmp.0123456789abcdef",
                                          "x.tmp.0123456789abcdef.bak",
                                          ".tmp.0123456789abcdef"};
  for (const std::string& name : users) {
    WriteFile(path_ + "/" + name, "precious");
    MakeStale(path_ + "/" + name);
  }
  WriteFile(path_ + "/x.tmp.0123456789abcdef", "half");
  MakeStale(path_ + "/x.tmp.0123456789abcdef");
  const std::vector<FolderFile> removed =
      folder.RemoveStaleTemporaries(kStaleTemporarySeconds, WritesX);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].name, "x.tmp.0123456789abcdef");
  const std::vector<std::string> left = ListDirectory(path_);
  EXPECT_EQ(std::set<std::string>(left.begin(), left.end()),
            std::set<std::string>(users.begin(), users.end()));
}

// A dump must never replace what is there: the same bytes again are fine,
// other bytes are refused and the file keeps its own.
TEST_F(TrustedFolderTest, WriteFileOnceNeverReplacesAFile) {
  TrustedFolder folder = Made();
  ASSERT_TRUE(folder.WriteFileOnce("k.ptx", "ptx 1").ok());
  EXPECT_TRUE(folder.WriteFileOnce("k.ptx", "ptx 1").ok());
  const absl::Status other = folder.WriteFileOnce("k.ptx", "ptx 2");
  EXPECT_TRUE(absl::IsAlreadyExists(other)) << other;
  EXPECT_TRUE(Contains(other.message(), path_ + "/k.ptx"));
  EXPECT_TRUE(Contains(other.message(), "not overwritten"));
  EXPECT_EQ(ReadFile(path_ + "/k.ptx"), "ptx 1");
  EXPECT_EQ(ListDirectory(path_), std::vector<std::string>{"k.ptx"})
      << "a temporary was left behind";
}

TEST_F(TrustedFolderTest, ListFilesGivesRegularFilesWithSizeAndTime) {
  TrustedFolder folder = Made();
  WriteFile(path_ + "/a", "12345");
  ASSERT_EQ(mkdir((path_ + "/sub").c_str(), 0700), 0);
  ASSERT_EQ(symlink((path_ + "/a").c_str(), (path_ + "/link").c_str()), 0);
  const struct timeval an_hour_ago[2] = {{time(nullptr) - 3600, 0},
                                         {time(nullptr) - 3600, 0}};
  ASSERT_EQ(utimes((path_ + "/a").c_str(), an_hour_ago), 0);
  absl::StatusOr<std::vector<FolderFile>> files = folder.ListFiles();
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].name, "a");
  EXPECT_EQ((*files)[0].bytes, 5);
  EXPECT_EQ((*files)[0].modified_ns,
            int64_t{an_hour_ago[0].tv_sec} * 1000000000);
  EXPECT_EQ((*files)[0].owner, geteuid());

  // A use moves the time to now.
  folder.Touch("a");
  files = folder.ListFiles();
  ASSERT_TRUE(files.ok());
  EXPECT_GE((*files)[0].modified_ns,
            (int64_t{time(nullptr)} - 60) * 1000000000);
}

// Runs `body` in a child process without the capabilities that let root
// ignore file modes, so that a mode binds whoever runs the test; returns
// the child's exit status (-1 when it did not exit).
int RunWhereModesBind(const std::function<int()>& body) {
  const pid_t child = fork();
  if (child == 0) {
    __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct none[2] = {};
    if (syscall(SYS_capset, &header, none) != 0) _exit(100);
    _exit(body());
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) {
    return -1;
  }
  return WEXITSTATUS(status);
}

// A folder of mode 0600 can be opened and read, but none of its files
// looked at: that is an error, never "no files".
TEST_F(TrustedFolderTest, AFolderWhoseFilesCannotBeLookedAtIsAnErrorNotEmpty) {
  TrustedFolder made = Made();
  WriteFile(path_ + "/a", "entry");
  ASSERT_EQ(chmod(path_.c_str(), 0600), 0);
  const std::string path = path_;
  const int status = RunWhereModesBind([&path] {
    absl::StatusOr<TrustedFolder> folder = TrustedFolder::Open(path, false);
    if (!folder.ok()) return 2;
    absl::StatusOr<std::vector<FolderFile>> files = folder->ListFiles();
    if (files.ok()) return 3;  // the file was missed silently
    return Contains(files.status().message(), "Permission denied") ? 0 : 4;
  });
  chmod(path_.c_str(), 0700);
  EXPECT_EQ(status, 0) << "2: not opened, 3: listed without its file, 4: "
                          "another error, 100: capabilities not dropped";
}

TEST_F(TrustedFolderTest, RemoveFileRemovesOneFileAndSaysWhenItIsNotThere) {
  TrustedFolder folder = Made();
  WriteFile(path_ + "/a", "x");
  EXPECT_TRUE(folder.RemoveFile("a").ok());
  EXPECT_TRUE(absl::IsNotFound(folder.RemoveFile("a")));
  EXPECT_TRUE(absl::IsInvalidArgument(folder.RemoveFile("../a")));
  EXPECT_TRUE(ListDirectory(path_).empty());
}

}  // namespace
}  // namespace ptxgen::compile
