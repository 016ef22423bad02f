#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "ptxgen/compile/kernel_cache.h"
#include "tests/compile/test_kernels.h"
#include "tests/compile/test_support.h"

namespace ptxgen::compile {
namespace {

// Sets exactly the variables the cache reads; nullptr unsets.
void SetEnvironment(const char* cache_dir, const char* xdg, const char* home,
                    const char* disable = nullptr) {
  const std::pair<const char*, const char*> kVariables[] = {
      {"PTXGEN_CACHE_DIR", cache_dir},
      {"XDG_CACHE_HOME", xdg},
      {"HOME", home},
      {"PTXGEN_CACHE_DISABLE", disable},
  };
  for (const auto& [name, value] : kVariables) {
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, /*overwrite=*/1);
    }
  }
}

TEST(CacheConfigFromEnvironment, PtxgenCacheDirWins) {
  SetEnvironment("/c/ptxgen-dir", "/c/xdg", "/c/home");
  const CacheConfig config = CacheConfigFromEnvironment();
  EXPECT_TRUE(config.disk_enabled);
  EXPECT_EQ(config.directory, "/c/ptxgen-dir");
}

TEST(CacheConfigFromEnvironment, ThenXdgCacheHome) {
  SetEnvironment(nullptr, "/c/xdg", "/c/home");
  EXPECT_EQ(CacheConfigFromEnvironment().directory, "/c/xdg/ptxgen");
}

TEST(CacheConfigFromEnvironment, ThenHome) {
  SetEnvironment(nullptr, nullptr, "/c/home");
  EXPECT_EQ(CacheConfigFromEnvironment().directory, "/c/home/.cache/ptxgen");
}

TEST(CacheConfigFromEnvironment, EmptyVariablesCountAsUnset) {
  SetEnvironment("", "", "/c/home");
  EXPECT_EQ(CacheConfigFromEnvironment().directory, "/c/home/.cache/ptxgen");
}

TEST(CacheConfigFromEnvironment, RelativeXdgCacheHomeIsIgnored) {
  // The XDG base-directory spec: relative paths are invalid and ignored.
  SetEnvironment(nullptr, "relative/cache", "/c/home");
  EXPECT_EQ(CacheConfigFromEnvironment().directory, "/c/home/.cache/ptxgen");
}

TEST(CacheConfigFromEnvironment, NoDirectoryAtAllTurnsTheDiskOff) {
  SetEnvironment(nullptr, nullptr, nullptr);
  EXPECT_FALSE(CacheConfigFromEnvironment().disk_enabled);
}

TEST(CacheConfigFromEnvironment, CacheDisableSwitch) {
  const struct {
    const char* value;
    bool disk_enabled;
  } kCases[] = {{"1", false},    {"true", false}, {"yes", false}, {"on", false},
                {"maybe", false}, {"0", true},     {"false", true}, {"no", true},
                {"", true}};
  for (const auto& c : kCases) {
    SetEnvironment("/c/dir", nullptr, nullptr, c.value);
    EXPECT_EQ(CacheConfigFromEnvironment().disk_enabled, c.disk_enabled)
        << "PTXGEN_CACHE_DISABLE=" << c.value;
  }
}

TEST(KernelCacheDefault, ReadsTheEnvironmentOnceAndCreatesItsDirectory) {
  const std::string directory = FreshTestDirectory();
  SetEnvironment(directory.c_str(), nullptr, nullptr);
  KernelCache& cache = KernelCache::Default();
  EXPECT_EQ(cache.config().directory, directory);
  EXPECT_TRUE(cache.config().disk_enabled);

  SetEnvironment("/c/elsewhere", nullptr, nullptr, "1");
  EXPECT_EQ(&KernelCache::Default(), &cache);
  EXPECT_EQ(KernelCache::Default().config().directory, directory);

  auto module =
      cache.GetOrCompile("tiny", test_kernels::kTinyKernel, CompileOptions{});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->source, CacheSource::kCompiled);
  struct stat info;
  EXPECT_EQ(stat(cache.EntryPath((*module)->cache_key).c_str(), &info), 0);
}

}  // namespace
}  // namespace ptxgen::compile
