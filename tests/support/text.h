#ifndef PTXGEN_TESTS_SUPPORT_TEXT_H_
#define PTXGEN_TESTS_SUPPORT_TEXT_H_

// Text helpers shared by the test suites.

#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace ptxgen::testing_support {

// EXPECT_TRUE(Contains(text, part)) prints the whole text when it fails.
inline ::testing::AssertionResult Contains(absl::string_view text,
                                           absl::string_view part) {
  if (absl::StrContains(text, part)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << part << "\" is not in:\n"
                                       << text;
}

// The file's bytes; "" when it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace ptxgen::testing_support

#endif  // PTXGEN_TESTS_SUPPORT_TEXT_H_
