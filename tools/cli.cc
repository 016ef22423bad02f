// The subcommand table, flag parsing, help and exit statuses of `ptxgen`.
#include "tools/cli.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/charconv.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ptxgen/base/printable.h"
#include "ptxgen/version.h"

namespace ptxgen::cli {
namespace {

// Marks a status as a usage error. A payload, not a status code: the
// library's validation errors are InvalidArgument too, and exit with 1.
constexpr char kUsagePayload[] = "ptxgen.tools/usage";

constexpr size_t kHelpWidth = 79;

// `text` word-wrapped to kHelpWidth, every line indented by `indent`.
std::string Wrap(absl::string_view text, size_t indent) {
  const std::string pad(indent, ' ');
  std::string out;
  std::string line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && indent + line.size() + 1 + word.size() > kHelpWidth) {
      absl::StrAppend(&out, pad, line, "\n");
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty()) absl::StrAppend(&out, pad, line, "\n");
  return out;
}

// "name   help...", the help wrapped in a column `name_width` wide.
std::string Item(absl::string_view name, absl::string_view help, size_t indent,
                 size_t name_width) {
  const std::string head = absl::StrCat(std::string(indent, ' '), name);
  if (help.empty()) return absl::StrCat(head, "\n");
  const std::string wrapped = Wrap(help, indent + name_width);
  if (head.size() + 1 > indent + name_width) {
    return absl::StrCat(head, "\n", wrapped);
  }
  return absl::StrCat(head, wrapped.substr(head.size()));
}

// The column width that fits every item's name and two spaces.
template <typename Items, typename Name>
size_t NameWidth(const Items& items, Name name) {
  size_t width = 0;
  for (const auto& item : items) width = std::max(width, name(item).size());
  return width + 2;
}

// The help views of --emit, shared by every subcommand that has one.
const std::vector<Choice>& Views() {
  static const std::vector<Choice>* const views = new std::vector<Choice>{
      {"asm", "the inline-asm statement, operands named after their roles"},
      {"ptx-lines",
       "register declarations and the bare PTX lines, registers named %rs, "
       "%r, %rd, %f, %p by class"},
      {"cuda",
       "the CUDA C++ source of the kernel (for an instruction: a "
       "minimal sm_90a probe kernel holding it)"},
      {"ptx", "the PTX module NVRTC produces for sm_90a (ptxas accepts it)"},
      {"sass",
       "the SASS of the CUBIN, from nvdisasm or else cuobjdump found "
       "on PATH; an error naming both when neither is there"},
      {"resources",
       "per kernel: registers, static shared memory, stack "
       "frame, spill bytes; then the compiler's warnings"},
      {"json",
       "one JSON object on one line: schema (the layout's version), cache "
       "(hit or miss), name, source, compile_ms, cache_key, arch, kernels "
       "(registers, static_shared_bytes, spill bytes, warnings), warnings, "
       "cache_warnings; gemm adds problem, form, config, sms, grid, "
       "threads_per_block and dynamic_shared_bytes, attention problem, "
       "config, tiles, sms, grid, threads_per_block and "
       "dynamic_shared_bytes"},
  };
  return *views;
}

const Flag* FindFlag(absl::Span<const Flag> table, absl::string_view name) {
  for (const Flag& flag : table) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

std::string ChoiceNames(const Flag& flag) {
  std::vector<std::string> names;
  for (const Choice& choice : flag.choices) names.push_back(choice.name);
  return absl::StrJoin(names, ", ");
}

std::string FlagUsage(const Flag& flag) {
  if (flag.kind == FlagKind::kSwitch) return absl::StrCat("--", flag.name);
  return absl::StrCat("--", flag.name, "=",
                      flag.value_name.empty() ? "VALUE" : flag.value_name);
}

absl::Status CheckValue(const Flag& flag, absl::string_view text) {
  const std::string value = Echo(text);
  switch (flag.kind) {
    case FlagKind::kSwitch:
      return UsageError(absl::StrCat("--", flag.name,
                                     " is a switch and takes no value (got --",
                                     flag.name, "=", value, ")"));
    case FlagKind::kInteger: {
      int parsed = 0;
      if (absl::SimpleAtoi(text, &parsed)) return absl::OkStatus();
      // Digits that do not fit, in 64 bits or not, are out of range, not
      // malformed.
      absl::string_view digits = text;
      if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
        digits.remove_prefix(1);
      }
      if (!digits.empty() &&
          std::all_of(digits.begin(), digits.end(),
                      [](char c) { return c >= '0' && c <= '9'; })) {
        return UsageError(absl::StrCat("--", flag.name, "=", value,
                                       " is outside ",
                                       std::numeric_limits<int>::min(), "..",
                                       std::numeric_limits<int>::max()));
      }
      return UsageError(absl::StrCat("--", flag.name,
                                     " takes an integer, not '", value, "'"));
    }
    case FlagKind::kChoice:
      for (const Choice& choice : flag.choices) {
        if (choice.name == text) return absl::OkStatus();
      }
      return UsageError(absl::StrCat(
          "--", flag.name, "=", value,
          " is not accepted (accepted values: ", ChoiceNames(flag), ")"));
    case FlagKind::kText:
      break;
  }
  return absl::OkStatus();
}

std::string FlagList(absl::Span<const Flag> table) {
  std::vector<std::string> names;
  for (const Flag& flag : table) names.push_back(absl::StrCat("--", flag.name));
  names.push_back("--help");
  return absl::StrJoin(names, ", ");
}

// Parses one "--name[=value]" argument into `given`.
absl::Status ParseArgument(
    absl::Span<const Flag> table, absl::string_view arg,
    std::map<std::string, std::string, std::less<>>& given) {
  if (!absl::StartsWith(arg, "--") || arg.size() == 2) {
    return UsageError(absl::StrCat("unexpected argument '", Echo(arg),
                                   "': flags are written --name=value or "
                                   "--name"));
  }
  const std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(arg.substr(2), absl::MaxSplits('=', 1));
  const absl::string_view name = parts.first;
  const bool has_value = arg.find('=') != absl::string_view::npos;
  if (name == "help") {
    return UsageError("--help is a switch and takes no value");
  }
  const Flag* flag = FindFlag(table, name);
  if (flag == nullptr) {
    return UsageError(absl::StrCat("unknown flag --", Echo(name),
                                   " (accepted flags: ", FlagList(table), ")"));
  }
  if (given.count(name) > 0) {
    return UsageError(absl::StrCat("--", name, " is given more than once"));
  }
  if (flag->kind != FlagKind::kSwitch && (!has_value || parts.second.empty())) {
    return UsageError(
        absl::StrCat("--", name, " needs a value: ", FlagUsage(*flag)));
  }
  if (has_value) {
    if (absl::Status valid = CheckValue(*flag, parts.second); !valid.ok()) {
      return valid;
    }
  }
  given.emplace(std::string(name), std::string(parts.second));
  return absl::OkStatus();
}

std::string FlagHelp(const Flag& flag) {
  bool listed = false;
  for (const Choice& choice : flag.choices) listed |= !choice.help.empty();
  std::string help = flag.help;
  if (flag.kind == FlagKind::kChoice && !listed) {
    absl::StrAppend(&help, " One of: ", ChoiceNames(flag), ".");
  }
  if (flag.required) absl::StrAppend(&help, " Required.");
  if (!flag.default_value.empty()) {
    absl::StrAppend(&help, " Default: ", flag.default_value, ".");
  }
  std::string text = absl::StrCat("  ", FlagUsage(flag), "\n", Wrap(help, 6));
  if (!listed) return text;
  const size_t width =
      NameWidth(flag.choices, [](const Choice& c) { return c.name; });
  for (const Choice& choice : flag.choices) {
    absl::StrAppend(&text, Item(choice.name, choice.help, 8, width));
  }
  return text;
}

const Subcommand* FindSubcommand(absl::Span<const Subcommand> subcommands,
                                 absl::string_view name) {
  for (const Subcommand& subcommand : subcommands) {
    if (subcommand.name == name) return &subcommand;
  }
  return nullptr;
}

// The second words of the subcommands named "<first> <second>" ("cache
// list"): what a first word alone needs after it.
std::vector<std::string> SecondWords(absl::Span<const Subcommand> subcommands,
                                     absl::string_view first) {
  std::vector<std::string> words;
  for (const Subcommand& subcommand : subcommands) {
    absl::string_view name = subcommand.name;
    if (absl::ConsumePrefix(&name, first) && absl::ConsumePrefix(&name, " ")) {
      words.emplace_back(name);
    }
  }
  return words;
}

bool IsHelp(absl::string_view arg) { return arg == "--help" || arg == "-h"; }

// Writes "ptxgen: <message>" on a line, escaped: messages quote the command
// line, and the library's errors quote compiler logs and file names.
void PrintMessage(absl::string_view message, std::ostream& err) {
  err << "ptxgen: " << base::Printable(message) << "\n";
}

// Code views go to files, byte for byte, and JSON escapes its own strings.
// Every other result is text for a terminal, which may quote a compiler log
// or a cache entry.
bool IsExactView(absl::string_view view) {
  constexpr absl::string_view kExact[] = {"asm", "ptx-lines", "cuda",
                                          "ptx", "sass",      "json"};
  return std::find(std::begin(kExact), std::end(kExact), view) !=
         std::end(kExact);
}

// What a command line prints on stdout, and its exit status.
struct Outcome {
  int status = kExitSuccess;
  std::string out;
};

// Prints `status` and picks the exit status: 2 for the command line, 1 for
// the request.
Outcome Report(const Subcommand& subcommand, const absl::Status& status,
               std::ostream& err) {
  PrintMessage(status.message(), err);
  if (!IsUsageError(status)) return {kExitFailure, ""};
  err << "run 'ptxgen " << subcommand.name << " --help' for its flags\n";
  return {kExitUsage, ""};
}

Outcome RunSubcommand(const Subcommand& subcommand,
                      absl::Span<const std::string> args, std::ostream& err) {
  for (const std::string& arg : args) {
    if (IsHelp(arg)) return {kExitSuccess, SubcommandHelp(subcommand)};
  }
  absl::StatusOr<ParsedFlags> flags =
      ParsedFlags::Parse(subcommand.flags, args);
  if (!flags.ok()) return Report(subcommand, flags.status(), err);
  absl::StatusOr<std::string> result = subcommand.run(*flags);
  if (!result.ok()) return Report(subcommand, result.status(), err);
  if (!result->empty() && result->back() != '\n') result->push_back('\n');
  if (!IsExactView(flags->Text("emit"))) *result = base::Printable(*result);
  return {kExitSuccess, *std::move(result)};
}

std::string SubcommandNames(absl::Span<const Subcommand> subcommands) {
  std::vector<std::string> names;
  for (const Subcommand& subcommand : subcommands) {
    names.push_back(subcommand.name);
  }
  return absl::StrJoin(names, ", ");
}

// Runs the command line `args` up to its output; messages go to `err`.
Outcome Dispatch(absl::Span<const Subcommand> subcommands,
                 absl::Span<const std::string> args, std::ostream& err) {
  if (args.empty()) {
    err << OverviewHelp(subcommands);
    return {kExitUsage, ""};
  }
  if ((IsHelp(args[0]) || args[0] == "--version") && args.size() > 1) {
    PrintMessage(
        absl::StrCat(args[0], " takes nothing after it (got '", args[1], "')"),
        err);
    err << "run 'ptxgen --help' for usage\n";
    return {kExitUsage, ""};
  }
  if (IsHelp(args[0])) return {kExitSuccess, OverviewHelp(subcommands)};
  if (args[0] == "--version") {
    return {kExitSuccess, absl::StrCat("ptxgen ", kVersion, "\n")};
  }
  // A subcommand of two words ("cache list") takes two arguments.
  if (args.size() > 1) {
    if (const Subcommand* two_words =
            FindSubcommand(subcommands, absl::StrCat(args[0], " ", args[1]))) {
      return RunSubcommand(*two_words, args.subspan(2), err);
    }
  }
  const Subcommand* subcommand = FindSubcommand(subcommands, args[0]);
  if (const std::vector<std::string> second = SecondWords(subcommands, args[0]);
      subcommand == nullptr && !second.empty()) {
    PrintMessage(absl::StrCat("'", args[0], "' needs one of: ",
                              absl::StrJoin(second, ", "), " (e.g. 'ptxgen ",
                              args[0], " ", second.front(), "')"),
                 err);
    err << "run 'ptxgen --help' for usage\n";
    return {kExitUsage, ""};
  }
  if (subcommand == nullptr) {
    PrintMessage(
        absl::StrCat("unknown subcommand '", args[0],
                     "' (subcommands: ", SubcommandNames(subcommands), ")"),
        err);
    err << "run 'ptxgen --help' for usage\n";
    return {kExitUsage, ""};
  }
  return RunSubcommand(*subcommand, args.subspan(1), err);
}

// Writes and flushes `text`: output that does not reach its file (a full
// disk, a closed stdout) is a failure, not a success with lost output.
int WriteOutput(const std::string& text, std::ostream& out, std::ostream& err) {
  errno = 0;  // so that a stale value cannot be taken for the reason
  out << text;
  out.flush();
  if (out) return kExitSuccess;
  const int reason = errno;
  PrintMessage(absl::StrCat("cannot write the output", reason != 0 ? ": " : "",
                            reason != 0 ? std::strerror(reason) : ""),
               err);
  return kExitFailure;
}

// Whether `text`, a number SimpleAtof read as 0, names a nonzero value that
// f32 rounds to 0 (from_chars says so as out of range).
bool UnderflowsToZero(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  absl::ConsumePrefix(&text, "+");
  float value = 0;
  return absl::from_chars(text.data(), text.data() + text.size(), value).ec ==
         std::errc::result_out_of_range;
}

}  // namespace

// ---- Flags ----

Flag SwitchFlag(std::string name, std::string help) {
  Flag flag;
  flag.name = std::move(name);
  flag.kind = FlagKind::kSwitch;
  flag.help = std::move(help);
  return flag;
}

Flag IntegerFlag(std::string name, std::string value_name, std::string help,
                 std::string default_value) {
  Flag flag;
  flag.name = std::move(name);
  flag.kind = FlagKind::kInteger;
  flag.value_name = std::move(value_name);
  flag.help = std::move(help);
  flag.default_value = std::move(default_value);
  return flag;
}

Flag ChoiceFlag(std::string name, std::string value_name,
                std::vector<Choice> choices, std::string help,
                std::string default_value) {
  Flag flag;
  flag.name = std::move(name);
  flag.kind = FlagKind::kChoice;
  flag.value_name = std::move(value_name);
  flag.choices = std::move(choices);
  flag.help = std::move(help);
  flag.default_value = std::move(default_value);
  return flag;
}

Flag TextFlag(std::string name, std::string value_name, std::string help) {
  Flag flag;
  flag.name = std::move(name);
  flag.kind = FlagKind::kText;
  flag.value_name = std::move(value_name);
  flag.help = std::move(help);
  return flag;
}

Flag Required(Flag flag) {
  flag.required = true;
  return flag;
}

absl::StatusOr<ParsedFlags> ParsedFlags::Parse(
    absl::Span<const Flag> table, absl::Span<const std::string> args) {
  ParsedFlags flags;
  for (const std::string& arg : args) {
    if (absl::Status parsed = ParseArgument(table, arg, flags.given_);
        !parsed.ok()) {
      return parsed;
    }
  }
  for (const Flag& flag : table) {
    if (flag.required && !flags.Has(flag.name)) {
      return UsageError(
          absl::StrCat("--", flag.name, " is required: ", FlagUsage(flag)));
    }
    if (!flag.default_value.empty()) {
      flags.defaults_.emplace(flag.name, flag.default_value);
    }
  }
  return flags;
}

bool ParsedFlags::Has(absl::string_view name) const {
  return given_.find(name) != given_.end();
}

std::string ParsedFlags::Text(absl::string_view name) const {
  if (auto it = given_.find(name); it != given_.end()) return it->second;
  if (auto it = defaults_.find(name); it != defaults_.end()) return it->second;
  return "";
}

int ParsedFlags::Integer(absl::string_view name) const {
  int value = 0;
  return absl::SimpleAtoi(Text(name), &value) ? value : 0;
}

std::vector<std::string> ParsedFlags::GivenNames() const {
  std::vector<std::string> names;
  for (const auto& [name, unused] : given_) names.push_back(name);
  return names;
}

// ---- Help and dispatch ----

std::string OverviewHelp(absl::Span<const Subcommand> subcommands) {
  std::string text = absl::StrCat(
      Wrap(absl::StrCat("ptxgen ", kVersion,
                        ": Hopper (sm_90a) instructions and kernels as text, "
                        "validated, compiled with NVRTC and inspected."),
           0),
      "\n", "usage: ptxgen <subcommand> [--flag=value | --switch]...\n",
      "       ptxgen <subcommand> --help    the flags and examples of one "
      "subcommand\n",
      "       ptxgen --help | --version\n\nsubcommands:\n");
  const size_t width =
      NameWidth(subcommands, [](const Subcommand& s) { return s.name; });
  for (const Subcommand& subcommand : subcommands) {
    absl::StrAppend(&text, Item(subcommand.name, subcommand.summary, 2, width));
  }
  absl::StrAppend(&text,
                  "\nviews (--emit=VIEW; each subcommand --help lists the "
                  "ones it offers):\n");
  const size_t view_width =
      NameWidth(Views(), [](const Choice& c) { return c.name; });
  for (const Choice& view : Views()) {
    absl::StrAppend(&text, Item(view.name, view.help, 2, view_width));
  }
  absl::StrAppend(
      &text, "\nenvironment:\n",
      Item("PTXGEN_CACHE_DIR",
           "the kernel cache directory; else $XDG_CACHE_HOME/ptxgen, else "
           "$HOME/.cache/ptxgen",
           2, 25),
      Item("PTXGEN_CACHE_DISABLE", "1, true or yes: no disk cache", 2, 25),
      Item("PTXGEN_CACHE_PATH",
           "dir1:dir2:...: read-only cache folders searched after it (bundles "
           "from 'ptxgen precompile'), each under the same trust rule",
           2, 25),
      Item("PTXGEN_CACHE_MAX_BYTES",
           "a size cap on the cache directory (e.g. 2G): each write removes "
           "the least recently used entries beyond it",
           2, 25),
      Item("PTXGEN_DUMP_DIR",
           "every kernel compiled or loaded leaves its .cu, .ptx, .log and "
           ".json there (and .sass with nvdisasm or cuobjdump on PATH)",
           2, 25),
      Item("PTXGEN_LOG_LEVEL",
           "error, warning (the default), info or debug: what the library "
           "says on stderr",
           2, 25),
      Item("PTXGEN_PRINT_AUTOTUNING",
           "1: every autotuning's timing table and choice, whatever the log "
           "level",
           2, 25),
      Item("PATH", "searched for nvdisasm, then cuobjdump (--emit=sass)", 2,
           25),
      "\nexit status:\n", Item("0", "success; also --help and --version", 2, 4),
      Item("1",
           "the request is illegal (the message names the rule it breaks), "
           "or compiling or disassembling failed",
           2, 4),
      Item("2",
           "usage error: unknown subcommand or flag, missing or bad value; "
           "also no arguments at all, which prints this text to stderr",
           2, 4),
      "\nResults go to stdout, messages to stderr.\n");
  return text;
}

std::string SubcommandHelp(const Subcommand& subcommand) {
  std::string text = absl::StrCat("usage: ptxgen ", subcommand.name,
                                  " [--flag=value | --switch]...\n\n",
                                  subcommand.description, "\n\nflags:\n");
  for (const Flag& flag : subcommand.flags) {
    absl::StrAppend(&text, FlagHelp(flag));
  }
  absl::StrAppend(&text, "  --help\n", Wrap("Print this help.", 6));
  if (!subcommand.examples.empty()) {
    absl::StrAppend(&text, "\nexamples:\n");
    for (const std::string& example : subcommand.examples) {
      absl::StrAppend(&text, "  ", example, "\n");
    }
  }
  return text;
}

int RunTool(absl::Span<const Subcommand> subcommands,
            absl::Span<const std::string> args, std::ostream& out,
            std::ostream& err) {
  const Outcome outcome = Dispatch(subcommands, args, err);
  if (outcome.status != kExitSuccess) return outcome.status;
  return WriteOutput(outcome.out, out, err);
}

// ---- Errors ----

std::string Echo(absl::string_view value) {
  if (value.size() <= kEchoBytes) return std::string(value);
  return absl::StrCat(value.substr(0, kEchoBytes), "... (", value.size(),
                      " bytes)");
}

absl::Status UsageError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayload, absl::Cord());
  return status;
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayload).has_value();
}

absl::Status RequireFlag(const ParsedFlags& flags, absl::string_view flag,
                         absl::string_view context) {
  if (flags.Has(flag)) return absl::OkStatus();
  return UsageError(absl::StrCat("--", flag, " is required ", context));
}

// ---- Shared flags ----

absl::StatusOr<float> FloatValue(const ParsedFlags& flags,
                                 absl::string_view name) {
  const std::string text = flags.Text(name);
  float value = 0;
  if (!absl::SimpleAtof(text, &value)) {
    return UsageError(
        absl::StrCat("--", name, " takes a number, not '", Echo(text), "'"));
  }
  if (!std::isfinite(value)) {
    return UsageError(absl::StrCat(
        "--", name, "=", Echo(text), " is not a finite float: ", name,
        " must be finite (inf, nan and magnitudes past 3.4e38 are refused)"));
  }
  if (value == 0 && UnderflowsToZero(text)) {
    return UsageError(absl::StrCat(
        "--", name, "=", Echo(text), " underflows f32: a nonzero ", name,
        " must not round to 0 (magnitudes up to 2**-150, 7.0e-46, do)"));
  }
  return value;
}

Flag ScalarTypeFlag(std::string name, std::string help,
                    std::string default_value,
                    bool (*accepts)(ptx::ScalarType)) {
  std::vector<Choice> types;
  for (const std::string& type : ptx::ScalarTypeNames()) {
    if (accepts != nullptr && !accepts(*ptx::ParseScalarType(type))) continue;
    types.push_back({type, ""});
  }
  return ChoiceFlag(std::move(name), "TYPE", std::move(types), std::move(help),
                    std::move(default_value));
}

absl::StatusOr<ptx::ScalarType> ScalarTypeValue(const ParsedFlags& flags,
                                                absl::string_view name) {
  absl::StatusOr<ptx::ScalarType> type = ptx::ParseScalarType(flags.Text(name));
  if (type.ok()) return type;
  return UsageError(absl::StrCat("--", name, ": ", type.status().message()));
}

std::vector<std::string> CompiledViews() {
  return {"cuda", "ptx", "sass", "resources", "json"};
}

std::vector<std::string> StatementViews() {
  std::vector<std::string> views = {"asm", "ptx-lines"};
  for (std::string& view : CompiledViews()) views.push_back(std::move(view));
  return views;
}

Flag EmitFlag(const std::vector<std::string>& views, std::string default_view) {
  std::vector<Choice> choices;
  for (const std::string& name : views) {
    for (const Choice& view : Views()) {
      if (view.name == name) choices.push_back(view);
    }
  }
  return ChoiceFlag("emit", "VIEW", std::move(choices), "What to print.",
                    std::move(default_view));
}

Flag StatementEmitFlag() { return EmitFlag(StatementViews(), "asm"); }

}  // namespace ptxgen::cli
