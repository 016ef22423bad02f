#ifndef PTXGEN_TOOLS_CLI_H_
#define PTXGEN_TOOLS_CLI_H_

// The parts every `ptxgen` subcommand shares: the table that describes a
// subcommand and its flags (it drives both parsing and --help, so the two
// cannot drift), the flag parser, the exit-status rules, and the --emit
// views of an instruction statement or of a compiled kernel.
// Internal to tools/; the library's public headers live under include/.

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/statement.h"

namespace ptxgen::cli {

// Exit statuses.
inline constexpr int kExitSuccess = 0;
inline constexpr int kExitFailure = 1;  // illegal request, compile error
inline constexpr int kExitUsage = 2;    // the command line itself is wrong

// ---- The subcommand table ----

enum class FlagKind {
  kSwitch,   // --name, takes no value
  kInteger,  // --name=-1
  kChoice,   // --name=one of `choices`
  kText,     // --name=anything; the subcommand reads it
};

// A value of a choice flag; `help`, when given, is listed under the flag.
struct Choice {
  std::string name;
  std::string help;
};

struct Flag {
  std::string name;  // without the leading "--"
  FlagKind kind = FlagKind::kSwitch;
  std::string value_name;  // how --help shows the value: --shape=m64nNkK
  std::string help;
  std::vector<Choice> choices;  // kChoice only
  std::string default_value;    // used when the flag is left out
  bool required = false;
};

Flag SwitchFlag(std::string name, std::string help);
Flag IntegerFlag(std::string name, std::string value_name, std::string help,
                 std::string default_value);
Flag ChoiceFlag(std::string name, std::string value_name,
                std::vector<Choice> choices, std::string help,
                std::string default_value);
Flag TextFlag(std::string name, std::string value_name, std::string help);
// The same flag, which the command line must give.
Flag Required(Flag flag);

// The flags of one command line, checked against a subcommand's table.
class ParsedFlags {
 public:
  // Parses `args` ("--name=value" and "--name"). Unknown, repeated and
  // missing required flags, missing or malformed values and values outside
  // a choice are usage errors that name the flag and what it accepts.
  static absl::StatusOr<ParsedFlags> Parse(absl::Span<const Flag> table,
                                           absl::Span<const std::string> args);

  // Whether the flag was given on the command line.
  bool Has(absl::string_view name) const;
  // The given value, else the table's default, else "".
  std::string Text(absl::string_view name) const;
  // An integer flag's value (checked while parsing), else its default, else 0.
  int Integer(absl::string_view name) const;
  // The names of the flags given, in alphabetical order.
  std::vector<std::string> GivenNames() const;

 private:
  std::map<std::string, std::string, std::less<>> given_;
  std::map<std::string, std::string, std::less<>> defaults_;
};

// What a subcommand returns: the complete text for stdout, or an error.
using RunFunction =
    std::function<absl::StatusOr<std::string>(const ParsedFlags& flags)>;

struct Subcommand {
  std::string name;
  std::string summary;                // one line, for `ptxgen --help`
  std::string description;            // for `ptxgen <name> --help`
  std::vector<Flag> flags;            // --help is implied
  std::vector<std::string> examples;  // complete command lines
  RunFunction run;
};

// Runs the tool on `args` (argv without the program name): args[0] picks the
// subcommand. Results go to `out`, flushed, messages to `err`. Returns the
// exit status. With no arguments it prints the overview to `err` and returns
// kExitUsage: a call without a subcommand is a broken command line. Output
// that cannot be written (a full disk, a closed stdout) is kExitFailure, with
// the reason on `err`. Messages and text results are escaped with
// base::Printable, as they may quote the command line, compiler logs or
// cache entries; the code views (asm, ptx-lines, cuda, ptx, sass) and json
// are printed byte for byte.
int RunTool(absl::Span<const Subcommand> subcommands,
            absl::Span<const std::string> args, std::ostream& out,
            std::ostream& err);

// The texts of `ptxgen --help` and `ptxgen <name> --help`.
std::string OverviewHelp(absl::Span<const Subcommand> subcommands);
std::string SubcommandHelp(const Subcommand& subcommand);

// ---- Errors ----

// A value from outside (an argument, a line of a file) as a message quotes
// it: its first kEchoBytes bytes and its length when longer, so that a huge
// value cannot flood the terminal.
inline constexpr size_t kEchoBytes = 64;
std::string Echo(absl::string_view value);

// An error in the command line (exit status 2); every other error a
// subcommand returns is a refused request (exit status 1).
absl::Status UsageError(absl::string_view message);
bool IsUsageError(const absl::Status& status);

// A usage error when `flag` was not given; `context` says when it is needed
// ("with --op=setmaxnreg").
absl::Status RequireFlag(const ParsedFlags& flags, absl::string_view flag,
                         absl::string_view context);

// ---- Shared flags ----

// A choice among the element types ptx::ParseScalarType accepts, or those
// of them that `accepts` (the layer that uses them says which).
Flag ScalarTypeFlag(std::string name, std::string help,
                    std::string default_value,
                    bool (*accepts)(ptx::ScalarType) = nullptr);
// The type a ScalarTypeFlag names (given, else its default).
absl::StatusOr<ptx::ScalarType> ScalarTypeValue(const ParsedFlags& flags,
                                                absl::string_view name);

// A float flag's value: absl::SimpleAtof's syntax, finite (inf, nan and
// values beyond f32's range would reach a kernel as its alpha, beta or
// scale) and, when nonzero, not rounded to 0 (a silently zeroed factor).
absl::StatusOr<float> FloatValue(const ParsedFlags& flags,
                                 absl::string_view name);

// The views of anything ptxgen compiles, in --help order:
// cuda, ptx, sass, resources, json.
std::vector<std::string> CompiledViews();
// The views of one instruction statement: asm, ptx-lines, then the
// compiled views of a probe kernel holding it.
std::vector<std::string> StatementViews();

// The --emit flag, accepting `views` (names from the lists above).
Flag EmitFlag(const std::vector<std::string>& views, std::string default_view);
// The --emit flag of an instruction: StatementViews(), asm by default.
Flag StatementEmitFlag();

// ---- Emitting ----

// The version of the json view's layout, its first field ("schema"): raised
// whenever a field changes meaning or name. 2: per-kernel "shared_bytes"
// became "static_shared_bytes", and subcommands add fields of their own
// (the unversioned view before it counts as 1).
inline constexpr int kJsonSchemaVersion = 2;

// Fields a subcommand adds to the json view, in order: each a key and its
// value as JSON text.
using JsonFields = std::vector<std::pair<std::string, std::string>>;

// The compiled view `emit` of `source`, one of CompiledViews(). "cuda" is
// `source` itself; the others compile it through
// compile::KernelCache::Default(), so a repeated request is a cache hit.
absl::StatusOr<std::string> EmitCompiled(absl::string_view module_name,
                                         absl::string_view source,
                                         const compile::CompileOptions& options,
                                         absl::string_view emit);

// The compiled view `emit` of a module already compiled (its lookup is the
// one the json view reports):
//   cuda       its CUDA source
//   ptx        the PTX module NVRTC produced
//   sass       the SASS of its CUBIN (nvdisasm or cuobjdump from $PATH)
//   resources  each kernel's registers, shared memory, stack and spills,
//              and the compiler's warnings
//   json       {"schema":kJsonSchemaVersion,"cache":"hit"|"miss", then
//              compile::ToJson's fields, then `json_fields`}
absl::StatusOr<std::string> EmitCompiled(const compile::CompiledModule& module,
                                         absl::string_view emit,
                                         const JsonFields& json_fields = {});

// The resources view of `module`: each kernel's registers, static shared
// memory, stack frame and spills, then the compiler's warnings as ptxas (or
// the cache entry) wrote them. Deterministic: no timing and no cache state,
// so it can be diffed.
std::string ResourcesView(const compile::CompiledModule& module);

// The view `emit` (one of StatementViews()) of `statement`, or the error
// that refused it:
//   asm        the inline-asm statement, operands named after their roles
//              (as gen::DeviceFunction names its parameters)
//   ptx-lines  register declarations, then the bare PTX lines; registers
//              are numbered per class (%rs, %r, %rd, %f, %p)
//   otherwise  EmitCompiled() of a probe kernel named `kernel_name` that
//              holds the statement
absl::StatusOr<std::string> EmitStatement(
    absl::string_view kernel_name,
    const absl::StatusOr<ptx::Statement>& statement, absl::string_view emit);

// ---- Families of small statements ----

using StatementBuilder =
    std::function<absl::StatusOr<ptx::Statement>(const ParsedFlags& flags)>;

// One operation of a subcommand that picks its statement with --op.
struct Operation {
  std::string name;
  std::string help;
  std::vector<std::string> flags;  // the flags it reads besides --op, --emit
  StatementBuilder build;
};

// The builder of a statement without parameters, which nothing can refuse.
StatementBuilder Fixed(ptx::Statement (*build)());

// The --op flag choosing among `operations`; required, as no operation is
// more natural than another.
Flag OperationFlag(absl::Span<const Operation> operations);

// Runs the operation --op names: refuses the given flags it does not read
// (usage error), builds its statement and emits it in the --emit view, from
// a probe kernel named "probe_<family>_<op>" for compiled views.
absl::StatusOr<std::string> RunOperation(absl::string_view family,
                                         absl::Span<const Operation> operations,
                                         const ParsedFlags& flags);

}  // namespace ptxgen::cli

#endif  // PTXGEN_TOOLS_CLI_H_
