// Layer: planning, above problem.cc: the configuration (heuristic or
// given), the kernel generated and compiled, the grid. Needs no GPU;
// attention.cc loads and launches what it plans.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/attention/attention_internal.h"
#include "ptxgen/runtime/target.h"

namespace ptxgen::attention {
namespace {

absl::Status Refuse(const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat("attention: ", rule));
}

// What the problem compiles into its kernel.
gen::AttentionConfig ComputedBy(const AttentionProblem& problem) {
  gen::AttentionConfig config;
  config.element = problem.element;
  config.head_dim = static_cast<int>(problem.head_dim);
  config.causal = problem.causal;
  config.variable_lengths = problem.variable_lengths;
  return config;
}

// A given configuration must compute the problem.
absl::Status CheckComputes(const gen::AttentionConfig& config,
                           const AttentionProblem& problem) {
  const gen::AttentionConfig computed = ComputedBy(problem);
  if (config.element != computed.element ||
      config.head_dim != computed.head_dim ||
      config.causal != computed.causal ||
      config.variable_lengths != computed.variable_lengths) {
    return Refuse(absl::StrCat(
        "the config (", gen::AttentionConfigName(config),
        ") must compute the problem's element, head_dim, mask and lengths (",
        gen::AttentionConfigName(computed), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AttentionGrid> PlanGrid(const AttentionProblem& problem,
                                       const gen::GeneratedAttention& kernel,
                                       const AttentionTarget& target) {
  const int64_t query_blocks =
      (problem.seq_q + kernel.block_m - 1) / kernel.block_m;
  const int64_t tiles = query_blocks * problem.heads_q * problem.batch;
  if (problem.heads_q > kMaxAttentionDimension / query_blocks ||
      tiles > kMaxAttentionDimension) {
    return Refuse(absl::StrCat(
        "the tiles, blocks of ", kernel.block_m,
        " query rows x heads_q x batch (", query_blocks, " x ", problem.heads_q,
        " x ", problem.batch, "), must number at most ", kMaxAttentionDimension,
        ": the kernel counts them in int"));
  }
  AttentionGrid grid;
  // Fixed lengths' turns cost about the same (a causal mask's tiles come in
  // folded pairs, GeneratedAttention::tiles_per_turn) and share the SMs
  // evenly. Variable lengths' do not and get a CTA each, which the
  // hardware hands to whichever SM is free.
  const int64_t turns =
      (tiles + kernel.tiles_per_turn - 1) / kernel.tiles_per_turn;
  grid.ctas = static_cast<int>(problem.variable_lengths
                                   ? turns
                                   : std::min<int64_t>(turns, target.sm_count));
  grid.query_blocks = static_cast<int>(query_blocks);
  grid.heads = static_cast<int>(problem.heads_q);
  grid.batch = static_cast<int>(problem.batch);
  return grid;
}

compile::CompileOptions AttentionCompileOptions(const AttentionTarget& target) {
  compile::CompileOptions options = runtime::KernelCompileOptions({});
  options.arch = target.arch;
  return options;
}

gen::AttentionConfig HeuristicAttentionConfig(const AttentionProblem& problem,
                                              const AttentionTarget& target) {
  gen::AttentionConfig config = ComputedBy(problem);
  const auto fits = [&](const gen::AttentionConfig& candidate) {
    absl::StatusOr<int> bytes = gen::AttentionSharedBytes(candidate);
    return bytes.ok() && *bytes <= target.max_shared_bytes_per_block_optin;
  };
  // Up to head dim 64, S is as wide as O or wider and each block's
  // softmax weighs most: a third consumer's softmax hides the others'
  // (measured 1.0-1.2x over two taking turns), but for causal masks under
  // 4096 keys two taking turns measured faster (up to 1.25x).
  if (problem.head_dim <= 64 && (!problem.causal || problem.seq_k >= 4096)) {
    config.consumers = 3;
    config.ping_pong = false;
  }
  // The widest key block whose registers and stages fit, up to 128 keys,
  // or for head dims past 64 and 4096 keys or more 192 (176 with a causal
  // mask, whose per-score work made ptxas spill 16 bytes at 192): wider
  // blocks amortize each block's softmax and barriers over more keys, but
  // past 128 they cost short sequences and causal diagonals more masked
  // work than they save (bench/RESULTS.md, "Attention").
  int widest = 128;
  if (problem.head_dim > 64 && problem.seq_k >= 4096) {
    widest = problem.causal ? 176 : 192;
  }
  for (int block_n : {192, 176, 160, 144, 128, 112, 96, 80, 64, 48, 32, 16}) {
    if (block_n > widest) continue;
    config.block_n = block_n;
    if (fits(config)) break;
  }
  // A second Q stage where it fits: the next tile's Q loads during this
  // one's last blocks and its epilogue.
  gen::AttentionConfig two_queries = config;
  two_queries.query_stages = 2;
  if (fits(two_queries)) config = two_queries;
  return config;
}

absl::StatusOr<AttentionPlan> PlanAttention(const AttentionProblem& problem,
                                            const AttentionTarget& target,
                                            const AttentionOptions& options) {
  if (absl::Status valid =
          runtime::ValidateKernelTarget(target, kAttentionFamily);
      !valid.ok()) {
    return valid;
  }
  if (absl::Status valid = ValidateAttentionProblem(problem); !valid.ok()) {
    return valid;
  }
  AttentionPlan plan;
  plan.problem = Resolved(problem);
  plan.target = target;
  plan.config = options.config.has_value()
                    ? *options.config
                    : HeuristicAttentionConfig(plan.problem, target);
  if (absl::Status computes = CheckComputes(plan.config, plan.problem);
      !computes.ok()) {
    return computes;
  }
  absl::StatusOr<gen::GeneratedAttention> generated =
      gen::GenerateAttention(plan.config);
  if (!generated.ok()) return generated.status();
  if (generated->shared_bytes > target.max_shared_bytes_per_block_optin) {
    return Refuse(absl::StrCat(
        "the kernel (", gen::AttentionConfigName(plan.config), ") needs ",
        generated->shared_bytes, " bytes of shared memory, over the target's ",
        target.max_shared_bytes_per_block_optin));
  }
  absl::StatusOr<AttentionGrid> grid =
      PlanGrid(plan.problem, *generated, target);
  if (!grid.ok()) return grid.status();
  plan.grid = *grid;
  compile::KernelCache& cache = options.cache != nullptr
                                    ? *options.cache
                                    : compile::KernelCache::Default();
  absl::StatusOr<std::shared_ptr<const compile::CompiledModule>> compiled =
      cache.GetOrCompile(generated->kernel_name, generated->source,
                         AttentionCompileOptions(target));
  if (!compiled.ok()) return compiled.status();
  plan.generated = *std::move(generated);
  plan.compiled = *std::move(compiled);
  return plan;
}

}  // namespace ptxgen::attention
