#include "ptxgen/compile/inspect.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ptxgen/base/environment.h"
#include "ptxgen/base/utf8.h"
#include "ptxgen/compile/files.h"

extern char** environ;

namespace ptxgen::compile {
namespace {

// ---- SASS ----

// The first executable regular file `name` in a colon-separated path list,
// of its absolute folders only: an empty entry, ".", "bin" would run
// whatever the current folder holds.
std::string FindTool(absl::string_view name, absl::string_view search_path) {
  for (absl::string_view directory : absl::StrSplit(search_path, ':')) {
    if (!absl::StartsWith(directory, "/")) continue;
    std::string candidate = absl::StrCat(directory, "/", name);
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

// A temporary .cubin holding `bytes`, removed when this goes out of scope.
class TemporaryCubin {
 public:
  TemporaryCubin() = default;
  TemporaryCubin(const TemporaryCubin&) = delete;
  TemporaryCubin& operator=(const TemporaryCubin&) = delete;
  ~TemporaryCubin() {
    if (!path_.empty()) unlink(path_.c_str());
  }

  absl::Status Write(absl::string_view bytes) {
    const absl::string_view tmpdir = base::EnvironmentVariable("TMPDIR");
    std::string pattern =
        absl::StrCat(tmpdir.empty() ? "/tmp" : tmpdir, "/ptxgen-XXXXXX.cubin");
    const int fd = mkstemps(pattern.data(), 6);
    if (fd < 0) return Failure("cannot create", pattern);
    path_ = pattern;
    if (absl::Status written = WriteAll(fd, bytes, path_); !written.ok()) {
      close(fd);
      return absl::UnavailableError(absl::StrCat("sass: ", written.message()));
    }
    return close(fd) == 0 ? absl::OkStatus() : Failure("cannot close", path_);
  }

  const std::string& path() const { return path_; }

 private:
  static absl::Status Failure(absl::string_view what, const std::string& path) {
    return absl::UnavailableError(
        absl::StrCat("sass: ", what, " ", path, ": ", std::strerror(errno)));
  }

  std::string path_;
};

// Runs `argv` to completion; its stdout and stderr together on success, the
// same text in the error when it exits non-zero.
absl::StatusOr<std::string> RunAndCapture(
    const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::UnavailableError(
        absl::StrCat("sass: pipe: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return absl::UnavailableError(absl::StrCat("sass: cannot run ", argv[0],
                                               ": ", std::strerror(spawned)));
  }
  std::string output;
  char buffer[1 << 16];
  for (ssize_t got; (got = read(pipe_fds[0], buffer, sizeof(buffer))) != 0;) {
    if (got > 0) output.append(buffer, static_cast<size_t>(got));
    if (got < 0 && errno != EINTR) break;
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how =
        WIFEXITED(status) ? absl::StrCat("exit status ", WEXITSTATUS(status))
        : WIFSIGNALED(status)
            ? absl::StrCat("killed by signal ", WTERMSIG(status))
            : absl::StrCat("wait status ", status);
    return absl::InternalError(absl::StrCat("sass: '", absl::StrJoin(argv, " "),
                                            "' failed (", how, "):\n", output));
  }
  return output;
}

// ---- JSON ----

void AppendEscapedAscii(unsigned char c, std::string& out) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
  }
  if (c < 0x20) {
    absl::StrAppendFormat(&out, "\\u%04x", c);
  } else {
    out.push_back(static_cast<char>(c));
  }
}

const char* SourceName(CacheSource source) {
  switch (source) {
    case CacheSource::kCompiled:
      return "compiled";
    case CacheSource::kMemoryCache:
      return "memory_cache";
    case CacheSource::kDiskCache:
      return "disk_cache";
  }
  return "compiled";
}

const char* KindName(CompilerDiagnostic::Kind kind) {
  switch (kind) {
    case CompilerDiagnostic::Kind::kWgmmaSerialized:
      return "wgmma_serialized";
    case CompilerDiagnostic::Kind::kInjectedWait:
      return "injected_wait";
    case CompilerDiagnostic::Kind::kSetmaxnregIgnored:
      return "setmaxnreg_ignored";
    case CompilerDiagnostic::Kind::kOtherWarning:
      return "other";
  }
  return "other";
}

std::string DiagnosticJson(const CompilerDiagnostic& diagnostic) {
  return absl::StrCat("{\"kind\":\"", KindName(diagnostic.kind),
                      "\",\"code\":", JsonString(diagnostic.code),
                      ",\"message\":", JsonString(diagnostic.message), "}");
}

// The diagnostics naming `kernel`; with an empty `kernel`, those naming no
// kernel of `module`.
std::string WarningsJson(const CompiledModule& module,
                         absl::string_view kernel) {
  std::vector<std::string> items;
  for (const CompilerDiagnostic& diagnostic : module.diagnostics) {
    bool names_a_kernel = false;
    for (const KernelResources& resources : module.resources) {
      names_a_kernel = names_a_kernel || diagnostic.kernel == resources.kernel;
    }
    const bool belongs =
        kernel.empty() ? !names_a_kernel : diagnostic.kernel == kernel;
    if (belongs) items.push_back(DiagnosticJson(diagnostic));
  }
  return absl::StrCat("[", absl::StrJoin(items, ","), "]");
}

std::string KernelJson(const CompiledModule& module,
                       const KernelResources& kernel) {
  return absl::StrCat("{\"name\":", JsonString(kernel.kernel),
                      ",\"registers\":", kernel.registers,
                      ",\"static_shared_bytes\":", kernel.static_shared_bytes,
                      ",\"stack_bytes\":", kernel.stack_frame_bytes,
                      ",\"spill_store_bytes\":", kernel.spill_store_bytes,
                      ",\"spill_load_bytes\":", kernel.spill_load_bytes,
                      ",\"warnings\":", WarningsJson(module, kernel.kernel),
                      "}");
}

std::string KernelsJson(const CompiledModule& module) {
  std::vector<std::string> kernels;
  for (const KernelResources& kernel : module.resources) {
    kernels.push_back(KernelJson(module, kernel));
  }
  return absl::StrCat("[", absl::StrJoin(kernels, ","), "]");
}

}  // namespace

absl::StatusOr<std::string> DisassembleSass(const CompiledModule& module,
                                            absl::string_view search_path) {
  if (module.cubin.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("sass: module '", module.name, "' has no CUBIN"));
  }
  std::vector<std::string> argv;
  if (std::string nvdisasm = FindTool("nvdisasm", search_path);
      !nvdisasm.empty()) {
    argv = {nvdisasm};
  } else if (std::string cuobjdump = FindTool("cuobjdump", search_path);
             !cuobjdump.empty()) {
    argv = {cuobjdump, "-sass"};
  } else {
    return absl::NotFoundError(
        "sass: neither nvdisasm nor cuobjdump is on the PATH; install the CUDA "
        "toolkit's binary utilities or add their directory to PATH");
  }
  TemporaryCubin cubin;
  if (absl::Status written = cubin.Write(module.cubin); !written.ok())
    return written;
  argv.push_back(cubin.path());
  return RunAndCapture(argv);
}

absl::StatusOr<std::string> DisassembleSass(const CompiledModule& module) {
  return DisassembleSass(module, base::EnvironmentVariable("PATH"));
}

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  while (!text.empty()) {
    const unsigned char c = static_cast<unsigned char>(text[0]);
    if (c < 0x80) {
      AppendEscapedAscii(c, out);
      text.remove_prefix(1);
    } else if (const size_t length = base::Utf8SequenceLength(text);
               length > 0) {
      out.append(text.data(), length);
      text.remove_prefix(length);
    } else {
      out += "\\ufffd";
      text.remove_prefix(1);
    }
  }
  out += "\"";
  return out;
}

std::string ToJson(const CompiledModule& module) {
  std::vector<std::string> cache_warnings;
  for (const std::string& warning : module.cache_warnings) {
    cache_warnings.push_back(JsonString(warning));
  }
  return absl::StrCat(
      "{\"name\":", JsonString(module.name), ",\"source\":\"",
      SourceName(module.source),
      "\",\"compile_ms\":", absl::StrFormat("%.3f", module.compile_ms),
      ",\"cache_key\":", JsonString(module.cache_key),
      ",\"arch\":", JsonString(module.options.arch),
      ",\"kernels\":", KernelsJson(module),
      ",\"warnings\":", WarningsJson(module, ""), ",\"cache_warnings\":[",
      absl::StrJoin(cache_warnings, ","), "]}");
}

std::string ResourcesJson(const CompiledModule& module) {
  return absl::StrCat("{\"name\":", JsonString(module.name),
                      ",\"cache_key\":", JsonString(module.cache_key),
                      ",\"arch\":", JsonString(module.options.arch),
                      ",\"kernels\":", KernelsJson(module),
                      ",\"warnings\":", WarningsJson(module, ""), "}");
}

}  // namespace ptxgen::compile
