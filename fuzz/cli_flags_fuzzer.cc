// The ptxgen command line: cli::ParsedFlags::Parse with a fixed table (one
// flag of each kind, a required one, defaults) and cli::RunTool dispatching
// to two subcommands built on it. Input (text): one argument per line.
// Invariants: an accepted command line has its required flag; every given
// flag is in the table and reads back as given; an integer flag's value is
// the very integer written (no narrowing), and one that does not fit in an
// int is refused as out of range, whatever its digits, not as malformed; a
// choice is one of its choices; RunTool exits 0, 1 or 2, and 2 (usage)
// exactly when the parser refuses the flags.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "fuzz/fuzz_support.h"
#include "tools/cli.h"

namespace {

namespace cli = ptxgen::cli;

const std::vector<cli::Flag>& Table() {
  static const auto* const table = new std::vector<cli::Flag>{
      cli::SwitchFlag("verbose", "Says more."),
      cli::IntegerFlag("rows", "ROWS", "A count.", "128"),
      cli::IntegerFlag("offset", "BYTES", "An offset without a default.", ""),
      cli::ChoiceFlag("type", "TYPE", {{"f16", ""}, {"bf16", "brain float"}},
                      "The element type.", "f16"),
      cli::Required(cli::TextFlag("name", "NAME", "Any text.")),
      cli::StatementEmitFlag(),
  };
  return *table;
}

const cli::Flag* Find(absl::string_view name) {
  for (const cli::Flag& flag : Table()) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

void CheckParsed(const cli::ParsedFlags& flags,
                 const std::vector<std::string>& args) {
  const std::string line = absl::StrJoin(args, " ");
  FUZZ_CHECK(flags.Has("name"), "'", line, "' accepted without --name");
  for (const std::string& name : flags.GivenNames()) {
    const cli::Flag* flag = Find(name);
    FUZZ_CHECK(flag != nullptr && flags.Has(name), "'", line, "': --", name,
               " is not in the table");
    const std::string value = flags.Text(name);
    FUZZ_CHECK(
        std::find(args.begin(), args.end(),
                  flag->kind == cli::FlagKind::kSwitch
                      ? absl::StrCat("--", name)
                      : absl::StrCat("--", name, "=", value)) != args.end(),
        "'", line, "': --", name, " reads back as '", value, "'");
    if (flag->kind == cli::FlagKind::kInteger) {
      int64_t written = 0;
      FUZZ_CHECK(
          absl::SimpleAtoi(value, &written) && flags.Integer(name) == written,
          "'", line, "': --", name, "=", value, " reads as ",
          flags.Integer(name));
    }
    if (flag->kind == cli::FlagKind::kChoice) {
      bool listed = false;
      for (const cli::Choice& choice : flag->choices)
        listed |= choice.name == value;
      FUZZ_CHECK(listed, "'", line, "': --", name, "=", value, " is no choice");
    }
  }
  FUZZ_CHECK(flags.Has("rows") || flags.Integer("rows") == 128, "'", line,
             "': the default of --rows reads as ", flags.Integer("rows"));
  FUZZ_CHECK(flags.Has("offset") || flags.Integer("offset") == 0, "'", line,
             "': --offset left out reads as ", flags.Integer("offset"));
}

// Digits with an optional sign, however many: an integer, maybe too large.
bool IsIntegerText(absl::string_view text) {
  if (!text.empty() && (text[0] == '-' || text[0] == '+'))
    text.remove_prefix(1);
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

// An integer flag's value of digits reads as that integer when it fits in
// an int, and is refused as outside the range when it does not, however
// many digits it has.
void CheckIntegerRange(const std::string& arg) {
  for (const char* flag : {"--rows=", "--offset="}) {
    absl::string_view value = arg;
    if (!absl::ConsumePrefix(&value, flag) || !IsIntegerText(value)) continue;
    const std::vector<std::string> args = {arg, "--name=x"};
    const absl::StatusOr<cli::ParsedFlags> parsed =
        cli::ParsedFlags::Parse(Table(), args);
    const std::string name(absl::string_view(flag + 2, std::strlen(flag) - 3));
    int fits = 0;
    if (absl::SimpleAtoi(value, &fits)) {
      FUZZ_CHECK(parsed.ok() && parsed->Integer(name) == fits, "'", arg,
                 "' reads as ",
                 parsed.ok() ? absl::StrCat(parsed->Integer(name))
                             : std::string(parsed.status().message()));
    } else {
      FUZZ_CHECK(!parsed.ok() &&
                     absl::StrContains(parsed.status().message(), "is outside"),
                 "'", arg, "' is ",
                 parsed.ok()
                     ? "accepted"
                     : absl::StrCat("refused as: ", parsed.status().message()));
    }
  }
}

std::vector<cli::Subcommand> Subcommands() {
  cli::Subcommand echo;
  echo.name = "echo";
  echo.summary = "Prints its flags.";
  echo.description = "Prints the flags it was given.";
  echo.flags = Table();
  echo.examples = {"ptxgen echo --name=x --rows=3"};
  echo.run = [](const cli::ParsedFlags& flags) -> absl::StatusOr<std::string> {
    if (flags.Integer("rows") < 0)
      return absl::InvalidArgumentError("negative rows");
    return absl::StrJoin(flags.GivenNames(), ",");
  };
  cli::Subcommand none;
  none.name = "none";
  none.summary = "Takes no flags.";
  none.run = [](const cli::ParsedFlags&) -> absl::StatusOr<std::string> {
    return "";
  };
  return {echo, none};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto* const subcommands =
      new std::vector<cli::Subcommand>(Subcommands());
  const std::vector<std::string> args =
      absl::StrSplit(ptxgen::fuzz::AsText(data, size), '\n');
  const absl::StatusOr<cli::ParsedFlags> flags =
      cli::ParsedFlags::Parse(Table(), args);
  if (flags.ok()) {
    CheckParsed(*flags, args);
  } else {
    FUZZ_CHECK(cli::IsUsageError(flags.status()),
               "a refusal that is no usage error: ", flags.status().ToString());
  }
  for (const std::string& arg : args) CheckIntegerRange(arg);
  std::vector<std::string> command = {"echo"};
  command.insert(command.end(), args.begin(), args.end());
  std::ostringstream out, err;
  const int status = cli::RunTool(*subcommands, command, out, err);
  bool help = false;
  for (const std::string& arg : args) help |= arg == "--help" || arg == "-h";
  FUZZ_CHECK(status == cli::kExitSuccess || status == cli::kExitFailure ||
                 status == cli::kExitUsage,
             "exit status ", status);
  if (!help) {
    FUZZ_CHECK((status == cli::kExitUsage) == !flags.ok(), "RunTool exited ",
               status, " where the parser ",
               flags.ok() ? "accepted" : "refused", " the flags");
  }
  // The first argument picks the subcommand: any text.
  std::ostringstream out2, err2;
  const int picked = cli::RunTool(*subcommands, args, out2, err2);
  FUZZ_CHECK(picked >= 0 && picked <= cli::kExitUsage, "exit status ", picked);
  return 0;
}
