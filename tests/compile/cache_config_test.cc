#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

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

// A relative folder would move with each process's working directory: each
// variable that names one is refused with a warning, and the next is used.
TEST(CacheConfigFromEnvironment, RelativePathsAreRefusedWithAWarning) {
  SetEnvironment("cache", "relative/cache", "/c/home");
  const CacheConfig config = CacheConfigFromEnvironment();
  EXPECT_EQ(config.directory, "/c/home/.cache/ptxgen");
  EXPECT_TRUE(config.disk_enabled);
  ASSERT_EQ(config.warnings.size(), 2u);
  EXPECT_TRUE(Contains(config.warnings[0], "PTXGEN_CACHE_DIR='cache' is not an absolute path"));
  EXPECT_TRUE(Contains(config.warnings[1], "XDG_CACHE_HOME='relative/cache' is not an absolute path"));
}

TEST(CacheConfigFromEnvironment, ARelativeHomeLeavesNoFolder) {
  SetEnvironment(nullptr, nullptr, "home");
  const CacheConfig config = CacheConfigFromEnvironment();
  EXPECT_FALSE(config.disk_enabled);
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_TRUE(Contains(config.warnings[0], "HOME='home'"));
}

TEST(CacheConfigFromEnvironment, AbsolutePathsWarnOfNothing) {
  SetEnvironment("/c/dir", "/c/xdg", "/c/home");
  EXPECT_TRUE(CacheConfigFromEnvironment().warnings.empty());
}

// The environment's warnings reach the sink once, on the first lookup, so
// that a sink installed after construction still hears them.
TEST(KernelCache, ReportsTheConfigurationsWarningsOnceOnItsFirstLookup) {
  CacheConfig config{true, FreshTestDirectory()};
  config.warnings = {"PTXGEN_CACHE_DIR='x' is not an absolute path: ignored"};
  KernelCache cache(config);
  std::vector<std::string> heard;
  cache.SetWarningSink(
      [&](absl::string_view warning) { heard.emplace_back(warning); });
  for (int lookup = 0; lookup < 2; ++lookup) {
    cache.ClearMemory();
    ASSERT_TRUE(cache.GetOrCompile("tiny", test_kernels::kTinyKernel, {}).ok());
  }
  EXPECT_EQ(heard, config.warnings);
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
