#ifndef PTXGEN_TESTS_SUPPORT_PTXGEN_PROCESS_H_
#define PTXGEN_TESTS_SUPPORT_PTXGEN_PROCESS_H_

// The built ptxgen tool run as its users run it: a new process with a clean
// environment, its exit status and output captured. Shared by the suites
// that test the tool (tests/tools).

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxgen::testing_support {

// Under `bazel test` the working directory is the runfiles root.
inline constexpr char kPtxgenBinary[] = "tools/ptxgen";

// A new directory unique to the running test and `label`, under
// $TEST_TMPDIR.
std::string NewTestDirectory(absl::string_view label);

struct ProcessResult {
  int status = -1;  // the exit status; -1 when it did not exit normally
  std::string out;  // empty unless stdout was captured
  std::string err;
};

// Where the process's stdout goes.
struct StdoutTarget {
  enum class Kind { kCaptured, kDevice, kClosed };
  Kind kind = Kind::kCaptured;
  std::string device;  // kDevice: a path opened for writing, e.g. /dev/full
};

// Runs ptxgen with `args`. Its environment is this process's without any
// PTXGEN_ variable (a developer's settings must not leak in), plus
// `environment`. A failure to start the process is a test failure.
// It runs in `working_directory` (absolute), or in this process's when
// that is empty.
ProcessResult RunPtxgen(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& environment,
                        const StdoutTarget& stdout_target = {},
                        const std::string& working_directory = "");

// `environment` plus PTXGEN_CACHE_PATH naming the kernels the tests share
// (tests/kernels/kernel_bundle.h): the opt-in of a run that only needs its
// kernels, which are then read instead of compiled. Runs that test
// compiling or the cache leave it out. Without the bundle a test failure,
// and `environment` as it is.
std::map<std::string, std::string> WithKernelBundle(
    std::map<std::string, std::string> environment);

}  // namespace ptxgen::testing_support

#endif  // PTXGEN_TESTS_SUPPORT_PTXGEN_PROCESS_H_
