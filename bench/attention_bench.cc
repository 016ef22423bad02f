// ptxgen attention forward on the suite, beside our dense bf16
// GEMM at 8192^3 in the same process (the bar: attention at head
// dim 128, seq >= 4096, non-causal, reaches 85% of its TFLOP/s). The
// PyTorch peers (SDPA's flash, cuDNN and memory-efficient backends) are
// timed by bench/attention_torch_bench.py.
//   attention_bench [--rows=SUBSTRING] [--repeats=N] [--block-n=N]
//                   [--stages=N] [--consumers=N] [--ping-pong=0|1]
// The last four change the heuristic's configuration for every row.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "lib/gemm/timing.h"
#include "ptxgen/attention/attention.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/runtime/memory.h"

namespace ptxgen::attention {
namespace {

struct Row {
  int64_t batch, heads_q, heads_kv, seq_q, seq_k, head_dim;
  bool causal;
};

std::string RowName(const Row& row) {
  return absl::StrFormat(
      "B%d H%d/%d S%d%s D%d%s", row.batch, row.heads_q, row.heads_kv, row.seq_q,
      row.seq_k != row.seq_q ? absl::StrFormat(":%d", row.seq_k)
                             : std::string(),
      row.head_dim, row.causal ? " causal" : "");
}

// The orientation rows, then batch x seq at 16384 tokens for each
// head dim, causal and not, with GQA 4:1 at head dim 128.
std::vector<Row> Rows() {
  std::vector<Row> rows = {
      {2, 32, 32, 4096, 4096, 128, false}, {2, 32, 32, 4096, 4096, 128, true},
      {1, 32, 8, 8192, 8192, 128, true},   {4, 16, 16, 2048, 2048, 64, false},
      {1, 16, 16, 8192, 8192, 256, false}, {8, 32, 8, 1024, 1024, 128, true},
  };
  for (int64_t head_dim : {64, 128, 256}) {
    const int64_t heads = 2048 / head_dim;
    for (int64_t seq : {512, 2048, 8192, 16384}) {
      for (bool causal : {false, true}) {
        rows.push_back({16384 / seq, heads, head_dim == 128 ? heads / 4 : heads,
                        seq, seq, head_dim, causal});
      }
    }
  }
  return rows;
}

// Visible (query, key) pairs: all, or below the bottom-right diagonal.
double Pairs(const Row& row) {
  if (!row.causal) return static_cast<double>(row.seq_q) * row.seq_k;
  double pairs = 0;
  for (int64_t i = 0; i < row.seq_q; ++i) {
    pairs += std::max<int64_t>(
        0, std::min(row.seq_k, i + row.seq_k - row.seq_q + 1));
  }
  return pairs;
}

absl::StatusOr<runtime::DeviceBuffer> Random(int64_t count, uint32_t seed) {
  absl::StatusOr<runtime::DeviceBuffer> buffer =
      runtime::DeviceBuffer::Allocate(count * 2);
  if (!buffer.ok()) return buffer.status();
  if (absl::Status filled = gemm::FillRandom(
          buffer->address(), count, ptx::ScalarType::kBF16, seed, nullptr);
      !filled.ok()) {
    return filled;
  }
  return buffer;
}

absl::StatusOr<double> DenseGemmTflops(int repeats) {
  const int64_t n = 8192;
  gemm::GemmProblem problem{n, n, n, ptx::ScalarType::kBF16};
  absl::StatusOr<gemm::Gemm> gemm = gemm::Gemm::Prepare(problem);
  if (!gemm.ok()) return gemm.status();
  absl::StatusOr<gemm::RotatingGemmOperands> operands =
      gemm::RandomRotatingGemmOperands(problem, 0, 1, nullptr);
  if (!operands.ok()) return operands.status();
  absl::StatusOr<double> ms = gemm::MedianMilliseconds(
      [&] {
        return gemm->Run(operands->a[0].address(), operands->b[0].address(),
                         operands->c.address(), nullptr);
      },
      nullptr, 3, repeats, 5);
  if (!ms.ok()) return ms.status();
  return 2.0 * n * n * n / (*ms * 1e9);
}

// What a flag changes in the heuristic's configuration; 0/-1: nothing.
struct ConfigChange {
  int block_n = 0, stages = 0, consumers = 0, ping_pong = -1;
};

absl::Status Bench(const std::string& filter, int repeats,
                   const ConfigChange& change) {
  absl::StatusOr<double> dense = DenseGemmTflops(repeats);
  if (!dense.ok()) return dense.status();
  std::cout << absl::StrFormat("dense bf16 GEMM 8192^3: %.0f TFLOP/s\n",
                               *dense);
  std::cout << absl::StrFormat("%-30s %-44s %9s %9s %7s\n", "row", "config",
                               "ms", "TFLOP/s", "/dense");
  for (const Row& row : Rows()) {
    if (!absl::StrContains(RowName(row), filter)) continue;
    AttentionProblem problem;
    problem.batch = row.batch;
    problem.heads_q = row.heads_q;
    problem.heads_kv = row.heads_kv;
    problem.seq_q = row.seq_q;
    problem.seq_k = row.seq_k;
    problem.head_dim = row.head_dim;
    problem.causal = row.causal;
    absl::StatusOr<AttentionSpans> spans = StoredSpans(problem);
    if (!spans.ok()) return spans.status();
    AttentionOptions options;
    gen::AttentionConfig config =
        HeuristicAttentionConfig(Resolved(problem), AttentionTarget::H200());
    if (change.block_n > 0) config.block_n = change.block_n;
    if (change.stages > 0) config.stages = change.stages;
    if (change.consumers > 0) config.consumers = change.consumers;
    if (change.ping_pong >= 0) config.ping_pong = change.ping_pong == 1;
    options.config = config;
    absl::StatusOr<Attention> attention = Attention::Prepare(problem, options);
    if (!attention.ok()) return attention.status();
    absl::StatusOr<runtime::DeviceBuffer> q = Random(spans->q, 1),
                                          k = Random(spans->k, 2),
                                          v = Random(spans->v, 3),
                                          o = Random(spans->o, 4);
    absl::StatusOr<runtime::DeviceBuffer> lse =
        runtime::DeviceBuffer::Allocate(spans->lse * 4);
    if (!q.ok() || !k.ok() || !v.ok() || !o.ok() || !lse.ok()) {
      return absl::ResourceExhaustedError("attention_bench: allocation");
    }
    const AttentionOperands operands{q->address(), k->address(), v->address(),
                                     o->address(), lse->address()};
    absl::StatusOr<double> ms = gemm::MedianMilliseconds(
        [&] { return attention->Run(operands, nullptr); }, nullptr, 3, repeats,
        5);
    if (!ms.ok()) return ms.status();
    const double flops =
        4.0 * row.batch * row.heads_q * Pairs(row) * row.head_dim;
    const double tflops = flops / (*ms * 1e9);
    std::cout << absl::StrFormat("%-30s %-44s %9.3f %9.0f %7.2f\n",
                                 RowName(row),
                                 gen::AttentionConfigName(attention->config()),
                                 *ms, tflops, tflops / *dense);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ptxgen::attention

int main(int argc, char** argv) {
  std::string filter;
  int repeats = 10;
  ptxgen::attention::ConfigChange change;
  const std::pair<const char*, int*> numbers[] = {
      {"--repeats=", &repeats},
      {"--block-n=", &change.block_n},
      {"--stages=", &change.stages},
      {"--consumers=", &change.consumers},
      {"--ping-pong=", &change.ping_pong}};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    bool known = absl::StartsWith(arg, "--rows=");
    if (known) filter = arg.substr(7);
    for (const auto& [flag, value] : numbers) {
      if (absl::StartsWith(arg, flag)) {
        known = absl::SimpleAtoi(arg.substr(strlen(flag)), value);
      }
    }
    if (!known || repeats < 1) {
      std::cerr << "usage: attention_bench [--rows=SUBSTRING] [--repeats=N] "
                   "[--block-n=N] [--stages=N] [--consumers=N] "
                   "[--ping-pong=0|1]\n";
      return 2;
    }
  }
  if (absl::Status status = ptxgen::attention::Bench(filter, repeats, change);
      !status.ok()) {
    std::cerr << "attention_bench: " << status << "\n";
    return 1;
  }
  return 0;
}
