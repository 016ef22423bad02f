#include "ptxgen/compile/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ptxgen::compile {
namespace {

absl::Status SystemError(absl::string_view what, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// mkdir -p; a directory another process creates meanwhile is fine.
absl::Status MakeDirectories(const std::string& directory) {
  for (size_t slash = directory.find('/', 1);;
       slash = directory.find('/', slash + 1)) {
    const std::string prefix = directory.substr(0, slash);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return SystemError("cannot create directory", prefix);
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

// In every temporary's name, so that RemoveStaleTemporaries finds them.
constexpr absl::string_view kTemporaryMarker = ".tmp.";

// Unique per process (pid) and per call (counter), so concurrent writers
// never share a temporary file.
std::string TemporaryName(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(path, kTemporaryMarker, getpid(), ".", counter++);
}

}  // namespace

absl::Status WriteAll(int fd, absl::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return SystemError("cannot write", path);
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  // Non-blocking: opening a FIFO someone left there must not hang.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT)
      return absl::NotFoundError(absl::StrCat("no file ", path));
    return SystemError("cannot open", path);
  }
  struct stat info;
  if (fstat(fd, &info) != 0) {
    absl::Status error = SystemError("cannot stat", path);
    close(fd);
    return error;
  }
  std::string refusal;
  if (!S_ISREG(info.st_mode)) {
    refusal = " is not a regular file";
  } else if (info.st_size > kMaxReadBytes) {
    refusal = absl::StrCat(" holds ", info.st_size, " bytes, more than the ",
                           kMaxReadBytes, " ptxgen reads from one file");
  }
  if (!refusal.empty()) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(path, refusal));
  }
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      absl::Status error = SystemError("cannot read", path);
      close(fd);
      return error;
    }
    if (got == 0) break;
    bytes.append(buffer, static_cast<size_t>(got));
  }
  close(fd);
  return bytes;
}

absl::Status WriteFileAtomically(const std::string& directory,
                                 const std::string& path,
                                 absl::string_view bytes) {
  if (absl::Status made = MakeDirectories(directory); !made.ok()) return made;
  const std::string temporary = TemporaryName(path);
  const int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return SystemError("cannot create", temporary);
  absl::Status status = WriteAll(fd, bytes, temporary);
  if (status.ok() && fsync(fd) != 0)
    status = SystemError("cannot fsync", temporary);
  if (close(fd) != 0 && status.ok())
    status = SystemError("cannot close", temporary);
  if (status.ok() && rename(temporary.c_str(), path.c_str()) != 0) {
    status = SystemError("cannot rename into", path);
  }
  if (!status.ok()) unlink(temporary.c_str());
  return status;
}

void RemoveStaleTemporaries(const std::string& directory, int64_t min_age_seconds) {
  DIR* listing = opendir(directory.c_str());
  if (listing == nullptr) return;
  const time_t now = time(nullptr);
  while (const dirent* item = readdir(listing)) {
    if (!absl::StrContains(item->d_name, kTemporaryMarker)) continue;
    const std::string path = absl::StrCat(directory, "/", item->d_name);
    struct stat info;
    if (lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        now - info.st_mtime >= min_age_seconds) {
      unlink(path.c_str());
    }
  }
  closedir(listing);
}

}  // namespace ptxgen::compile
