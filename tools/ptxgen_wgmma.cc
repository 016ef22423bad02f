// `ptxgen wgmma` and the statements that order it: wgmma-fence,
// wgmma-commit, wgmma-wait.
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ptxgen/ptx/wgmma.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace ptxgen::tools {
namespace {

struct Shape {
  int m = 0;
  int n = 0;
  int k = 0;
};

// Digits only: absl::SimpleAtoi alone would also take signs and spaces.
bool ParseDimension(absl::string_view text, int& value) {
  if (text.empty() || text.size() > 4) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(text, &value);
}

// "m64n128k16". A malformed shape is a usage error; whether M, N and K are
// legal is for the instruction's rules to say.
absl::StatusOr<Shape> ParseShape(absl::string_view text) {
  const size_t n = text.find('n');
  const size_t k = text.find('k');
  Shape shape;
  if (!absl::StartsWith(text, "m") || n == absl::string_view::npos ||
      k == absl::string_view::npos || k < n ||
      !ParseDimension(text.substr(1, n - 1), shape.m) ||
      !ParseDimension(text.substr(n + 1, k - n - 1), shape.n) ||
      !ParseDimension(text.substr(k + 1), shape.k)) {
    return cli::UsageError(absl::StrCat(
        "--shape=", text, " is not of the form m64nNkK (e.g. m64n128k16)"));
  }
  return shape;
}

absl::StatusOr<ptx::WgmmaMma> MmaFromFlags(const cli::ParsedFlags& flags,
                                           int n) {
  absl::StatusOr<ptx::ScalarType> a = cli::ScalarTypeValue(flags, "a");
  absl::StatusOr<ptx::ScalarType> b =
      cli::ScalarTypeValue(flags, flags.Has("b") ? "b" : "a");
  absl::StatusOr<ptx::ScalarType> d = cli::ScalarTypeValue(flags, "d");
  for (const absl::StatusOr<ptx::ScalarType>* type : {&a, &b, &d}) {
    if (!type->ok()) return type->status();
  }
  ptx::WgmmaMma mma;
  mma.n = n;
  mma.a_type = *a;
  mma.b_type = *b;
  mma.d_type = *d;
  mma.a_source = flags.Has("a-regs") ? ptx::WgmmaASource::kRegisters
                                     : ptx::WgmmaASource::kSharedMemory;
  mma.scale_a = flags.Integer("scale-a");
  mma.scale_b = flags.Integer("scale-b");
  mma.transpose_a = flags.Has("trans-a");
  mma.transpose_b = flags.Has("trans-b");
  mma.satfinite = flags.Has("satfinite");
  return mma;
}

// The shape's K is not free: the input type fixes it.
absl::Status CheckK(int k, ptx::ScalarType a_type) {
  absl::StatusOr<int> legal = ptx::WgmmaK(a_type);
  if (!legal.ok()) return legal.status();
  if (k == *legal) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("wgmma: K=", k, " is not legal for ", ptx::PtxName(a_type),
                   " inputs (their K is ", *legal, ")"));
}

absl::StatusOr<std::string> RunWgmma(const cli::ParsedFlags& flags) {
  absl::StatusOr<Shape> shape = ParseShape(flags.Text("shape"));
  if (!shape.ok()) return shape.status();
  absl::StatusOr<ptx::WgmmaMma> mma = MmaFromFlags(flags, shape->n);
  if (!mma.ok()) return mma.status();
  if (shape->m != ptx::kWgmmaM) {
    return absl::InvalidArgumentError(
        absl::StrCat("wgmma: M=", shape->m,
                     " is not legal (every wgmma has M=", ptx::kWgmmaM, ")"));
  }
  absl::StatusOr<ptx::Statement> statement = ptx::WgmmaMmaAsync(*mma);
  if (!statement.ok()) return statement.status();
  if (absl::Status k = CheckK(shape->k, mma->a_type); !k.ok()) return k;
  return cli::EmitStatement("probe_wgmma", statement, flags.Text("emit"));
}

}  // namespace

cli::Subcommand WgmmaSubcommand() {
  cli::Subcommand command;
  command.name = "wgmma";
  command.summary = "wgmma.mma_async: one warpgroup matrix multiply-accumulate";
  command.description =
      "Prints one wgmma.mma_async.sync.aligned statement, D = A*B (+D), after\n"
      "checking it against the sm_90a rules: the legal N for the input type,\n"
      "the K the input type fixes, the accumulator type, and which immediates\n"
      "(scale, transpose, satfinite) the type has. Operands: d (the\n"
      "accumulators), a (a shared-memory descriptor, or 4 registers with\n"
      "--a-regs), b (a descriptor), scale_d (0: D = A*B, 1: D = A*B + D).";
  command.flags = {
      cli::Required(cli::TextFlag(
          "shape", "m64nNkK",
          "The instruction shape: M is 64, N is legal for the input type, K "
          "is the input type's (16 for f16/bf16, 8 for tf32, 32 for "
          "e4m3/e5m2/s8/u8).")),
      cli::ScalarTypeFlag("a", "The type of A.", "f16"),
      cli::ScalarTypeFlag("b", "The type of B (the type of --a when left out).",
                          ""),
      cli::ScalarTypeFlag("d", "The accumulator type.", "f32"),
      cli::SwitchFlag("a-regs",
                      "A comes from registers (the RS form) instead of a "
                      "shared-memory descriptor."),
      cli::SwitchFlag("trans-a",
                      "A is MN-major (f16/bf16, descriptor A only)."),
      cli::SwitchFlag("trans-b", "B is MN-major (f16/bf16 only)."),
      cli::IntegerFlag("scale-a", "1|-1", "Negates A with -1 (float inputs).",
                       "1"),
      cli::IntegerFlag("scale-b", "1|-1", "Negates B with -1 (float inputs).",
                       "1"),
      cli::SwitchFlag("satfinite",
                      "Saturates the s32 accumulators (s8/u8 inputs only)."),
      cli::StatementEmitFlag(),
  };
  command.examples = {
      "ptxgen wgmma --shape=m64n128k16 --a=f16 --b=f16 --d=f32",
      "ptxgen wgmma --shape=m64n64k16 --a=bf16 --a-regs --trans-b",
      "ptxgen wgmma --shape=m64n256k32 --a=e4m3 --b=e5m2 --d=f16 --scale-a=-1",
      "ptxgen wgmma --shape=m64n32k32 --a=s8 --b=u8 --d=s32 --satfinite",
      "ptxgen wgmma --shape=m64n128k16 --emit=ptx",
  };
  command.run = RunWgmma;
  return command;
}

cli::Subcommand WgmmaFenceSubcommand() {
  cli::Subcommand command;
  command.name = "wgmma-fence";
  command.summary =
      "wgmma.fence: orders register and shared-memory writes "
      "before the wgmmas that read them";
  command.description =
      "Prints wgmma.fence.sync.aligned, needed before the first wgmma and\n"
      "whenever the accumulators or A registers were written by other code.";
  command.flags = {cli::StatementEmitFlag()};
  command.examples = {"ptxgen wgmma-fence"};
  command.run = [](const cli::ParsedFlags& flags) {
    return cli::EmitStatement("probe_wgmma_fence", ptx::WgmmaFence(),
                              flags.Text("emit"));
  };
  return command;
}

cli::Subcommand WgmmaCommitSubcommand() {
  cli::Subcommand command;
  command.name = "wgmma-commit";
  command.summary =
      "wgmma.commit_group: closes a group over the wgmmas "
      "issued since the last commit";
  command.description =
      "Prints wgmma.commit_group.sync.aligned; wgmma-wait then waits for\n"
      "whole groups.";
  command.flags = {cli::StatementEmitFlag()};
  command.examples = {"ptxgen wgmma-commit --emit=ptx-lines"};
  command.run = [](const cli::ParsedFlags& flags) {
    return cli::EmitStatement("probe_wgmma_commit", ptx::WgmmaCommitGroup(),
                              flags.Text("emit"));
  };
  return command;
}

cli::Subcommand WgmmaWaitSubcommand() {
  cli::Subcommand command;
  command.name = "wgmma-wait";
  command.summary =
      "wgmma.wait_group N: waits until at most N wgmma groups "
      "are pending";
  command.description = absl::StrCat(
      "Prints wgmma.wait_group.sync.aligned N. N is 0..",
      ptx::kMaxWgmmaPendingGroups,
      "; 0 waits for every\ngroup, so the accumulators may be read.");
  command.flags = {
      cli::IntegerFlag("pending", "N",
                       absl::StrCat("Groups that may stay pending (0..",
                                    ptx::kMaxWgmmaPendingGroups, ")."),
                       "0"),
      cli::StatementEmitFlag(),
  };
  command.examples = {"ptxgen wgmma-wait --pending=1"};
  command.run = [](const cli::ParsedFlags& flags) {
    return cli::EmitStatement("probe_wgmma_wait",
                              ptx::WgmmaWaitGroup(flags.Integer("pending")),
                              flags.Text("emit"));
  };
  return command;
}

}  // namespace ptxgen::tools
