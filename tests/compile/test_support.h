#ifndef PTXGEN_TESTS_COMPILE_TEST_SUPPORT_H_
#define PTXGEN_TESTS_COMPILE_TEST_SUPPORT_H_

// Helpers for the compile tests (GoogleTest without gmock).

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "tests/support/text.h"

namespace ptxgen::compile {

using testing_support::Contains;
using testing_support::ListDirectory;
using testing_support::ReadFile;

// A directory path unique to the running test, under Bazel's $TEST_TMPDIR
// (never the real ~/.cache). Not created: the cache must create it.
inline std::string FreshTestDirectory(absl::string_view label = "") {
  const ::testing::TestInfo* test =
      ::testing::UnitTest::GetInstance()->current_test_info();
  const char* root = std::getenv("TEST_TMPDIR");
  return absl::StrCat(root != nullptr ? root : "/tmp", "/",
                      test->test_suite_name(), ".", test->name(),
                      label.empty() ? "" : ".", label);
}

}  // namespace ptxgen::compile

#endif  // PTXGEN_TESTS_COMPILE_TEST_SUPPORT_H_
