// `ptxgen attention`: an attention forward kernel generated for a problem,
// planned without a GPU, shown in any compiled view.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ptxgen/attention/attention.h"
#include "ptxgen/attention/problem.h"
#include "ptxgen/compile/inspect.h"
#include "ptxgen/gemm/target.h"
#include "ptxgen/gen/attention.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/runtime/target.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace ptxgen::tools {
namespace {

using attention::AttentionProblem;
using attention::Layout;

// The elements an attention kernel is generated for; the problem's rules
// (attention::ValidateAttentionProblem) say the same.
bool IsAttentionElement(ptx::ScalarType type) {
  return type == ptx::ScalarType::kF16 || type == ptx::ScalarType::kBF16;
}

// --varlen and the rows it allocates: --total-q and --total-k, by default
// room for every sequence at its longest; neither means anything with
// fixed lengths.
absl::Status ReadVariableLengths(const cli::ParsedFlags& flags,
                                 AttentionProblem& problem) {
  if (!flags.Has("varlen")) {
    for (const char* name : {"total-q", "total-k"}) {
      if (flags.Has(name)) {
        return cli::UsageError(absl::StrCat(
            "--", name,
            " is the rows of variable-length sequences as allocated: give "
            "--varlen too, or drop --",
            name));
      }
    }
    return absl::OkStatus();
  }
  problem.variable_lengths = true;
  // A default the user never wrote is refused in the flags' words.
  struct Total {
    const char* flag;
    const char* seq_flag;
    int64_t seq;
    int64_t* total;
  };
  for (const Total& t :
       {Total{"total-q", "seq", problem.seq_q, &problem.total_q},
        Total{"total-k", "seq-k", problem.seq_k, &problem.total_k}}) {
    if (flags.Has(t.flag)) {
      *t.total = flags.Integer(t.flag);
      continue;
    }
    int64_t rows = 0;
    if (problem.batch > 0 && t.seq > 0 &&
        (__builtin_mul_overflow(problem.batch, t.seq, &rows) ||
         rows > attention::kMaxAttentionDimension)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", t.flag, "'s default, --batch x --", t.seq_flag,
                       " = ", problem.batch, " x ", t.seq, ", is more than ",
                       attention::kMaxAttentionDimension,
                       " rows (int32 offsets): give --", t.flag));
    }
    *t.total = problem.batch * t.seq;
  }
  return absl::OkStatus();
}

// The problem the flags describe, before the library's rules
// (attention::ValidateAttentionProblem): only what the command line itself
// gets wrong is refused here, as a usage error naming the flag.
absl::StatusOr<AttentionProblem> ParseProblem(const cli::ParsedFlags& flags) {
  absl::StatusOr<ptx::ScalarType> element =
      cli::ScalarTypeValue(flags, "dtype");
  if (!element.ok()) return element.status();
  AttentionProblem problem;
  problem.batch = flags.Integer("batch");
  problem.heads_q = flags.Integer("heads");
  if (flags.Has("kv-heads")) {
    // The problem's 0 means heads_q: said only by leaving the flag out.
    if (flags.Integer("kv-heads") == 0) {
      return cli::UsageError(
          "--kv-heads=0 names no heads: give the K and V heads, or leave "
          "--kv-heads out for as many as --heads");
    }
    problem.heads_kv = flags.Integer("kv-heads");
  }
  problem.seq_q = flags.Integer("seq");
  problem.seq_k = flags.Has("seq-k") ? flags.Integer("seq-k") : problem.seq_q;
  problem.head_dim = flags.Integer("head-dim");
  problem.element = *element;
  problem.causal = flags.Has("causal");
  if (flags.Has("scale")) {
    absl::StatusOr<float> scale = cli::FloatValue(flags, "scale");
    if (!scale.ok()) return scale.status();
    problem.scale = *scale;
  }
  problem.layout = flags.Text("layout") == "bhsd" ? Layout::kBatchHeadSeqDim
                                                  : Layout::kBatchSeqHeadDim;
  if (absl::Status varlen = ReadVariableLengths(flags, problem); !varlen.ok()) {
    return varlen;
  }
  return problem;
}

// An H200 of --sms SMs: GPU 0 is not asked, so a view is the same on every
// machine.
absl::StatusOr<attention::AttentionTarget> PlanningTarget(
    const cli::ParsedFlags& flags) {
  const int sms = flags.Integer("sms");
  if (sms < 1 || sms > runtime::kMaxTargetSms) {
    return cli::UsageError(absl::StrCat(
        "--sms=", flags.Text("sms"), " is outside 1..", runtime::kMaxTargetSms,
        " (the SMs of the device to plan for)"));
  }
  attention::AttentionTarget target = gemm::GemmTarget::H200();
  target.sm_count = sms;
  return target;
}

std::string StridesJson(const attention::Strides& s) {
  return absl::StrCat("{\"batch\":", s.batch, ",\"seq\":", s.seq,
                      ",\"head\":", s.head, "}");
}

// The problem as planned (heads, strides and scale resolved), in the
// flags' names and values.
std::string ProblemJson(const AttentionProblem& p) {
  return absl::StrCat(
      "{\"batch\":", p.batch, ",\"heads\":", p.heads_q,
      ",\"kv_heads\":", p.heads_kv, ",\"seq\":", p.seq_q,
      ",\"seq_k\":", p.seq_k, ",\"head_dim\":", p.head_dim,
      ",\"dtype\":", compile::JsonString(ptx::PtxName(p.element)),
      ",\"causal\":", p.causal ? "true" : "false",
      ",\"scale\":", absl::StrFormat("%.9g", p.scale.value_or(0.0f)),
      ",\"layout\":\"", p.layout == Layout::kBatchHeadSeqDim ? "bhsd" : "bshd",
      "\"", ",\"q_stride\":", StridesJson(p.q_stride),
      ",\"k_stride\":", StridesJson(p.k_stride),
      ",\"v_stride\":", StridesJson(p.v_stride),
      ",\"o_stride\":", StridesJson(p.o_stride),
      ",\"varlen\":", p.variable_lengths ? "true" : "false",
      ",\"total_q\":", p.total_q, ",\"total_k\":", p.total_k, "}");
}

// What the json view adds for an attention kernel: what was planned and
// how it launches. The dynamic shared memory is the launch's, which
// ptxas's static figure does not count.
cli::JsonFields AttentionJsonFields(const attention::AttentionPlan& plan) {
  const gen::AttentionConfig& config = plan.config;
  const attention::AttentionGrid& grid = plan.grid;
  return {
      {"problem", ProblemJson(plan.problem)},
      {"config", compile::JsonString(gen::AttentionConfigName(config))},
      {"tiles", absl::StrCat("{\"consumers\":", config.consumers,
                             ",\"block_m\":", plan.generated.block_m,
                             ",\"block_n\":", config.block_n,
                             ",\"stages\":", config.stages, ",\"ping_pong\":",
                             config.ping_pong ? "true" : "false", "}")},
      {"sms", absl::StrCat(plan.target.sm_count)},
      {"grid", absl::StrCat("{\"x\":", grid.query_blocks, ",\"y\":", grid.heads,
                            ",\"z\":", grid.batch, "}")},
      {"threads_per_block", absl::StrCat(plan.generated.threads_per_block)},
      {"dynamic_shared_bytes", absl::StrCat(plan.generated.shared_bytes)},
  };
}

absl::StatusOr<std::string> RunAttention(const cli::ParsedFlags& flags) {
  absl::StatusOr<AttentionProblem> problem = ParseProblem(flags);
  if (!problem.ok()) return problem.status();
  absl::StatusOr<attention::AttentionTarget> target = PlanningTarget(flags);
  if (!target.ok()) return target.status();
  if (absl::Status valid = attention::ValidateAttentionProblem(*problem);
      !valid.ok()) {
    return valid;
  }
  absl::StatusOr<attention::AttentionPlan> plan =
      attention::PlanAttention(*problem, *target);
  if (!plan.ok()) return plan.status();
  std::fprintf(stderr, "ptxgen: %s\n",
               gen::AttentionConfigName(plan->config).c_str());
  return cli::EmitCompiled(*plan->compiled, flags.Text("emit"),
                           AttentionJsonFields(*plan));
}

}  // namespace

cli::Subcommand AttentionSubcommand() {
  cli::Subcommand command;
  command.name = "attention";
  command.summary =
      "O = softmax(Q * K^T * scale + mask) * V, attention forward: the "
      "generated kernel in any compiled view, planned without a GPU";
  command.description =
      "Plans the problem as Attention::Prepare would, for an H200 of --sms\n"
      "SMs (no GPU is asked or needed): the heuristic's configuration, "
      "printed\n"
      "on stderr, then the kernel generated and compiled; prints the "
      "requested\n"
      "view of it. For each sequence b and query head h, g = h / (heads /\n"
      "kv-heads) the K and V head it shares (GQA; MQA with --kv-heads=1):\n"
      "  O[b,h] = softmax(Q[b,h] * K[b,g]^T * scale + mask) * V[b,g]\n"
      "with Q and O [seq, head-dim], K and V [seq-k, head-dim] for each\n"
      "sequence and head, stored packed as --layout says; f16 or bf16 in and\n"
      "out, f32 accumulation and log-sum-exp. --causal: query row i sees keys\n"
      "0..i + seq-k - seq, the mask aligned to the bottom-right corner\n"
      "(FlashAttention's convention; rows that see no key are 0). "
      "--varlen:\n"
      "--batch sequences of their own lengths (at most --seq and --seq-k),\n"
      "read on the device from cumulative offsets (cu_seqlens), with Q and O\n"
      "[total-q, heads, head-dim] and K and V [total-k, kv-heads, head-dim],\n"
      "the sequences one after another.\n"
      "\n"
      "The same in PyTorch and FlashAttention:\n"
      "  --layout=bhsd  torch.nn.functional.scaled_dot_product_attention(q, "
      "k,\n"
      "                 v, is_causal=..., scale=..., enable_gqa=...), whose\n"
      "                 is_causal aligns to the top-left: with --seq-k other\n"
      "                 than --seq, attn_mask=causal_lower_right(seq, seq-k)\n"
      "                 (torch.nn.attention.bias) is this mask\n"
      "  --layout=bshd  flash_attn_func(q, k, v, softmax_scale=..., "
      "causal=...)\n"
      "  --varlen       flash_attn_varlen_func(q, k, v, cu_seqlens_q,\n"
      "                 cu_seqlens_k, max_seqlen_q=seq, max_seqlen_k=seq-k, "
      "...)\n"
      "Running it: Attention::Prepare and Run in C++, ptxgen.attention in\n"
      "Python; bench/attention_torch_bench.py times it beside PyTorch's SDPA.";
  command.flags = {
      cli::Required(cli::IntegerFlag(
          "batch", "B",
          "Sequences: of --seq rows each, or with --varlen of their own "
          "lengths.",
          "")),
      cli::Required(
          cli::IntegerFlag("heads", "H", "Query heads (of Q and O).", "")),
      cli::IntegerFlag("kv-heads", "HKV",
                       "Heads of K and V, each serving heads / HKV query "
                       "heads (grouped-query attention); a divisor of "
                       "--heads. Default: --heads.",
                       ""),
      cli::Required(cli::IntegerFlag(
          "seq", "S",
          "Rows of Q (and O) per sequence; with --varlen the longest.", "")),
      cli::IntegerFlag("seq-k", "SK",
                       "Rows of K and V per sequence; with --varlen the "
                       "longest. Default: --seq.",
                       ""),
      cli::Required(cli::IntegerFlag(
          "head-dim", "D",
          absl::StrCat("The head dimension of Q, K, V and O: a multiple of ",
                       attention::kHeadDimMultiple, ", at most ",
                       attention::kMaxHeadDim, "."),
          "")),
      cli::SwitchFlag("causal",
                      "The causal mask, aligned to the bottom-right corner "
                      "when --seq-k differs from --seq."),
      cli::TextFlag("scale", "X",
                    "Multiplies Q * K^T before the softmax: a finite "
                    "positive float. Default: 1/sqrt(head-dim)."),
      cli::ChoiceFlag(
          "layout", "bshd|bhsd",
          {{"bshd", "[batch, seq, heads, head-dim]: FlashAttention's"},
           {"bhsd", "[batch, heads, seq, head-dim]: PyTorch SDPA's"}},
          "How Q, K, V and O are stored (packed).", "bshd"),
      cli::SwitchFlag("varlen",
                      "Variable lengths: the sequences one after another "
                      "([total, heads, head-dim], --layout=bshd), their "
                      "offsets read on the device."),
      cli::IntegerFlag("total-q", "N",
                       "With --varlen: the rows of Q (and O) as allocated, "
                       "every sequence's inside them. Default: --batch times "
                       "--seq.",
                       ""),
      cli::IntegerFlag("total-k", "N",
                       "With --varlen: the rows of K (and V) as allocated. "
                       "Default: --batch times --seq-k.",
                       ""),
      cli::ScalarTypeFlag("dtype", "The type of Q, K, V and O.", "bf16",
                          IsAttentionElement),
      cli::IntegerFlag("sms", "N",
                       absl::StrCat("The SMs of the H200 to plan for (1..",
                                    runtime::kMaxTargetSms, ")."),
                       absl::StrCat(gemm::GemmTarget::H200().sm_count)),
      cli::EmitFlag(cli::CompiledViews(), "cuda"),
  };
  // Each line must fit the help's 80 columns.
  command.examples = {
      "ptxgen attention --batch=2 --heads=32 --seq=4096 --head-dim=128 "
      "--causal",
      "ptxgen attention --batch=1 --heads=8 --seq=512 --head-dim=64 "
      "--emit=resources",
      "ptxgen attention --batch=4 --heads=8 --seq=512 --head-dim=64 --varlen",
  };
  command.run = RunAttention;
  return command;
}

}  // namespace ptxgen::tools
