// Writes the golden generated sources into a workspace's tests/gen/golden/:
// one file per GEMM configuration of tests/gen/golden/CONFIGS, each
// GenerateGemm(config, form).source, and one per attention configuration of
// tests/gen/golden/ATTENTION, each GenerateAttention(config).source (both
// lists read from that same workspace); golden files no listed
// configuration writes are removed. Nothing is written unless every
// configuration generates. Run through tools/update_golden.sh:
//
//   bazel run //tests/gen:golden_writer            # $BUILD_WORKSPACE_DIRECTORY
//   bazel-bin/tests/gen/golden_writer /path/to/workspace
//
// Exit status 0 when the folder now holds the current text, 1 on a failure,
// 2 on a usage error.
#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/gen/golden_cases.h"

namespace ptxgen::golden {
namespace {

bool IsFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool Read(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  text->assign(std::istreambuf_iterator<char>(in), {});
  return !in.bad();
}

// Writes beside `path`, then renames over it: never a half-written file.
bool Write(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::remove(temporary.c_str());
      return false;
    }
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

int Main(int argc, char** argv) {
  std::string workspace;
  if (argc == 2 && std::strcmp(argv[1], "--help") != 0) {
    workspace = argv[1];
  } else if (argc == 1 && std::getenv("BUILD_WORKSPACE_DIRECTORY") != nullptr) {
    workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  } else {
    std::fprintf(
        stderr,
        "usage: golden_writer [WORKSPACE]\n"
        "Writes %s/*.cu in WORKSPACE (default: $BUILD_WORKSPACE_DIRECTORY,\n"
        "set by `bazel run`) for each configuration of %s and %s.\n",
        kGoldenDirectory, kConfigsFile, kAttentionFile);
    return 2;
  }
  if (!IsFile(workspace + "/WORKSPACE") &&
      !IsFile(workspace + "/WORKSPACE.bazel")) {
    std::fprintf(
        stderr,
        "golden_writer: %s is not a Bazel workspace (no WORKSPACE file)\n",
        workspace.c_str());
    return 2;
  }
  const std::string directory = absl::StrCat(workspace, "/", kGoldenDirectory);
  std::string list, attention_list;
  for (const auto& [file, text] :
       {std::pair(kConfigsFile, &list),
        std::pair(kAttentionFile, &attention_list)}) {
    const std::string path = absl::StrCat(workspace, "/", file);
    if (!Read(path, text)) {
      std::fprintf(stderr, "golden_writer: cannot read %s: %s\n", path.c_str(),
                   std::strerror(errno));
      return 1;
    }
  }
  absl::StatusOr<std::vector<GoldenCase>> cases = ParseGoldenConfigs(list);
  if (!cases.ok()) {
    std::fprintf(stderr, "golden_writer: %s\n",
                 std::string(cases.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<std::vector<AttentionGoldenCase>> attention_cases =
      ParseAttentionGoldens(attention_list);
  if (!attention_cases.ok()) {
    std::fprintf(stderr, "golden_writer: %s\n",
                 std::string(attention_cases.status().message()).c_str());
    return 1;
  }

  // Every text first: a configuration that fails leaves the folder as it was.
  struct File {
    std::string name;
    std::string text;
  };
  std::vector<File> files;
  for (const GoldenCase& golden : *cases) {
    absl::StatusOr<std::string> source = GoldenSource(golden);
    if (!source.ok()) {
      std::fprintf(stderr, "golden_writer: %s '%s': %s\n",
                   golden.form_name.c_str(), golden.config_name.c_str(),
                   std::string(source.status().message()).c_str());
      return 1;
    }
    files.push_back({golden.file_name, *std::move(source)});
  }
  for (const AttentionGoldenCase& golden : *attention_cases) {
    absl::StatusOr<std::string> source = AttentionGoldenSource(golden);
    if (!source.ok()) {
      std::fprintf(stderr, "golden_writer: attention '%s': %s\n",
                   golden.config_name.c_str(),
                   std::string(source.status().message()).c_str());
      return 1;
    }
    files.push_back({golden.file_name, *std::move(source)});
  }

  int updated = 0, unchanged = 0, removed = 0;
  std::set<std::string> listed;
  for (const File& file : files) {
    listed.insert(file.name);
    const std::string path = absl::StrCat(directory, "/", file.name);
    std::string old;
    if (Read(path, &old) && old == file.text) {
      ++unchanged;
      continue;
    }
    if (!Write(path, file.text)) {
      std::fprintf(stderr, "golden_writer: cannot write %s: %s\n", path.c_str(),
                   std::strerror(errno));
      return 1;
    }
    std::printf("golden_writer: wrote %s/%s\n", kGoldenDirectory,
                file.name.c_str());
    ++updated;
  }

  DIR* dir = opendir(directory.c_str());
  if (dir == nullptr) {
    std::fprintf(stderr, "golden_writer: cannot list %s: %s\n",
                 directory.c_str(), std::strerror(errno));
    return 1;
  }
  std::vector<std::string> stale;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (absl::EndsWith(name, ".cu") && listed.count(name) == 0)
      stale.push_back(name);
  }
  closedir(dir);
  for (const std::string& name : stale) {
    const std::string path = absl::StrCat(directory, "/", name);
    if (std::remove(path.c_str()) != 0) {
      std::fprintf(stderr, "golden_writer: cannot remove %s: %s\n",
                   path.c_str(), std::strerror(errno));
      return 1;
    }
    std::printf("golden_writer: removed %s/%s (not in CONFIGS or ATTENTION)\n",
                kGoldenDirectory, name.c_str());
    ++removed;
  }
  std::printf(
      "golden_writer: %zu GEMM and %zu attention configurations in %s: %d "
      "written, %d unchanged, %d removed\n",
      cases->size(), attention_cases->size(), directory.c_str(), updated,
      unchanged, removed);
  return 0;
}

}  // namespace
}  // namespace ptxgen::golden

int main(int argc, char** argv) { return ptxgen::golden::Main(argc, argv); }
