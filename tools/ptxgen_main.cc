// ptxgen: the command-line face of the library. Subcommands generate one
// instruction or kernel, validate it, and print it or what NVRTC made of it.
#include <fcntl.h>
#include <unistd.h>

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "tools/cli.h"
#include "tools/subcommands.h"

namespace {

// Gives each standard stream the caller closed (the shell's >&-) /dev/null,
// read-only: no file the tool opens (a cache entry) can take its number and
// receive the output, and writing to it fails, as writing to a closed one
// would.
void HoldClosedStandardStreams() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    // The lowest free number: `fd`, as every lower one is open by now.
    if (fcntl(fd, F_GETFD) == -1) open("/dev/null", O_RDONLY);
  }
}

}  // namespace

int main(int argc, char** argv) {
  HoldClosedStandardStreams();
  using namespace ptxgen::tools;  // NOLINT: the table reads better unqualified
  // In --help order.
  std::vector<ptxgen::cli::Subcommand> subcommands = {
      WgmmaSubcommand(),     WgmmaFenceSubcommand(), WgmmaCommitSubcommand(),
      WgmmaWaitSubcommand(), DescriptorSubcommand(), TmaSubcommand(),
      MbarrierSubcommand(),  WarpSubcommand(),       ConvertSubcommand(),
      GemmSubcommand(),      PrecompileSubcommand(), AttentionSubcommand(),
  };
  for (ptxgen::cli::Subcommand& action : CacheSubcommands()) {
    subcommands.push_back(std::move(action));
  }
  const std::vector<std::string> args(argv + 1, argv + argc);
  return ptxgen::cli::RunTool(subcommands, args, std::cout, std::cerr);
}
