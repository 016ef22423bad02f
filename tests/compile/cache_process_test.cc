// Several real processes compiling the same kernel into one cache directory
// at once must all succeed and leave exactly one valid entry.

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/kernel_cache.h"
#include "tests/compile/test_kernels.h"
#include "tests/compile/test_support.h"

extern char** environ;

namespace ptxgen::compile {
namespace {

constexpr int kWorkers = 8;

std::string WorkerPath() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/",
                      std::getenv("TEST_WORKSPACE"),
                      "/tests/compile/cache_worker");
}

// Starts kWorkers cache_worker processes on `cache_dir`, releases them
// together, and returns each one's stdout; every one must exit 0.
std::vector<std::string> RunWorkers(const std::string& cache_dir) {
  const std::string scratch = FreshTestDirectory("scratch");
  EXPECT_EQ(mkdir(scratch.c_str(), 0700), 0);
  const std::string start_file = scratch + "/start";
  const std::string worker = WorkerPath();
  std::vector<pid_t> pids;
  for (int i = 0; i < kWorkers; ++i) {
    const std::string out = absl::StrCat(scratch, "/worker", i, ".out");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char* argv[] = {const_cast<char*>(worker.c_str()),
                    const_cast<char*>(cache_dir.c_str()),
                    const_cast<char*>(start_file.c_str()), nullptr};
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv, environ), 0)
        << worker;
    posix_spawn_file_actions_destroy(&actions);
    pids.push_back(pid);
  }
  std::ofstream(start_file) << "go";
  std::vector<std::string> outputs;
  for (int i = 0; i < kWorkers; ++i) {
    int status = 0;
    EXPECT_EQ(waitpid(pids[i], &status, 0), pids[i]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "worker " << i << " status " << status;
    outputs.push_back(ReadFile(absl::StrCat(scratch, "/worker", i, ".out")));
  }
  return outputs;
}

// Exactly one file, the entry, and it serves a new process from disk.
void ExpectOneValidEntry(const std::string& cache_dir) {
  KernelCache cache(CacheConfig{true, cache_dir});
  const std::string key =
      KernelCacheKey("tiny", test_kernels::kTinyKernel, CompileOptions{});
  const std::vector<std::string> files = ListDirectory(cache_dir);
  ASSERT_EQ(files.size(), 1u) << "temporary files left behind?";
  EXPECT_EQ(files[0], key + ".kernel");
  auto module =
      cache.GetOrCompile("tiny", test_kernels::kTinyKernel, CompileOptions{});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->source, CacheSource::kDiskCache);
  EXPECT_TRUE((*module)->cache_warnings.empty());
  EXPECT_EQ((*module)->resources[0].static_shared_bytes, 4000);
}

TEST(CacheProcesses, SameKernelAtOnceAllSucceedOneEntryRemains) {
  const std::string cache_dir = FreshTestDirectory("cache");
  const std::vector<std::string> outputs = RunWorkers(cache_dir);
  int compiled = 0;
  for (const std::string& output : outputs) {
    EXPECT_TRUE(Contains(output, "\"name\":\"tiny\""));
    compiled += absl::StrContains(output, "\"source\":\"compiled\"") ? 1 : 0;
  }
  EXPECT_GE(compiled, 1);
  ExpectOneValidEntry(cache_dir);
}

TEST(CacheProcesses, CorruptEntryIsReplacedWhileProcessesRace) {
  const std::string cache_dir = FreshTestDirectory("cache");
  ASSERT_EQ(mkdir(cache_dir.c_str(), 0700), 0);
  const std::string key =
      KernelCacheKey("tiny", test_kernels::kTinyKernel, CompileOptions{});
  std::ofstream(KernelCache(CacheConfig{true, cache_dir}).EntryPath(key))
      << "PTXGEN-KERNEL-CACHE-1\ngarbage that is not an entry";
  for (const std::string& output : RunWorkers(cache_dir)) {
    // A worker either saw the corrupt file (and said so) or a valid one.
    const bool recompiled =
        absl::StrContains(output, "discarded and recompiled");
    const bool from_disk =
        absl::StrContains(output, "\"source\":\"disk_cache\"");
    EXPECT_TRUE(recompiled || from_disk) << output;
  }
  ExpectOneValidEntry(cache_dir);
}

}  // namespace
}  // namespace ptxgen::compile
