#ifndef PTXGEN_TOOLS_SUBCOMMANDS_H_
#define PTXGEN_TOOLS_SUBCOMMANDS_H_

// The subcommands of `ptxgen`, each defined in its own
// tools/ptxgen_<family>.cc. A new subcommand is one more function here and
// one more entry in the table of tools/ptxgen_main.cc.

#include <vector>

#include "tools/cli.h"

namespace ptxgen::tools {

// tools/ptxgen_wgmma.cc
cli::Subcommand WgmmaSubcommand();
cli::Subcommand WgmmaFenceSubcommand();
cli::Subcommand WgmmaCommitSubcommand();
cli::Subcommand WgmmaWaitSubcommand();

// tools/ptxgen_descriptor.cc
cli::Subcommand DescriptorSubcommand();

// tools/ptxgen_tma.cc
cli::Subcommand TmaSubcommand();

// tools/ptxgen_mbarrier.cc
cli::Subcommand MbarrierSubcommand();

// tools/ptxgen_warp.cc
cli::Subcommand WarpSubcommand();

// tools/ptxgen_convert.cc
cli::Subcommand ConvertSubcommand();

// tools/ptxgen_gemm.cc
cli::Subcommand GemmSubcommand();
cli::Subcommand PrecompileSubcommand();

// tools/ptxgen_attention.cc
cli::Subcommand AttentionSubcommand();

// tools/ptxgen_cache.cc: cache list, cache verify, cache prune, cache clear
std::vector<cli::Subcommand> CacheSubcommands();

}  // namespace ptxgen::tools

#endif  // PTXGEN_TOOLS_SUBCOMMANDS_H_
