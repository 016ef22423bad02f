#include "tests/support/ptxgen_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_bundle.h"
#include "tests/support/text.h"

extern char** environ;

namespace ptxgen::testing_support {
namespace {

std::vector<std::string> Environment(
    const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const absl::string_view text(*entry);
    const std::string name(text.substr(0, text.find('=')));
    if (absl::StartsWith(name, "PTXGEN_") || overrides.count(name) > 0)
      continue;
    entries.emplace_back(text);
  }
  for (const auto& [name, value] : overrides)
    entries.push_back(absl::StrCat(name, "=", value));
  return entries;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

std::string NewTestDirectory(absl::string_view label) {
  const ::testing::TestInfo* test =
      ::testing::UnitTest::GetInstance()->current_test_info();
  const char* root = std::getenv("TEST_TMPDIR");
  std::string path =
      absl::StrCat(root != nullptr ? root : "/tmp", "/",
                   test->test_suite_name(), ".", test->name(), ".", label);
  mkdir(path.c_str(), 0700);
  return path;
}

ProcessResult RunPtxgen(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& environment,
                        const StdoutTarget& stdout_target,
                        const std::string& working_directory) {
  static int runs = 0;
  const std::string prefix =
      absl::StrCat(NewTestDirectory("runs"), "/", runs++);
  // Found from here, wherever it runs.
  char* binary = realpath(kPtxgenBinary, nullptr);
  if (binary == nullptr) {
    ADD_FAILURE() << "cannot find " << kPtxgenBinary << ": "
                  << std::strerror(errno);
    return {};
  }
  std::vector<std::string> argv = {binary};
  std::free(binary);
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = Environment(environment);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  switch (stdout_target.kind) {
    case StdoutTarget::Kind::kCaptured:
      posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO,
                                       (prefix + ".out").c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0600);
      break;
    case StdoutTarget::Kind::kDevice:
      posix_spawn_file_actions_addopen(
          &actions, STDOUT_FILENO, stdout_target.device.c_str(), O_WRONLY, 0);
      break;
    case StdoutTarget::Kind::kClosed:
      posix_spawn_file_actions_addclose(&actions, STDOUT_FILENO);
      break;
  }
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO,
                                   (prefix + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!working_directory.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, working_directory.c_str());
  }
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr,
                                  Pointers(argv).data(), Pointers(env).data());
  posix_spawn_file_actions_destroy(&actions);
  ProcessResult result;
  if (spawned != 0) {
    ADD_FAILURE() << "cannot run " << kPtxgenBinary << ": "
                  << std::strerror(spawned);
    return result;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) result.status = WEXITSTATUS(status);
  if (stdout_target.kind == StdoutTarget::Kind::kCaptured)
    result.out = ReadFile(prefix + ".out");
  result.err = ReadFile(prefix + ".err");
  return result;
}

std::map<std::string, std::string> WithKernelBundle(
    std::map<std::string, std::string> environment) {
  const std::string bundle = KernelBundle();
  if (bundle.empty()) {
    ADD_FAILURE() << "no kernel bundle in " << kKernelBundleRunfile
                  << " (a runfile: the working directory must be the "
                     "runfiles root)";
    return environment;
  }
  environment["PTXGEN_CACHE_PATH"] = bundle;
  return environment;
}

}  // namespace ptxgen::testing_support
