#include "ptxgen/compile/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ptxgen/base/printable.h"
#include "ptxgen/compile/sha256.h"

namespace ptxgen::compile {
namespace {

absl::Status SystemError(absl::string_view what, absl::string_view path) {
  return absl::UnavailableError(absl::StrCat(
      what, " ", base::PrintableValue(path), ": ", std::strerror(errno)));
}

// "uid 1000 (alice)", or just the number when no name is known.
std::string OwnerText(uid_t uid) {
  struct passwd entry;
  struct passwd* found = nullptr;
  char buffer[1024];
  if (getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) == 0 &&
      found != nullptr) {
    return absl::StrCat("uid ", uid, " (", found->pw_name, ")");
  }
  return absl::StrCat("uid ", uid);
}

// The trust rule, shared by folders and files: only the effective user or
// root may have written it.
absl::Status CheckOwnerAndMode(const struct stat& info, absl::string_view what,
                               absl::string_view path) {
  const uid_t me = geteuid();
  const bool owner_trusted = info.st_uid == me || info.st_uid == 0;
  const bool others_write = (info.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (owner_trusted && !others_write) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrFormat(
      "%s %s (owner %s, mode %04o) is not trusted: ptxgen believes a %s only "
      "when it is owned by the effective user (%s) or root and not writable "
      "by group or others",
      what, base::PrintableValue(path), OwnerText(info.st_uid),
      info.st_mode & 07777, what, OwnerText(me)));
}

// One path component: no separator, not "." or "..".
absl::Status CheckName(absl::string_view name) {
  if (name.empty() || name == "." || name == ".." ||
      absl::StrContains(name, '/')) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", base::PrintableValue(name),
                     "' is not a file name inside a folder"));
  }
  return absl::OkStatus();
}

// NotFound for a folder not there yet. A link to a missing folder is
// refused by name instead: nothing is created through a link, so the cache
// would miss on every lookup without a word.
absl::Status MissingFolder(int parent, const std::string& name,
                           const std::string& path) {
  struct stat link;
  if (fstatat(parent, name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISLNK(link.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "folder ", base::PrintableValue(path),
        " is a symbolic link to a missing folder: ptxgen creates no folder "
        "through a link (create the folder it names, or name another)"));
  }
  return absl::NotFoundError(
      absl::StrCat("no folder ", base::PrintableValue(path)));
}

// Opens the checked folder `name` relative to `parent` (AT_FDCWD with an
// absolute path for the first one).
absl::StatusOr<int> OpenCheckedFolder(int parent, const std::string& name,
                                      const std::string& path, int flags) {
  const int fd =
      openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
  if (fd < 0) {
    if (errno == ENOENT) return MissingFolder(parent, name, path);
    struct stat link;
    if ((flags & O_NOFOLLOW) != 0 &&
        fstatat(parent, name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(link.st_mode)) {
      return absl::PermissionDeniedError(
          absl::StrCat("folder ", base::PrintableValue(path),
                       " is a symbolic link, which ptxgen does not follow "
                       "inside a cache folder"));
    }
    return SystemError("cannot open folder", path);
  }
  struct stat info;
  absl::Status checked = fstat(fd, &info) != 0
                             ? SystemError("cannot stat folder", path)
                             : CheckOwnerAndMode(info, "folder", path);
  if (!checked.ok()) {
    close(fd);
    return checked;
  }
  return fd;
}

// mkdir -p with mode 0700. A folder on the way that already exists is left
// to the caller's check of the last one, except where it appeared between
// our look and our mkdir: someone else made it, so it must pass the rule.
absl::Status MakeFolders(const std::string& path) {
  bool creating = false;
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    struct stat info;
    if (!creating && stat(prefix.c_str(), &info) != 0 && errno == ENOENT) {
      creating = true;
    }
    if (creating && mkdir(prefix.c_str(), 0700) != 0) {
      if (errno != EEXIST) return SystemError("cannot create folder", prefix);
      absl::StatusOr<int> raced =
          OpenCheckedFolder(AT_FDCWD, prefix, prefix, 0);
      if (!raced.ok()) return raced.status();
      close(*raced);
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

// Reads until `limit` bytes or the end of the file, retrying interruptions.
absl::StatusOr<std::string> ReadUpTo(int fd, int64_t limit,
                                     absl::string_view path) {
  std::string bytes;
  char buffer[1 << 16];
  while (static_cast<int64_t>(bytes.size()) < limit) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(
        sizeof(buffer), limit - static_cast<int64_t>(bytes.size())));
    const ssize_t got = read(fd, buffer, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return SystemError("cannot read", path);
    if (got == 0) break;
    bytes.append(buffer, static_cast<size_t>(got));
  }
  return bytes;
}

// A temporary's name: "<name>.tmp.<kRandomDigits hex digits>".
constexpr absl::string_view kTemporaryMarker = ".tmp.";
constexpr size_t kRandomDigits = 16;  // a uint64_t, zero-padded

// Unpredictable, so that no file planted (or left by a reused PID) can
// occupy the name a writer will use.
std::string TemporaryName(absl::string_view name) {
  thread_local absl::BitGen random;
  return absl::StrCat(
      name, kTemporaryMarker,
      absl::Hex(absl::Uniform<uint64_t>(random), absl::kZeroPad16));
}

// The name `file` is a temporary of, when it is named exactly as
// TemporaryName names them; nothing for any other file.
std::optional<absl::string_view> NameOfTemporary(absl::string_view file) {
  const size_t marker = file.rfind(kTemporaryMarker);
  if (marker == absl::string_view::npos) return std::nullopt;
  const absl::string_view random =
      file.substr(marker + kTemporaryMarker.size());
  if (!IsLowercaseHex(random, kRandomDigits)) return std::nullopt;
  return file.substr(0, marker);
}

// Draws names until one is free; a clash with a name drawn from 2^64 is a
// planted file or a bug, so a few draws are plenty.
absl::StatusOr<std::pair<int, std::string>> CreateTemporary(
    int folder, absl::string_view name, const std::string& folder_path) {
  constexpr int kDraws = 8;
  for (int draw = 0; draw < kDraws; ++draw) {
    std::string temporary = TemporaryName(name);
    const int fd =
        openat(folder, temporary.c_str(),
               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) return std::make_pair(fd, std::move(temporary));
    if (errno != EEXIST) {
      return SystemError("cannot create a temporary file in", folder_path);
    }
  }
  return absl::UnavailableError(absl::StrCat(
      "cannot create a temporary file in ", base::PrintableValue(folder_path),
      ": ", kDraws, " random names were all taken"));
}

}  // namespace

absl::StatusOr<TrustedFolder> TrustedFolder::Open(const std::string& path,
                                                  bool create) {
  if (!absl::StartsWith(path, "/")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "folder '", base::PrintableValue(path), "' is not an absolute path"));
  }
  if (create) {
    if (absl::Status made = MakeFolders(path); !made.ok()) return made;
  }
  absl::StatusOr<int> fd = OpenCheckedFolder(AT_FDCWD, path, path, 0);
  if (!fd.ok()) return fd.status();
  return TrustedFolder(path, *fd);
}

TrustedFolder::TrustedFolder(TrustedFolder&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

TrustedFolder& TrustedFolder::operator=(TrustedFolder&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

TrustedFolder::~TrustedFolder() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<TrustedFolder> TrustedFolder::Subfolder(absl::string_view name,
                                                       bool create) const {
  if (absl::Status valid = CheckName(name); !valid.ok()) return valid;
  const std::string child(name);
  const std::string path = absl::StrCat(path_, "/", name);
  if (create && mkdirat(fd_, child.c_str(), 0700) != 0 && errno != EEXIST) {
    return SystemError("cannot create folder", path);
  }
  absl::StatusOr<int> fd = OpenCheckedFolder(fd_, child, path, O_NOFOLLOW);
  if (!fd.ok()) return fd.status();
  return TrustedFolder(path, *fd);
}

absl::StatusOr<std::string> TrustedFolder::ReadFile(absl::string_view name,
                                                    absl::string_view magic,
                                                    int64_t max_bytes) const {
  if (absl::Status valid = CheckName(name); !valid.ok()) return valid;
  const std::string path = base::PrintableValue(absl::StrCat(path_, "/", name));
  // Non-blocking: opening a FIFO someone left there must not hang.
  const int fd = openat(fd_, std::string(name).c_str(),
                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return absl::NotFoundError(absl::StrCat("no file ", path));
    if (errno == ELOOP) {
      return absl::PermissionDeniedError(
          absl::StrCat("file ", path,
                       " is a symbolic link, which ptxgen does not follow "
                       "inside a cache folder"));
    }
    return SystemError("cannot open", path);
  }
  struct stat info;
  absl::StatusOr<std::string> bytes;
  if (fstat(fd, &info) != 0) {
    bytes = SystemError("cannot stat", path);
  } else if (!S_ISREG(info.st_mode)) {
    bytes = absl::FailedPreconditionError(
        absl::StrCat("file ", path, " is not a regular file"));
  } else if (absl::Status trusted = CheckOwnerAndMode(info, "file", path);
             !trusted.ok()) {
    bytes = trusted;
  } else if (info.st_size > max_bytes) {
    bytes = absl::FailedPreconditionError(absl::StrCat(
        "file ", path, " holds ", info.st_size, " bytes, more than the ",
        max_bytes, " such a file may hold"));
  } else {
    bytes = ReadUpTo(fd, static_cast<int64_t>(magic.size()), path);
    if (bytes.ok() && *bytes != magic) {
      bytes = absl::DataLossError(absl::StrCat(
          "file ", path,
          absl::StartsWith(magic, *bytes)
              ? " is truncated inside its magic line"
              : " does not start with its magic line (a foreign file)"));
    }
    if (bytes.ok()) {
      // One byte past the cap tells a file that grew since fstat.
      absl::StatusOr<std::string> rest = ReadUpTo(
          fd, max_bytes - static_cast<int64_t>(magic.size()) + 1, path);
      if (!rest.ok()) {
        bytes = rest.status();
      } else if (static_cast<int64_t>(bytes->size() + rest->size()) >
                 max_bytes) {
        bytes = absl::FailedPreconditionError(
            absl::StrCat("file ", path, " grew past the ", max_bytes,
                         " bytes such a file may hold while it was read"));
      } else {
        bytes->append(*rest);
      }
    }
  }
  close(fd);
  return bytes;
}

absl::Status WriteAll(int fd, absl::string_view bytes,
                      const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return SystemError("cannot write", path);
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

// Writes `bytes` to a new temporary of `name`'s here and fsyncs it; returns
// its name, for the caller to rename or link into place.
absl::StatusOr<std::string> TrustedFolder::WriteTemporary(
    absl::string_view name, absl::string_view bytes) const {
  if (absl::Status valid = CheckName(name); !valid.ok()) return valid;
  absl::StatusOr<std::pair<int, std::string>> created =
      CreateTemporary(fd_, name, path_);
  if (!created.ok()) return created.status();
  const auto& [fd, temporary] = *created;
  const std::string temporary_path =
      base::PrintableValue(absl::StrCat(path_, "/", temporary));
  absl::Status status = WriteAll(fd, bytes, temporary_path);
  if (status.ok() && fsync(fd) != 0) {
    status = SystemError("cannot fsync", temporary_path);
  }
  if (close(fd) != 0 && status.ok()) {
    status = SystemError("cannot close", temporary_path);
  }
  if (!status.ok()) {
    unlinkat(fd_, temporary.c_str(), 0);
    return status;
  }
  return temporary;
}

absl::Status TrustedFolder::WriteFileAtomically(absl::string_view name,
                                                absl::string_view bytes) const {
  absl::StatusOr<std::string> temporary = WriteTemporary(name, bytes);
  if (!temporary.ok()) return temporary.status();
  if (renameat(fd_, temporary->c_str(), fd_, std::string(name).c_str()) != 0) {
    absl::Status failed =
        SystemError("cannot rename into", absl::StrCat(path_, "/", name));
    unlinkat(fd_, temporary->c_str(), 0);
    return failed;
  }
  // The rename itself survives a crash only once the folder is on disk.
  if (fsync(fd_) != 0) return SystemError("cannot fsync folder", path_);
  return absl::OkStatus();
}

absl::Status TrustedFolder::WriteFileOnce(absl::string_view name,
                                          absl::string_view bytes) const {
  absl::StatusOr<std::string> temporary = WriteTemporary(name, bytes);
  if (!temporary.ok()) return temporary.status();
  const std::string path = base::PrintableValue(absl::StrCat(path_, "/", name));
  // A hard link, unlike a rename, fails where the name is taken.
  const bool linked =
      linkat(fd_, temporary->c_str(), fd_, std::string(name).c_str(), 0) == 0;
  const int link_errno = errno;
  unlinkat(fd_, temporary->c_str(), 0);
  if (linked) {
    if (fsync(fd_) != 0) return SystemError("cannot fsync folder", path_);
    return absl::OkStatus();
  }
  if (link_errno != EEXIST) {
    errno = link_errno;
    return SystemError("cannot link into", path);
  }
  absl::StatusOr<std::string> existing =
      ReadFile(name, "", static_cast<int64_t>(bytes.size()));
  if (existing.ok() && *existing == bytes) return absl::OkStatus();
  return absl::AlreadyExistsError(absl::StrCat(
      "file ", path, " exists with other content and is not overwritten",
      existing.ok() ? ""
                    : absl::StrCat(" (", existing.status().message(), ")")));
}

absl::StatusOr<std::vector<FolderFile>> TrustedFolder::ListFiles() const {
  // fdopendir takes the descriptor over: give it a copy. The copy shares
  // the folder's read offset, which an earlier listing left at the end.
  const int listing_fd = dup(fd_);
  if (listing_fd < 0) return SystemError("cannot list folder", path_);
  DIR* listing = fdopendir(listing_fd);
  if (listing == nullptr) {
    close(listing_fd);
    return SystemError("cannot list folder", path_);
  }
  rewinddir(listing);
  std::vector<FolderFile> files;
  while (const dirent* item = readdir(listing)) {
    struct stat info;
    if (fstatat(fd_, item->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) {
      // A file removed since readdir saw it is simply gone; any other
      // failure (a folder without search permission) would make its files
      // look absent.
      if (errno == ENOENT) continue;
      absl::Status failed = SystemError("cannot list folder", path_);
      closedir(listing);
      return failed;
    }
    if (!S_ISREG(info.st_mode)) continue;
    files.push_back(
        {item->d_name, static_cast<int64_t>(info.st_size),
         int64_t{info.st_mtim.tv_sec} * 1000000000 + info.st_mtim.tv_nsec,
         info.st_uid});
  }
  closedir(listing);
  return files;
}

absl::Status TrustedFolder::RemoveFile(absl::string_view name) const {
  if (absl::Status valid = CheckName(name); !valid.ok()) return valid;
  const std::string path = base::PrintableValue(absl::StrCat(path_, "/", name));
  if (unlinkat(fd_, std::string(name).c_str(), 0) == 0) return absl::OkStatus();
  if (errno == ENOENT)
    return absl::NotFoundError(absl::StrCat("no file ", path));
  return SystemError("cannot remove", path);
}

void TrustedFolder::Touch(absl::string_view name) const {
  if (!CheckName(name).ok()) return;
  utimensat(fd_, std::string(name).c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

std::vector<FolderFile> TrustedFolder::RemoveStaleTemporaries(
    int64_t min_age_seconds,
    absl::FunctionRef<bool(absl::string_view name)> writes) const {
  absl::StatusOr<std::vector<FolderFile>> files = ListFiles();
  if (!files.ok()) return {};
  const int64_t now_ns = int64_t{time(nullptr)} * 1000000000;
  std::vector<FolderFile> removed;
  for (FolderFile& file : *files) {
    const std::optional<absl::string_view> name = NameOfTemporary(file.name);
    if (name && writes(*name) && file.owner == geteuid() &&
        now_ns - file.modified_ns >= min_age_seconds * 1000000000 &&
        unlinkat(fd_, file.name.c_str(), 0) == 0) {
      removed.push_back(std::move(file));
    }
  }
  return removed;
}

}  // namespace ptxgen::compile
