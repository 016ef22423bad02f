#ifndef PTXGEN_COMPILE_FILES_H_
#define PTXGEN_COMPILE_FILES_H_

// Folders and files ptxgen keeps between processes (the kernel cache, the
// autotuning records, read-only cache folders), and the rules that decide
// whether what is in them may be believed.
//
// Trust model: whoever can write into a cache folder decides what runs on
// the GPU, so a folder is used only when nobody but its owner can write to
// it and that owner is the effective user or root. A file in it is read
// only when it is a regular file (no link is followed), has the same kind
// of owner, is writable by nobody else, is no larger than its caller's cap,
// and starts with the caller's magic line (checked before the rest is
// read). Everything is opened relative to the checked folder's descriptor,
// so a folder swapped after its check is never read.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::compile {

// A regular file of a folder, as its listing saw it.
struct FolderFile {
  std::string name;
  int64_t bytes = 0;
  int64_t modified_ns = 0;  // its modification time, in ns since 1970
  uid_t owner = 0;
};

// An open folder that passed the trust rule. Move-only; closes on
// destruction.
class TrustedFolder {
 public:
  // Opens `path` (absolute) when it passes the trust rule; a link to a
  // folder is followed and the folder it names is checked. With `create`,
  // missing folders on the way are made with mode 0700; one that another
  // process makes meanwhile must pass the rule too. NotFound when `path`
  // does not exist (and `create` is false); FailedPrecondition when it is a
  // link to a missing folder (nothing is created through a link);
  // PermissionDenied naming the folder, its owner and mode and the rule
  // when it fails the rule.
  static absl::StatusOr<TrustedFolder> Open(const std::string& path,
                                            bool create);

  TrustedFolder(TrustedFolder&& other) noexcept;
  TrustedFolder& operator=(TrustedFolder&& other) noexcept;
  TrustedFolder(const TrustedFolder&) = delete;
  TrustedFolder& operator=(const TrustedFolder&) = delete;
  ~TrustedFolder();

  // The folder `name` inside this one, under the same rule; a link there
  // is refused.
  absl::StatusOr<TrustedFolder> Subfolder(absl::string_view name,
                                          bool create) const;

  // The bytes of the file `name` when it may be believed (see the trust
  // model). NotFound when it does not exist; PermissionDenied when it is a
  // link or its owner or mode fails the rule; FailedPrecondition when it is
  // not a regular file or holds more than `max_bytes`; DataLoss when it
  // does not start with `magic`.
  absl::StatusOr<std::string> ReadFile(absl::string_view name,
                                       absl::string_view magic,
                                       int64_t max_bytes) const;

  // Writes `bytes` to a temporary file of an unpredictable name (another
  // name is drawn when one exists), fsyncs it, renames it to `name` and
  // fsyncs the folder: readers see the old file or the whole new one.
  absl::Status WriteFileAtomically(absl::string_view name,
                                   absl::string_view bytes) const;

  // The same, but never replacing a file: where `name` exists already it
  // is left as it is; OK when it holds `bytes`, AlreadyExists naming it when
  // it holds anything else (or cannot be read).
  absl::Status WriteFileOnce(absl::string_view name,
                             absl::string_view bytes) const;

  // The regular files here, in no particular order; links, folders and
  // anything else are left out. Unavailable when a file cannot be looked at
  // (a folder without search permission), rather than a short list.
  absl::StatusOr<std::vector<FolderFile>> ListFiles() const;

  // Deletes the file `name` (a link itself, never what it names). NotFound
  // when it is not there.
  absl::Status RemoveFile(absl::string_view name) const;

  // Sets the modification time of the file `name` to now: the mark of a use
  // that least-recently-used eviction goes by. Best effort; a link is not
  // followed.
  void Touch(absl::string_view name) const;

  // Deletes this user's temporaries that writers which died before their
  // rename left here, once older than `min_age_seconds` (younger ones may
  // belong to a writer still at work): only files named exactly as the
  // writes above name them, "<name>.tmp.<16 hex digits>", and only for a
  // `name` that `writes` says this folder's writer gives its files. Any
  // other file is someone else's, whatever its name. Returns those it
  // deleted. Best effort.
  std::vector<FolderFile> RemoveStaleTemporaries(
      int64_t min_age_seconds,
      absl::FunctionRef<bool(absl::string_view name)> writes) const;

  const std::string& path() const { return path_; }

 private:
  TrustedFolder(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  absl::StatusOr<std::string> WriteTemporary(absl::string_view name,
                                             absl::string_view bytes) const;

  std::string path_;
  int fd_ = -1;
};

// The age past which a temporary belongs to a dead writer: an hour, far
// beyond any write.
inline constexpr int64_t kStaleTemporarySeconds = 3600;

// Writes all of `bytes` to the open file `fd` (named `path` in errors),
// retrying short and interrupted writes.
absl::Status WriteAll(int fd, absl::string_view bytes, const std::string& path);

}  // namespace ptxgen::compile

#endif  // PTXGEN_COMPILE_FILES_H_
