#ifndef PTXGEN_BASE_LOG_H_
#define PTXGEN_BASE_LOG_H_

// The one way the library speaks (the kernel cache refusing a folder, the
// autotuner discarding a record, a compile done): messages with a level,
// passed to one sink for the whole process. The sink is stderr until an
// application installs its own; nothing in the library writes to stderr
// otherwise.
//
// PTXGEN_LOG_LEVEL=error|warning|info|debug sets the least severe level
// passed on (warning when unset), read on first use; a value that is none
// of these keeps warning, and the first message is a warning that says so.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::base {

// Most severe first: a threshold passes its own level and those above it.
//   error    something the library could not do, beyond the Status it returns
//   warning  something it worked around (a cache entry refused, a file not
//            written): the result is right, maybe slower
//   info     what it did that costs time (a kernel compiled, and how long)
//   debug    every step worth a line (each cache hit, each dump)
enum class LogLevel { kError, kWarning, kInfo, kDebug };

// "error", "warning", "info", "debug".
absl::string_view LogLevelName(LogLevel level);
// The level LogLevelName calls `name`; InvalidArgument naming the accepted
// names otherwise.
absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view name);

// The library's logging: the level that passes and what the environment
// asked for that was refused.
struct LogConfig {
  LogLevel level = LogLevel::kWarning;
  // What the environment named and was refused, to be said once.
  std::vector<std::string> warnings;
};

// The threshold PTXGEN_LOG_LEVEL names (empty counts as unset).
LogConfig LogConfigFromEnvironment();

// Receives every message that passes the threshold, with its level. Called
// from any thread, possibly from several at once, holding no lock of the
// library; it must not call Log itself.
using LogSink = std::function<void(LogLevel level, absl::string_view message)>;

// Replaces the process's sink (thread-safe); an empty function restores
// the default, which writes "ptxgen: <level>: <message>" lines to stderr,
// the message escaped with base::Printable (it may quote file names and
// compiler logs).
void SetLogSink(LogSink sink);

// Replaces the threshold PTXGEN_LOG_LEVEL set.
void SetLogLevel(LogLevel level);
LogLevel CurrentLogLevel();

// Whether a message at `level` would reach the sink: a caller may skip
// building one that would not.
bool LogEnabled(LogLevel level);

// Passes `message` to the sink when `level` passes the threshold.
void Log(LogLevel level, absl::string_view message);

// Passes `message` to the sink at `level` whatever the threshold: output
// the user asked for by name (PTXGEN_PRINT_AUTOTUNING), not chatter.
void LogRequested(LogLevel level, absl::string_view message);

}  // namespace ptxgen::base

#endif  // PTXGEN_BASE_LOG_H_
