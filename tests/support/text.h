#ifndef PTXGEN_TESTS_SUPPORT_TEXT_H_
#define PTXGEN_TESTS_SUPPORT_TEXT_H_

// Text and file helpers shared by the test suites.

#include <dirent.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

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

// The names in `folder` (not "." and ".."), in no particular order; none
// when it does not exist.
inline std::vector<std::string> ListDirectory(const std::string& folder) {
  std::vector<std::string> names;
  if (DIR* dir = opendir(folder.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
  }
  return names;
}

}  // namespace ptxgen::testing_support

#endif  // PTXGEN_TESTS_SUPPORT_TEXT_H_
