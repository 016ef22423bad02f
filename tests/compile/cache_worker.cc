// One process of the multi-process cache test: waits for the start signal so
// that every worker compiles at the same moment, then looks the tiny kernel
// up in the cache directory it is given and prints where it came from.
//
//   cache_worker <cache_dir> <start_file>

#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include "ptxgen/compile/inspect.h"
#include "ptxgen/compile/kernel_cache.h"
#include "tests/compile/test_kernels.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: cache_worker <cache_dir> <start_file>\n";
    return 2;
  }
  struct stat info;
  for (int waited_ms = 0; stat(argv[2], &info) != 0; ++waited_ms) {
    if (waited_ms > 30000) {
      std::cerr << "cache_worker: no start signal\n";
      return 3;
    }
    usleep(1000);
  }
  ptxgen::compile::KernelCache cache(
      ptxgen::compile::CacheConfig{/*disk_enabled=*/true, argv[1]});
  auto module =
      cache.GetOrCompile("tiny", ptxgen::compile::test_kernels::kTinyKernel,
                         ptxgen::compile::CompileOptions{});
  if (!module.ok()) {
    std::cerr << module.status() << "\n";
    return 1;
  }
  std::cout << ptxgen::compile::ToJson(**module) << "\n";
  return 0;
}
