#ifndef PTXGEN_TESTS_KERNELS_KERNEL_BUNDLE_H_
#define PTXGEN_TESTS_KERNELS_KERNEL_BUNDLE_H_

// The kernels the tests share, compiled once per build by
// //tests/kernels:bundle (`ptxgen precompile` over tests/kernels/problems.txt)
// into a read-only kernel cache folder, a runfile of every test that depends
// on this library. A test that only needs kernels names it in
// PTXGEN_CACHE_PATH; tests of compiling or of the cache itself leave it out.

#include <string>

namespace ptxgen::testing_support {

// Under `bazel test` the working directory is the runfiles root.
inline constexpr char kKernelBundleRunfile[] = "tests/kernels/bundle";

// The folder that holds the bundle's entries, an absolute path without
// links (PTXGEN_CACHE_PATH takes no relative path, the cache follows no link
// to an entry); empty when this process has no such runfile.
std::string KernelBundle();

}  // namespace ptxgen::testing_support

#endif  // PTXGEN_TESTS_KERNELS_KERNEL_BUNDLE_H_
