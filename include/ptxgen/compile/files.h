#ifndef PTXGEN_COMPILE_FILES_H_
#define PTXGEN_COMPILE_FILES_H_

// Whole-file reads and crash-safe writes, for the kernel cache and for
// anything else ptxgen keeps in its cache folder (autotuning records).

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::compile {

// The most ReadWholeFile reads: far above any cache entry or record, far
// below what would exhaust memory.
inline constexpr int64_t kMaxReadBytes = int64_t{1} << 30;

// The whole file; NotFound when it does not exist, FailedPrecondition when
// it is not a regular file (a FIFO, a device) or holds over kMaxReadBytes.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// Writes all of `bytes` to the open file `fd` (named `path` in errors),
// retrying short and interrupted writes.
absl::Status WriteAll(int fd, absl::string_view bytes, const std::string& path);

// Creates `directory` and its parents when missing, writes `bytes` to a
// name no other thread or process uses, fsyncs it and renames it to `path`,
// so readers see the old file or the whole new one, never a part.
absl::Status WriteFileAtomically(const std::string& directory,
                                 const std::string& path,
                                 absl::string_view bytes);

// Deletes the temporary files WriteFileAtomically left in `directory`
// (a writer that crashed before its rename) once they are older than
// `min_age_seconds`: younger ones may belong to a writer still at work.
// Best effort: files that cannot be examined or deleted are skipped.
void RemoveStaleTemporaries(const std::string& directory, int64_t min_age_seconds);

// The age past which a temporary belongs to a dead writer: an hour, far
// beyond any write.
inline constexpr int64_t kStaleTemporarySeconds = 3600;

}  // namespace ptxgen::compile

#endif  // PTXGEN_COMPILE_FILES_H_
