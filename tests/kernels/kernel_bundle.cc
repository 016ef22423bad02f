#include "tests/kernels/kernel_bundle.h"

#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tests/support/text.h"

namespace ptxgen::testing_support {

// The runfile is a folder of links, one per entry (Bazel's runfiles of a
// tree artifact), and the cache follows no link inside a cache folder: the
// folder they all lead to is the bundle.
std::string KernelBundle() {
  const std::vector<std::string> entries = ListDirectory(kKernelBundleRunfile);
  if (entries.empty()) return "";
  const std::string entry = absl::StrCat(kKernelBundleRunfile, "/", entries[0]);
  char resolved[PATH_MAX];
  if (realpath(entry.c_str(), resolved) == nullptr) return "";
  const absl::string_view path(resolved);
  return std::string(path.substr(0, path.rfind('/')));
}

}  // namespace ptxgen::testing_support
