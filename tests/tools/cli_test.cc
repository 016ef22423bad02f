// The shared machinery of ptxgen's subcommands: one flag table drives the
// parser and the help, usage errors exit 2, refused requests exit 1.
#include "tools/cli.h"

#include <cerrno>
#include <sstream>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/text.h"

namespace ptxgen::cli {
namespace {

using testing_support::Contains;

std::vector<Flag> Table() {
  return {
      Required(TextFlag("shape", "m64nNkK", "The shape.")),
      IntegerFlag("count", "N", "A count.", "4"),
      ChoiceFlag("mode", "MODE", {{"fast", ""}, {"slow", ""}}, "The mode.",
                 "fast"),
      SwitchFlag("trans", "Transposed."),
  };
}

absl::StatusOr<ParsedFlags> Parse(const std::vector<std::string>& args) {
  return ParsedFlags::Parse(Table(), args);
}

TEST(ParsedFlagsTest, ReadsValuesSwitchesAndDefaults) {
  absl::StatusOr<ParsedFlags> flags =
      Parse({"--shape=m64n8k16", "--count=-3", "--trans"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->Text("shape"), "m64n8k16");
  EXPECT_EQ(flags->Integer("count"), -3);
  EXPECT_TRUE(flags->Has("trans"));
  EXPECT_FALSE(flags->Has("mode"));
  EXPECT_EQ(flags->Text("mode"), "fast");
  EXPECT_EQ(flags->GivenNames(),
            (std::vector<std::string>{"count", "shape", "trans"}));
}

TEST(ParsedFlagsTest, ValuesMayContainEqualsSigns) {
  absl::StatusOr<ParsedFlags> flags = Parse({"--shape=a=b"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->Text("shape"), "a=b");
}

struct BadLine {
  std::vector<std::string> args;
  std::string message;
};

TEST(ParsedFlagsTest, BadCommandLinesAreUsageErrorsNamingTheFlag) {
  const std::vector<BadLine> cases = {
      {{"--shape=x", "--bogus"},
       "unknown flag --bogus (accepted flags: --shape, --count, --mode, "
       "--trans, --help)"},
      {{"--shape=x", "--mode=medium"},
       "--mode=medium is not accepted (accepted values: fast, slow)"},
      {{"--shape=x", "--count=many"}, "--count takes an integer, not 'many'"},
      {{"--shape=x", "--count=99999999999"},
       "--count=99999999999 is outside -2147483648..2147483647"},
      {{"--shape=x", "--count"}, "--count needs a value: --count=N"},
      {{"--shape="}, "--shape needs a value"},
      {{"--shape=x", "--trans=yes"}, "--trans is a switch and takes no value"},
      {{"--shape=x", "--shape=y"}, "--shape is given more than once"},
      {{"--count=1"}, "--shape is required: --shape=m64nNkK"},
      {{"--shape=x", "extra"}, "unexpected argument 'extra'"},
      {{"--shape=x", "-t"}, "unexpected argument '-t'"},
      {{"--shape=x", "--"}, "unexpected argument '--'"},
      {{"--shape=x", "--help=me"}, "--help is a switch and takes no value"},
  };
  for (const BadLine& bad : cases) {
    absl::StatusOr<ParsedFlags> flags = Parse(bad.args);
    ASSERT_FALSE(flags.ok()) << bad.message;
    EXPECT_TRUE(IsUsageError(flags.status())) << flags.status();
    EXPECT_TRUE(Contains(flags.status().message(), bad.message));
  }
}

TEST(UsageErrorTest, OnlyMarkedErrorsAreUsageErrors) {
  EXPECT_TRUE(IsUsageError(UsageError("bad flag")));
  EXPECT_EQ(UsageError("bad flag").message(), "bad flag");
  EXPECT_FALSE(IsUsageError(absl::InvalidArgumentError("wgmma: N=120")));
  EXPECT_FALSE(IsUsageError(absl::OkStatus()));
}

// A tool of two subcommands whose results the tests choose.
std::vector<Subcommand> Tool() {
  Subcommand echo;
  echo.name = "echo";
  echo.summary = "prints the shape";
  echo.description = "Prints --shape.";
  echo.flags = Table();
  echo.examples = {"ptxgen echo --shape=m64n8k16"};
  echo.run = [](const ParsedFlags& flags) -> absl::StatusOr<std::string> {
    if (flags.Text("shape") == "illegal") {
      return absl::InvalidArgumentError("echo: shape 'illegal' breaks a rule");
    }
    if (flags.Text("shape") == "misused") return UsageError("echo: misused");
    return flags.Text("shape");
  };
  Subcommand quiet;
  quiet.name = "quiet";
  quiet.summary = "prints nothing";
  quiet.description = "Prints nothing.";
  quiet.run = [](const ParsedFlags&) -> absl::StatusOr<std::string> {
    return std::string();
  };
  return {echo, quiet};
}

struct Outcome {
  int status;
  std::string out;
  std::string err;
};

Outcome RunWith(const std::vector<Subcommand>& tool,
                const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int status = RunTool(tool, args, out, err);
  return {status, out.str(), err.str()};
}

Outcome RunWith(const std::vector<std::string>& args) {
  return RunWith(Tool(), args);
}

TEST(RunToolTest, ResultsGoToStdoutEndingInANewline) {
  const Outcome run = RunWith({"echo", "--shape=m64n8k16"});
  EXPECT_EQ(run.status, kExitSuccess);
  EXPECT_EQ(run.out, "m64n8k16\n");
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(RunWith({"quiet"}).out, "");
}

TEST(RunToolTest, RefusedRequestsExitOne) {
  const Outcome run = RunWith({"echo", "--shape=illegal"});
  EXPECT_EQ(run.status, kExitFailure);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "ptxgen: echo: shape 'illegal' breaks a rule\n");
}

TEST(RunToolTest, UsageErrorsExitTwoAndPointToTheHelp) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"echo", "--shape=misused"}, {"echo", "--bogus"}, {"echo"}}) {
    const Outcome run = RunWith(args);
    EXPECT_EQ(run.status, kExitUsage) << args.back();
    EXPECT_EQ(run.out, "");
    EXPECT_TRUE(Contains(run.err, "run 'ptxgen echo --help' for its flags"));
  }
  const Outcome unknown = RunWith({"ecco"});
  EXPECT_EQ(unknown.status, kExitUsage);
  EXPECT_TRUE(Contains(unknown.err,
                       "unknown subcommand 'ecco' (subcommands: echo, quiet)"));
}

// A stream buffer on a full disk: every write, or only the flush, fails
// with ENOSPC.
class FullDisk : public std::streambuf {
 public:
  explicit FullDisk(bool writes_fail) : writes_fail_(writes_fail) {}

 protected:
  std::streamsize xsputn(const char*, std::streamsize count) override {
    return Accepts() ? count : 0;
  }
  int_type overflow(int_type c) override {
    return Accepts() ? c : traits_type::eof();
  }
  int sync() override {
    errno = ENOSPC;
    return -1;
  }

 private:
  bool Accepts() const {
    if (writes_fail_) errno = ENOSPC;
    return !writes_fail_;
  }

  bool writes_fail_;
};

TEST(RunToolTest, OutputThatCannotBeWrittenExitsOneSayingWhy) {
  for (bool writes_fail : {true, false}) {
    FullDisk disk(writes_fail);
    std::ostream out(&disk);
    std::ostringstream err;
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"echo", "--shape=m64n8k16"},
                                               {"--version"},
                                               {"--help"},
                                               {"echo", "--help"}}) {
      out.clear();
      err.str("");
      EXPECT_EQ(RunTool(Tool(), args, out, err), kExitFailure) << args[0];
      EXPECT_EQ(err.str(),
                "ptxgen: cannot write the output: No space left on device\n")
          << args[0];
    }
  }
}

TEST(RunToolTest, NoArgumentsPrintTheOverviewToStderrAndExitTwo) {
  const Outcome run = RunWith({});
  EXPECT_EQ(run.status, kExitUsage);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, OverviewHelp(Tool()));
}

TEST(RunToolTest, HelpGoesToStdoutAndExitsZero) {
  EXPECT_EQ(RunWith({"--help"}).out, OverviewHelp(Tool()));
  EXPECT_EQ(RunWith({"-h"}).status, kExitSuccess);
  // --help wins over anything else on the line, even a broken flag.
  const Outcome run = RunWith({"echo", "--bogus", "--help"});
  EXPECT_EQ(run.status, kExitSuccess);
  EXPECT_EQ(run.out, SubcommandHelp(Tool()[0]));
}

// ---- Text from outside reaches the terminal escaped ----

constexpr char kRed[] = "\x1b[31m";
constexpr char kEscapedRed[] = "\\x1b[31m";

TEST(RunToolTest, MessagesEscapeTheCommandLine) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {absl::StrCat("ecco", kRed)},
           {"--help", kRed},
           {"echo", absl::StrCat("--bogus", kRed)},
           {"echo", "--shape=x", absl::StrCat("--mode=", kRed)},
           {"echo", "--shape=x", absl::StrCat("--trans=", kRed)},
           {"echo", absl::StrCat(kRed, "arg")}}) {
    const Outcome run = RunWith(args);
    EXPECT_NE(run.status, kExitSuccess) << args.back();
    EXPECT_TRUE(Contains(run.err, kEscapedRed)) << args.back();
    EXPECT_EQ(run.err.find('\x1b'), std::string::npos) << run.err;
  }
}

TEST(RunToolTest, ErrorsFromTheLibraryAreEscaped) {
  std::vector<Subcommand> tool = Tool();
  tool[1].run = [](const ParsedFlags&) -> absl::StatusOr<std::string> {
    return absl::InternalError("sass: 'nvdisasm' failed:\n\x1b[2J\r");
  };
  const Outcome run = RunWith(tool, {"quiet"});
  EXPECT_EQ(run.status, kExitFailure);
  EXPECT_EQ(run.err, "ptxgen: sass: 'nvdisasm' failed:\n\\x1b[2J\\x0d\n");
}

TEST(RunToolTest, TextResultsAreEscaped) {
  const Outcome run = RunWith({"echo", absl::StrCat("--shape=", kRed, "\t")});
  EXPECT_EQ(run.status, kExitSuccess);
  EXPECT_EQ(run.out, absl::StrCat(kEscapedRed, "\t\n"));
}

// A module as a tampered cache entry could hold it: ptxas's log, the kernel
// name and the PTX carry escape sequences.
compile::CompiledModule TamperedModule() {
  compile::CompiledModule module;
  module.name = "k";
  module.ptx = absl::StrCat("// ", kRed, "\n.version 8.8\n");
  compile::KernelResources kernel;
  kernel.kernel = absl::StrCat("k", kRed);
  module.resources = {kernel};
  compile::CompilerDiagnostic warning;
  warning.message = absl::StrCat("ptxas warning : ", kRed, "gotcha\r");
  module.diagnostics = {warning};
  return module;
}

// Shows TamperedModule() in the view --emit names.
Subcommand ShowTampered() {
  Subcommand show;
  show.name = "show";
  show.flags = {EmitFlag(CompiledViews(), "resources")};
  show.run = [](const ParsedFlags& flags) -> absl::StatusOr<std::string> {
    const compile::CompiledModule module = TamperedModule();
    if (flags.Text("emit") == "resources") return ResourcesView(module);
    return module.ptx;
  };
  return show;
}

TEST(RunToolTest, ResourcesShowTheCompilerLogEscaped) {
  const Outcome run = RunWith({ShowTampered()}, {"show", "--emit=resources"});
  EXPECT_EQ(run.status, kExitSuccess);
  EXPECT_TRUE(Contains(run.out, absl::StrCat("kernel k", kEscapedRed, "\n")));
  EXPECT_TRUE(Contains(run.out, absl::StrCat("warnings:\n  ptxas warning : ",
                                             kEscapedRed, "gotcha\\x0d\n")));
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
}

// Code goes to files: it is printed byte for byte.
TEST(RunToolTest, CodeViewsAreExact) {
  const Outcome run = RunWith({ShowTampered()}, {"show", "--emit=ptx"});
  EXPECT_EQ(run.status, kExitSuccess);
  EXPECT_EQ(run.out, TamperedModule().ptx);
}

TEST(HelpTest, OverviewListsEverySubcommandAndTheExitStatuses) {
  const std::string help = OverviewHelp(Tool());
  EXPECT_TRUE(Contains(help, "  echo   prints the shape\n"));
  EXPECT_TRUE(Contains(help, "  quiet  prints nothing\n"));
  for (const std::string& view : StatementViews()) {
    EXPECT_TRUE(Contains(help, absl::StrCat("\n  ", view, " ")));
  }
  EXPECT_TRUE(Contains(help, "exit status:"));
  EXPECT_TRUE(Contains(help, "PTXGEN_CACHE_DIR"));
}

TEST(HelpTest, SubcommandHelpComesFromTheFlagTable) {
  const std::string help = SubcommandHelp(Tool()[0]);
  EXPECT_TRUE(Contains(help, "usage: ptxgen echo"));
  EXPECT_TRUE(Contains(help, "  --shape=m64nNkK\n      The shape. Required."));
  EXPECT_TRUE(Contains(help, "  --count=N\n      A count. Default: 4."));
  EXPECT_TRUE(Contains(help, "One of: fast, slow. Default: fast."));
  EXPECT_TRUE(Contains(help, "  --trans\n      Transposed."));
  EXPECT_TRUE(Contains(help, "  --help\n"));
  EXPECT_TRUE(Contains(help, "examples:\n  ptxgen echo --shape=m64n8k16\n"));
}

TEST(HelpTest, LinesFitEightyColumns) {
  std::vector<std::string> texts = {OverviewHelp(Tool())};
  texts.push_back(SubcommandHelp(Tool()[0]));
  for (const std::string& text : texts) {
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos;
         start = end + 1) {
      EXPECT_LT(end - start, 80u) << text.substr(start, end - start);
    }
  }
}

// A float flag: SimpleAtof's syntax, finite, and not a nonzero value f32
// rounds to 0 (gemm's --alpha and --beta, attention's --scale).
TEST(FloatValueTest, AcceptsFiniteFloatsAndNamesTheFlagOtherwise) {
  const std::vector<Flag> table = {TextFlag("scale", "X", "A factor.")};
  const auto value = [&](const std::string& text) {
    absl::StatusOr<ParsedFlags> flags =
        ParsedFlags::Parse(table, {absl::StrCat("--scale=", text)});
    return flags.ok() ? FloatValue(*flags, "scale")
                      : absl::StatusOr<float>(flags.status());
  };
  EXPECT_EQ(*value("0.125"), 0.125f);
  EXPECT_EQ(*value("-2e3"), -2000.0f);
  EXPECT_EQ(*value("0"), 0.0f);
  const std::pair<const char*, const char*> refused[] = {
      {"half", "--scale takes a number, not 'half'"},
      {"inf", "--scale=inf is not a finite float: scale must be finite"},
      {"1e39", "--scale=1e39 is not a finite float"},
      {"1e-50", "--scale=1e-50 underflows f32: a nonzero scale must not "},
  };
  for (const auto& [text, message] : refused) {
    const absl::StatusOr<float> parsed = value(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_TRUE(IsUsageError(parsed.status())) << text;
    EXPECT_TRUE(Contains(parsed.status().message(), message))
        << parsed.status();
  }
}

TEST(EmitFlagTest, OffersTheRequestedViewsWithTheirHelp) {
  const Flag emit = EmitFlag(CompiledViews(), "ptx");
  EXPECT_EQ(emit.name, "emit");
  EXPECT_EQ(emit.default_value, "ptx");
  ASSERT_EQ(emit.choices.size(), 5u);
  EXPECT_EQ(emit.choices[0].name, "cuda");
  EXPECT_EQ(emit.choices[4].name, "json");
  for (const Choice& choice : emit.choices) EXPECT_FALSE(choice.help.empty());
  EXPECT_EQ(StatementEmitFlag().choices.size(), 7u);
  EXPECT_EQ(StatementEmitFlag().default_value, "asm");
}

TEST(EmitCompiledTest, CudaIsTheSourceItself) {
  absl::StatusOr<std::string> text =
      EmitCompiled("k", "extern \"C\" __global__ void k() {}\n",
                   compile::CompileOptions(), "cuda");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "extern \"C\" __global__ void k() {}\n");
}

// The json view: the schema first, then whether the lookup hit, then the
// module, then what the subcommand adds.
TEST(EmitCompiledTest, JsonLeadsWithTheSchemaAndEndsWithTheSubcommandsFields) {
  compile::CompiledModule module;
  module.name = "k";
  module.source = compile::CacheSource::kDiskCache;
  absl::StatusOr<std::string> text = EmitCompiled(
      module, "json", {{"config", "\"ws\""}, {"threads_per_block", "384"}});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text,
            "{\"schema\":2,\"cache\":\"hit\",\"name\":\"k\",\"source\":\"disk_"
            "cache\","
            "\"compile_ms\":0.000,\"cache_key\":\"\",\"arch\":\"sm_90a\","
            "\"kernels\":[],"
            "\"warnings\":[],\"cache_warnings\":[],\"config\":\"ws\","
            "\"threads_per_block\":384}\n");
  module.source = compile::CacheSource::kCompiled;
  EXPECT_TRUE(Contains(*EmitCompiled(module, "json"),
                       "{\"schema\":2,\"cache\":\"miss\","));
  module.cuda_source = "extern \"C\" __global__ void k() {}\n";
  EXPECT_EQ(*EmitCompiled(module, "cuda"), module.cuda_source);
}

// "cache list": a name of two words takes the first two arguments; the
// first word alone says what may follow it.
TEST(RunToolTest, TwoWordSubcommandsTakeTwoArguments) {
  std::vector<Subcommand> tool = Tool();
  for (const char* action : {"list", "clear"}) {
    Subcommand command;
    command.name = absl::StrCat("cache ", action);
    command.summary = "acts";
    command.description = "Acts.";
    command.run = [action](const ParsedFlags&) -> absl::StatusOr<std::string> {
      return std::string(action);
    };
    tool.push_back(command);
  }
  const Outcome listed = RunWith(tool, {"cache", "list"});
  EXPECT_EQ(listed.status, kExitSuccess) << listed.err;
  EXPECT_EQ(listed.out, "list\n");
  const Outcome help = RunWith(tool, {"cache", "clear", "--help"});
  EXPECT_TRUE(Contains(help.out, "usage: ptxgen cache clear ")) << help.out;
  const Outcome alone = RunWith(tool, {"cache"});
  EXPECT_EQ(alone.status, kExitUsage);
  EXPECT_TRUE(
      Contains(alone.err,
               "ptxgen: 'cache' needs one of: list, clear (e.g. 'ptxgen "
               "cache list')"))
      << alone.err;
  EXPECT_EQ(RunWith(tool, {"cache", "shred"}).status, kExitUsage);
  EXPECT_TRUE(Contains(OverviewHelp(tool), "\n  cache list "));
}

TEST(EmitStatementTest, ARefusedStatementPassesItsErrorThrough) {
  const absl::StatusOr<ptx::Statement> refused =
      absl::InvalidArgumentError("wgmma: N=120 is not legal");
  absl::StatusOr<std::string> text = EmitStatement("k", refused, "asm");
  EXPECT_EQ(text.status(), refused.status());
}

}  // namespace
}  // namespace ptxgen::cli
