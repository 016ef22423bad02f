#include "ptxgen/base/log.h"

#include <atomic>
#include <cstdio>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "ptxgen/base/environment.h"
#include "ptxgen/base/printable.h"

namespace ptxgen::base {
namespace {

constexpr char kLevelVariable[] = "PTXGEN_LOG_LEVEL";

// Most severe first, as the enum.
constexpr LogLevel kLevels[] = {LogLevel::kError, LogLevel::kWarning,
                                LogLevel::kInfo, LogLevel::kDebug};

struct Logger {
  explicit Logger(LogConfig config)
      : level(static_cast<int>(config.level)),
        environment_warnings(std::move(config.warnings)) {}

  // Read on every message: an atomic, not the mutex.
  std::atomic<int> level;
  const std::vector<std::string> environment_warnings;
  absl::once_flag report_environment;
  absl::Mutex mutex;
  LogSink sink ABSL_GUARDED_BY(mutex);
};

Logger& TheLogger() {
  // Never destroyed: static objects of the application may log at exit.
  static Logger* const logger = new Logger(LogConfigFromEnvironment());
  return *logger;
}

// One write per line, so that lines of several threads do not interleave.
void WriteToStderr(LogLevel level, absl::string_view message) {
  const std::string line = absl::StrCat("ptxgen: ", LogLevelName(level), ": ",
                                        Printable(message), "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

bool Passes(const Logger& logger, LogLevel level) {
  return static_cast<int>(level) <=
         logger.level.load(std::memory_order_relaxed);
}

void DeliverToSink(Logger& logger, LogLevel level, absl::string_view message) {
  LogSink sink;
  {
    absl::MutexLock lock(&logger.mutex);
    sink = logger.sink;
  }
  if (sink) {
    sink(level, message);
  } else {
    WriteToStderr(level, message);
  }
}

void Deliver(Logger& logger, LogLevel level, absl::string_view message) {
  if (Passes(logger, level)) DeliverToSink(logger, level, message);
}

}  // namespace

absl::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "error";
}

absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view name) {
  std::vector<absl::string_view> names;
  for (const LogLevel level : kLevels) {
    if (LogLevelName(level) == name) return level;
    names.push_back(LogLevelName(level));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "'", PrintableValue(name),
      "' is not a log level (accepted: ", absl::StrJoin(names, ", "), ")"));
}

LogConfig LogConfigFromEnvironment() {
  LogConfig config;
  const absl::string_view value = EnvironmentVariable(kLevelVariable);
  if (value.empty()) return config;
  absl::StatusOr<LogLevel> level = ParseLogLevel(value);
  if (level.ok()) {
    config.level = *level;
  } else {
    config.warnings.push_back(absl::StrCat(kLevelVariable, ": ",
                                           level.status().message(), "; using ",
                                           LogLevelName(config.level)));
  }
  return config;
}

void SetLogSink(LogSink sink) {
  Logger& logger = TheLogger();
  absl::MutexLock lock(&logger.mutex);
  logger.sink = std::move(sink);
}

void SetLogLevel(LogLevel level) {
  TheLogger().level.store(static_cast<int>(level), std::memory_order_relaxed);
}

LogLevel CurrentLogLevel() {
  return static_cast<LogLevel>(
      TheLogger().level.load(std::memory_order_relaxed));
}

bool LogEnabled(LogLevel level) { return Passes(TheLogger(), level); }

void Log(LogLevel level, absl::string_view message) {
  Logger& logger = TheLogger();
  // On the first message, not at start-up: a sink installed before it gets
  // the environment's warnings too.
  absl::call_once(logger.report_environment, [&] {
    for (const std::string& warning : logger.environment_warnings) {
      Deliver(logger, LogLevel::kWarning, warning);
    }
  });
  Deliver(logger, level, message);
}

void LogRequested(LogLevel level, absl::string_view message) {
  DeliverToSink(TheLogger(), level, message);
}

}  // namespace ptxgen::base
