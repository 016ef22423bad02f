// `ptxgen convert`: rounding f32 accumulators to 16-bit and fp8 outputs.
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
  command.summary =
      "cvt.rn: f32 to f16, bf16, e4m3 or e5m2, one value or a packed pair";
  command.description =
      "Prints a cvt.rn statement rounding f32 to a 16-bit float or (with\n"
      ".satfinite) an fp8 one: result (b16; an fp8 value in its low byte)\n"
      "from value, or with --pack, packed from high and low (b32 of two\n"
      "16-bit values, b16 of two fp8 ones; low lands in the low half).";
  command.flags = {
      cli::ScalarTypeFlag("to", "The type to round to.", "f16",
                          ptx::CvtRoundsTo),
      cli::SwitchFlag("pack",
                      "Convert two values into one register (f16x2, bf16x2, "
                      "e4m3x2, e5m2x2)."),
      cli::StatementEmitFlag(),
  };
  command.examples = {
      "ptxgen convert --to=bf16",
      "ptxgen convert --to=f16 --pack --emit=ptx-lines",
      "ptxgen convert --to=e4m3 --pack",
  };
  command.run = RunConvert;
  return command;
}

}  // namespace ptxgen::tools
