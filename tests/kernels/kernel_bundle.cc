#include "tests/kernels/kernel_bundle.h"

#include <dirent.h>

#include <climits>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ptxgen::testing_support {

// The runfile is a folder of links, one per entry (Bazel's runfiles of a
// tree artifact), and the cache follows no link inside a cache folder: the
// folder they all lead to is the bundle.
std::string KernelBundle() {
  DIR* dir = opendir(kKernelBundleRunfile);
  if (dir == nullptr) return "";
  std::string entry;
  while (const dirent* file = readdir(dir)) {
    if (file->d_name[0] != '.') {
      entry = absl::StrCat(kKernelBundleRunfile, "/", file->d_name);
      break;
    }
  }
  closedir(dir);
  char resolved[PATH_MAX];
  if (entry.empty() || realpath(entry.c_str(), resolved) == nullptr) return "";
  const absl::string_view path(resolved);
  return std::string(path.substr(0, path.rfind('/')));
}

}  // namespace ptxgen::testing_support
