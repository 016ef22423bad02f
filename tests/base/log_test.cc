// The library's one logging sink: messages reach it with their level when
// the level passes the threshold; PTXGEN_LOG_LEVEL sets the threshold, and a
// value it does not know keeps the default with a warning naming the
// accepted ones.
#include "ptxgen/base/log.h"

#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace ptxgen::base {
namespace {

// Collects what reaches the process's sink while a test runs, then puts
// the default sink and level back.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_level_ = CurrentLogLevel();
    SetLogSink([this](LogLevel level, absl::string_view message) {
      absl::MutexLock lock(&mutex_);
      received_.emplace_back(level, std::string(message));
    });
  }
  void TearDown() override {
    SetLogSink(nullptr);
    SetLogLevel(saved_level_);
  }

  std::vector<std::pair<LogLevel, std::string>> Received() {
    absl::MutexLock lock(&mutex_);
    return received_;
  }

  LogLevel saved_level_ = LogLevel::kWarning;
  absl::Mutex mutex_;
  std::vector<std::pair<LogLevel, std::string>> received_;
};

TEST_F(LogTest, TheSinkReceivesEachMessageWithItsLevel) {
  SetLogLevel(LogLevel::kDebug);
  Log(LogLevel::kError, "e");
  Log(LogLevel::kWarning, "w");
  Log(LogLevel::kInfo, "i");
  Log(LogLevel::kDebug, "d");
  const std::vector<std::pair<LogLevel, std::string>> expected = {
      {LogLevel::kError, "e"},
      {LogLevel::kWarning, "w"},
      {LogLevel::kInfo, "i"},
      {LogLevel::kDebug, "d"}};
  EXPECT_EQ(Received(), expected);
}

TEST_F(LogTest, TheThresholdPassesItsLevelAndTheMoreSevereOnes) {
  SetLogLevel(LogLevel::kWarning);
  Log(LogLevel::kDebug, "d");
  Log(LogLevel::kInfo, "i");
  Log(LogLevel::kWarning, "w");
  Log(LogLevel::kError, "e");
  const std::vector<std::pair<LogLevel, std::string>> expected = {
      {LogLevel::kWarning, "w"}, {LogLevel::kError, "e"}};
  EXPECT_EQ(Received(), expected);
  EXPECT_TRUE(LogEnabled(LogLevel::kError));
  EXPECT_TRUE(LogEnabled(LogLevel::kWarning));
  EXPECT_FALSE(LogEnabled(LogLevel::kInfo));
}

TEST_F(LogTest, RequestedOutputPassesWhateverTheThreshold) {
  SetLogLevel(LogLevel::kError);
  Log(LogLevel::kInfo, "chatter");
  LogRequested(LogLevel::kInfo, "asked for");
  const std::vector<std::pair<LogLevel, std::string>> expected = {
      {LogLevel::kInfo, "asked for"}};
  EXPECT_EQ(Received(), expected);
}

TEST_F(LogTest, ErrorAloneSilencesWarnings) {
  SetLogLevel(LogLevel::kError);
  Log(LogLevel::kWarning, "w");
  EXPECT_TRUE(Received().empty());
  EXPECT_EQ(CurrentLogLevel(), LogLevel::kError);
}

TEST_F(LogTest, MessagesOfManyThreadsAllArrive) {
  constexpr int kThreads = 8, kEach = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < kEach; ++i) Log(LogLevel::kWarning, "w");
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(Received().size(), size_t{kThreads * kEach});
}

// The default sink is stderr; it must take a message with control bytes
// without passing them to the terminal (not checked here: Printable's own
// test says what it escapes).
TEST_F(LogTest, AnEmptySinkRestoresStderr) {
  SetLogSink(nullptr);
  Log(LogLevel::kWarning, "to stderr, as the library's default");
  EXPECT_TRUE(Received().empty());
}

TEST(LogLevelName, ParsesBackToEveryLevel) {
  for (const LogLevel level : {LogLevel::kError, LogLevel::kWarning,
                               LogLevel::kInfo, LogLevel::kDebug}) {
    absl::StatusOr<LogLevel> parsed = ParseLogLevel(LogLevelName(level));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, level);
  }
}

TEST(ParseLogLevel, RefusesOtherNamesListingTheAcceptedOnes) {
  for (const char* name : {"", "WARNING", "warn", "verbose", "3"}) {
    absl::StatusOr<LogLevel> parsed = ParseLogLevel(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_NE(parsed.status().message().find(
                  "(accepted: error, warning, info, debug)"),
              absl::string_view::npos)
        << parsed.status();
  }
}

// The value is quoted on the warning's line: a newline in it cannot forge
// a line of its own.
TEST(ParseLogLevel, QuotesTheRefusedNameEscaped) {
  absl::StatusOr<LogLevel> parsed =
      ParseLogLevel("info\nptxgen: error: forged");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message().find('\n'), absl::string_view::npos)
      << parsed.status();
  EXPECT_NE(parsed.status().message().find("'info\\x0aptxgen: error: forged'"),
            absl::string_view::npos)
      << parsed.status();
}

TEST(LogConfigFromEnvironment, DefaultsToWarning) {
  unsetenv("PTXGEN_LOG_LEVEL");
  EXPECT_EQ(LogConfigFromEnvironment().level, LogLevel::kWarning);
  setenv("PTXGEN_LOG_LEVEL", "", 1);  // empty counts as unset
  const LogConfig config = LogConfigFromEnvironment();
  EXPECT_EQ(config.level, LogLevel::kWarning);
  EXPECT_TRUE(config.warnings.empty());
}

TEST(LogConfigFromEnvironment, TakesEveryLevelByName) {
  setenv("PTXGEN_LOG_LEVEL", "debug", 1);
  EXPECT_EQ(LogConfigFromEnvironment().level, LogLevel::kDebug);
  setenv("PTXGEN_LOG_LEVEL", "error", 1);
  EXPECT_EQ(LogConfigFromEnvironment().level, LogLevel::kError);
  EXPECT_TRUE(LogConfigFromEnvironment().warnings.empty());
}

TEST(LogConfigFromEnvironment, ABadValueKeepsTheDefaultWithAWarning) {
  setenv("PTXGEN_LOG_LEVEL", "loud", 1);
  const LogConfig config = LogConfigFromEnvironment();
  EXPECT_EQ(config.level, LogLevel::kWarning);
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_EQ(config.warnings[0],
            "PTXGEN_LOG_LEVEL: 'loud' is not a log level (accepted: error, "
            "warning, info, debug); using warning");
}

}  // namespace
}  // namespace ptxgen::base
