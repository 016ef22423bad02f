// ptxgen: the command-line face of the library. Subcommands generate one
// instruction or kernel, validate it, and print it or what NVRTC made of it.
#include <iostream>
#include <string>
#include <vector>

#include "tools/cli.h"
#include "tools/subcommands.h"

int main(int argc, char** argv) {
  using namespace ptxgen::tools;  // NOLINT: the table reads better unqualified
  // In --help order.
  const std::vector<ptxgen::cli::Subcommand> subcommands = {
      WgmmaSubcommand(),     WgmmaFenceSubcommand(), WgmmaCommitSubcommand(),
      WgmmaWaitSubcommand(), DescriptorSubcommand(), TmaSubcommand(),
      MbarrierSubcommand(),  WarpSubcommand(),       ConvertSubcommand(),
      GemmSubcommand(),
  };
  const std::vector<std::string> args(argv + 1, argv + argc);
  return ptxgen::cli::RunTool(subcommands, args, std::cout, std::cerr);
}
