#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/kernel_cache.h"
#include "tests/compile/test_kernels.h"
#include "tests/compile/test_support.h"

namespace ptxgen::compile {
namespace {

// Sets exactly the variables the cache reads; nullptr unsets. Those not
// among the arguments are unset: a test sets the one it is about.
void SetEnvironment(const char* cache_dir, const char* xdg, const char* home,
                    const char* disable = nullptr) {
  const std::pair<const char*, const char*> kVariables[] = {
      {"PTXGEN_CACHE_DIR", cache_dir},
      {"XDG_CACHE_HOME", xdg},
      {"HOME", home},
      {"PTXGEN_CACHE_DISABLE", disable},
      {"PTXGEN_CACHE_PATH", nullptr},
      {"PTXGEN_CACHE_MAX_BYTES", nullptr},
      {"PTXGEN_DUMP_DIR", nullptr},
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
  EXPECT_TRUE(Contains(config.warnings[0],
                       "PTXGEN_CACHE_DIR='cache' is not an absolute path"));
  EXPECT_TRUE(
      Contains(config.warnings[1],
               "XDG_CACHE_HOME='relative/cache' is not an absolute path"));
}

// The folder used in place of a refused variable is a stand-in, which
// maintenance must not empty (KernelCache::Clear).
TEST(CacheConfigFromEnvironment, TheFirstRefusedVariableIsRemembered) {
  SetEnvironment("cache", "relative/cache", "/c/home");
  EXPECT_EQ(CacheConfigFromEnvironment().refused_variable, "PTXGEN_CACHE_DIR");
  SetEnvironment(nullptr, "relative/cache", "/c/home");
  EXPECT_EQ(CacheConfigFromEnvironment().refused_variable, "XDG_CACHE_HOME");
  SetEnvironment("/c/dir", "relative/cache", "/c/home");
  EXPECT_EQ(CacheConfigFromEnvironment().refused_variable, "");
  SetEnvironment("", "", "/c/home");
  EXPECT_EQ(CacheConfigFromEnvironment().refused_variable, "");
}

// A value quoted in a warning stays on its line.
TEST(CacheConfigFromEnvironment, WarningsShowTheValuesControlBytesEscaped) {
  SetEnvironment("cache\nptxgen: error: forged", nullptr, "/c/home");
  const CacheConfig config = CacheConfigFromEnvironment();
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_TRUE(Contains(config.warnings[0],
                       "PTXGEN_CACHE_DIR='cache\\x0aptxgen: error: forged'"))
      << config.warnings[0];
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
  } kCases[] = {{"1", false},    {"true", false},  {"yes", false},
                {"on", false},   {"maybe", false}, {"0", true},
                {"false", true}, {"no", true},     {"", true}};
  for (const auto& c : kCases) {
    SetEnvironment("/c/dir", nullptr, nullptr, c.value);
    EXPECT_EQ(CacheConfigFromEnvironment().disk_enabled, c.disk_enabled)
        << "PTXGEN_CACHE_DISABLE=" << c.value;
  }
}

// ---- Read-only folders, the size cap, the dump folder ----

TEST(CacheConfigFromEnvironment, CachePathListsReadOnlyFoldersInOrder) {
  SetEnvironment("/c/dir", nullptr, nullptr);
  setenv("PTXGEN_CACHE_PATH", "/opt/app/kernels::/usr/share/ptxgen:", 1);
  const CacheConfig config = CacheConfigFromEnvironment();
  EXPECT_EQ(config.directory, "/c/dir");
  EXPECT_EQ(
      config.read_only_directories,
      (std::vector<std::string>{"/opt/app/kernels", "/usr/share/ptxgen"}));
  EXPECT_TRUE(config.warnings.empty());
}

TEST(CacheConfigFromEnvironment, ARelativeCachePathFolderIsRefusedAlone) {
  SetEnvironment("/c/dir", nullptr, nullptr);
  setenv("PTXGEN_CACHE_PATH", "bundle:/opt/bundle", 1);
  const CacheConfig config = CacheConfigFromEnvironment();
  EXPECT_EQ(config.read_only_directories,
            std::vector<std::string>{"/opt/bundle"});
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_TRUE(Contains(config.warnings[0],
                       "PTXGEN_CACHE_PATH='bundle' is not an absolute path: "
                       "ignored for a read-only cache folder"));
}

TEST(CacheConfigFromEnvironment, ARepeatedCachePathFolderIsSearchedOnce) {
  SetEnvironment("/c/dir", nullptr, nullptr);
  setenv("PTXGEN_CACHE_PATH", "/opt/a:/opt/b:/opt/a:rel:rel", 1);
  const CacheConfig config = CacheConfigFromEnvironment();
  EXPECT_EQ(config.read_only_directories,
            (std::vector<std::string>{"/opt/a", "/opt/b"}));
  EXPECT_EQ(config.warnings.size(), 1u);
}

// Thousands of refused entries make four warnings, not thousands.
TEST(CacheConfigFromEnvironment, ManyRefusedCachePathFoldersAreCounted) {
  SetEnvironment("/c/dir", nullptr, nullptr);
  std::string path = "/opt/kept";
  for (int i = 0; i < 5000; ++i) absl::StrAppend(&path, ":rel", i);
  setenv("PTXGEN_CACHE_PATH", path.c_str(), 1);
  const CacheConfig config = CacheConfigFromEnvironment();
  EXPECT_EQ(config.read_only_directories,
            std::vector<std::string>{"/opt/kept"});
  ASSERT_EQ(config.warnings.size(), 4u);
  EXPECT_TRUE(Contains(config.warnings[2], "PTXGEN_CACHE_PATH='rel2'"));
  EXPECT_EQ(config.warnings[3],
            "... and 4997 more PTXGEN_CACHE_PATH entries that are not "
            "absolute paths, ignored");
}

TEST(CacheConfigFromEnvironment, MaxBytesIsTheCap) {
  SetEnvironment("/c/dir", nullptr, nullptr);
  EXPECT_EQ(CacheConfigFromEnvironment().max_bytes, 0) << "no cap by default";
  setenv("PTXGEN_CACHE_MAX_BYTES", "512M", 1);
  EXPECT_EQ(CacheConfigFromEnvironment().max_bytes, int64_t{512} << 20);
}

TEST(CacheConfigFromEnvironment, ABadMaxBytesLeavesNoCapWithAWarning) {
  SetEnvironment("/c/dir", nullptr, nullptr);
  setenv("PTXGEN_CACHE_MAX_BYTES", "lots", 1);
  const CacheConfig config = CacheConfigFromEnvironment();
  EXPECT_EQ(config.max_bytes, 0);
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_TRUE(Contains(config.warnings[0],
                       "PTXGEN_CACHE_MAX_BYTES: 'lots' is not a byte count"));
  EXPECT_TRUE(Contains(config.warnings[0], "no size cap"));
}

TEST(ParseByteCount, TakesDigitsWithAnOptionalBinarySuffix) {
  EXPECT_EQ(*ParseByteCount("1"), 1);
  EXPECT_EQ(*ParseByteCount("4096"), 4096);
  EXPECT_EQ(*ParseByteCount("3K"), 3 << 10);
  EXPECT_EQ(*ParseByteCount("3k"), 3 << 10);
  EXPECT_EQ(*ParseByteCount("2M"), 2 << 20);
  EXPECT_EQ(*ParseByteCount("5G"), int64_t{5} << 30);
  for (const char* bad : {"", "0", "K", "-1", "1.5G", "1T", "1 M", "+4",
                          "9999999999999999999", "9999999999G"}) {
    absl::StatusOr<int64_t> parsed = ParseByteCount(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_TRUE(
        Contains(parsed.status().message(), "with an optional K, M or G"));
  }
}

TEST(CacheConfigFromEnvironment, DumpDirIsTakenWhenAbsolute) {
  SetEnvironment("/c/dir", nullptr, nullptr);
  EXPECT_EQ(CacheConfigFromEnvironment().dump_directory, "");
  setenv("PTXGEN_DUMP_DIR", "/c/dumps", 1);
  EXPECT_EQ(CacheConfigFromEnvironment().dump_directory, "/c/dumps");
  // Its SASS comes from a disassembler on $PATH.
  EXPECT_EQ(CacheConfigFromEnvironment().disassembler_path,
            std::string(getenv("PATH")));
  setenv("PTXGEN_DUMP_DIR", "dumps", 1);
  const CacheConfig config = CacheConfigFromEnvironment();
  EXPECT_EQ(config.dump_directory, "");
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_TRUE(Contains(config.warnings[0], "PTXGEN_DUMP_DIR='dumps'"));
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
