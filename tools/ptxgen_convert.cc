// `ptxgen convert`: rounding f32 accumulators to 16-bit outputs.
#include "ptxgen/ptx/convert.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace ptxgen::tools {
namespace {

absl::StatusOr<std::string> RunConvert(const cli::ParsedFlags& flags) {
  absl::StatusOr<ptx::ScalarType> to = cli::ScalarTypeValue(flags, "to");
  if (!to.ok()) return to.status();
  return cli::EmitStatement("probe_convert",
                            flags.Has("pack") ? ptx::CvtPackFromF32x2(*to)
                                              : ptx::CvtRoundFromF32(*to),
                            flags.Text("emit"));
}

}  // namespace

cli::Subcommand ConvertSubcommand() {
  cli::Subcommand command;
  command.name = "convert";
  command.summary = "cvt.rn: f32 to f16 or bf16, one value or a packed pair";
  command.description =
      "Prints a cvt.rn statement rounding f32 to a 16-bit float: result (b16)\n"
      "from value, or with --pack, packed (b32) from high and low (low lands\n"
      "in bits 0-15).";
  command.flags = {
      cli::ScalarTypeFlag("to", "The 16-bit float type to round to.", "f16",
                          ptx::CvtRoundsTo),
      cli::SwitchFlag("pack",
                      "Convert two values into one b32 (f16x2, "
                      "bf16x2)."),
      cli::StatementEmitFlag(),
  };
  command.examples = {
      "ptxgen convert --to=bf16",
      "ptxgen convert --to=f16 --pack --emit=ptx-lines",
  };
  command.run = RunConvert;
  return command;
}

}  // namespace ptxgen::tools
