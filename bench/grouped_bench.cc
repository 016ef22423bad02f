#include "bench/grouped_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/gemm/timing.h"
#include "lib/testing/verification.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"

namespace ptxgen::gemm {
namespace {

using runtime::DeviceBuffer;

// One row of the suite: a layer's expert GEMM, its groups and routing.
struct GroupedShape {
  const char* model;
  Grouping grouping;
  int groups;
  int rows;  // contiguous: per group on average; masked: expected per group
  int64_t n, k;
  bool skewed;
};

// Expert GEMMs of Mixtral 8x7B (8 experts, hidden 4096, width 14336),
// DeepSeek-V3 (256 experts, hidden 7168, width 2048: gate and up fused to
// 4096) and Qwen3-MoE (128 experts, hidden 4096, width 1536), the rows a
// prefill batch routes to them, uniform and skewed; then masked decode
// steps of 1-64 rows per expert.
std::vector<GroupedShape> Shapes() {
  std::vector<GroupedShape> shapes;
  const GroupedShape contiguous[] = {
      {"mixtral up", Grouping::kContiguous, 8, 1024, 14336, 4096, false},
      {"mixtral down", Grouping::kContiguous, 8, 1024, 4096, 14336, false},
      {"mixtral up", Grouping::kContiguous, 8, 4096, 14336, 4096, false},
      {"deepseek up", Grouping::kContiguous, 32, 512, 4096, 7168, false},
      {"deepseek down", Grouping::kContiguous, 32, 512, 7168, 2048, false},
      {"deepseek up", Grouping::kContiguous, 256, 128, 4096, 7168, false},
      {"deepseek down", Grouping::kContiguous, 256, 128, 7168, 2048, false},
      {"qwen3 up", Grouping::kContiguous, 128, 32, 3072, 4096, false},
      {"qwen3 down", Grouping::kContiguous, 128, 256, 4096, 1536, false},
      {"issue", Grouping::kContiguous, 128, 32, 1536, 4096, false},
  };
  for (const GroupedShape& shape : contiguous) {
    shapes.push_back(shape);
    GroupedShape skewed = shape;
    skewed.skewed = true;
    shapes.push_back(skewed);
  }
  const GroupedShape masked[] = {
      {"mixtral up", Grouping::kMasked, 8, 1, 14336, 4096, false},
      {"mixtral up", Grouping::kMasked, 8, 16, 14336, 4096, false},
      {"mixtral up", Grouping::kMasked, 8, 64, 14336, 4096, true},
      {"deepseek up", Grouping::kMasked, 32, 8, 4096, 7168, true},
      {"deepseek up", Grouping::kMasked, 32, 64, 4096, 7168, false},
      {"deepseek down", Grouping::kMasked, 256, 4, 7168, 2048, true},
      {"qwen3 up", Grouping::kMasked, 128, 16, 3072, 4096, true},
  };
  shapes.insert(shapes.end(), std::begin(masked), std::end(masked));
  return shapes;
}

// Each group's rows: uniform, or skewed as a Zipf law routes tokens (group
// g's share proportional to 1 / (g + 1), the rest to group 0); masked
// counts spread over 0..2 x rows, from a fixed seed.
std::vector<int> Routing(const GroupedShape& shape) {
  std::vector<int> rows(static_cast<size_t>(shape.groups), shape.rows);
  if (!shape.skewed) return rows;
  if (shape.grouping == Grouping::kMasked) {
    uint32_t state = 2024;
    for (int& count : rows) {
      state = state * 1664525u + 1013904223u;
      count = static_cast<int>((state >> 8) % (2 * shape.rows + 1));
    }
    return rows;
  }
  const int64_t total = int64_t{shape.groups} * shape.rows;
  double harmonic = 0;
  for (int g = 0; g < shape.groups; ++g) harmonic += 1.0 / (g + 1);
  int64_t given = 0;
  for (int g = 0; g < shape.groups; ++g) {
    rows[g] = static_cast<int>(total / harmonic / (g + 1));
    given += rows[g];
  }
  rows[0] += static_cast<int>(total - given);
  return rows;
}

GemmProblem ProblemOf(const GroupedShape& shape, const GroupedBenchFlags& flags,
                      const std::vector<int>& rows) {
  GemmProblem p;
  p.element = flags.element;
  p.scaling = flags.scaling;
  p.n = shape.n;
  p.k = shape.k;
  p.batch = shape.groups;
  p.grouping = shape.grouping;
  if (shape.grouping == Grouping::kContiguous) {
    p.m = std::accumulate(rows.begin(), rows.end(), int64_t{0});
    // The host plans for uniform routing, as a server would.
    p.expected_m = shape.rows;
  } else {
    p.m = std::max(64, *std::max_element(rows.begin(), rows.end()));
    p.expected_m = shape.rows;
  }
  return p;
}

// A device buffer of `count` elements of `type`, random.
absl::StatusOr<DeviceBuffer> RandomBuffer(int64_t count, ptx::ScalarType type,
                                          uint32_t seed) {
  absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(
      static_cast<size_t>(std::max<int64_t>(count, 4) * 4));
  if (!buffer.ok()) return buffer.status();
  if (absl::Status filled =
          FillRandom(buffer->address(), count, type, seed, nullptr);
      !filled.ok()) {
    return filled;
  }
  return buffer;
}

absl::StatusOr<DeviceBuffer> FloatBuffer(int64_t count, float value) {
  std::vector<float> values(static_cast<size_t>(std::max<int64_t>(count, 4)),
                            value);
  absl::StatusOr<DeviceBuffer> buffer =
      DeviceBuffer::Allocate(values.size() * sizeof(float));
  if (!buffer.ok()) return buffer.status();
  if (absl::Status copied =
          buffer->CopyFromHost(values.data(), values.size() * sizeof(float));
      !copied.ok()) {
    return copied;
  }
  return buffer;
}

// What one problem's runs read and write.
struct GroupedOperands {
  DeviceBuffer a, b, d, group_rows;
  std::optional<DeviceBuffer> scale_a, scale_b;
  GemmOperands operands;
};

absl::StatusOr<GroupedOperands> MakeOperands(const GemmProblem& p,
                                             const std::vector<int>& rows) {
  absl::StatusOr<GemmSpans> spans = StoredSpans(p);
  if (!spans.ok()) return spans.status();
  const ptx::ScalarType output = *Resolved(p).output;
  absl::StatusOr<DeviceBuffer> a = RandomBuffer(spans->a, p.element, 1);
  if (!a.ok()) return a.status();
  absl::StatusOr<DeviceBuffer> b = RandomBuffer(spans->b, p.element, 2);
  if (!b.ok()) return b.status();
  absl::StatusOr<DeviceBuffer> d = DeviceBuffer::Allocate(
      static_cast<size_t>(spans->d * ptx::SizeInBytes(output) + 16));
  if (!d.ok()) return d.status();
  std::vector<int> device_rows = rows;
  if (p.grouping == Grouping::kContiguous) {
    std::partial_sum(device_rows.begin(), device_rows.end(),
                     device_rows.begin());
  }
  absl::StatusOr<DeviceBuffer> group_rows =
      DeviceBuffer::Allocate(device_rows.size() * sizeof(int));
  if (!group_rows.ok()) return group_rows.status();
  if (absl::Status copied = group_rows->CopyFromHost(
          device_rows.data(), device_rows.size() * sizeof(int));
      !copied.ok()) {
    return copied;
  }
  GroupedOperands out{*std::move(a),
                      *std::move(b),
                      *std::move(d),
                      *std::move(group_rows),
                      {},
                      {},
                      {}};
  if (p.scaling != GemmScaling::kNone) {
    // Scales of 1: the same D as unscaled, which the dense check compares.
    absl::StatusOr<DeviceBuffer> scale_a = FloatBuffer(spans->scale_a, 1.0f);
    if (!scale_a.ok()) return scale_a.status();
    absl::StatusOr<DeviceBuffer> scale_b = FloatBuffer(spans->scale_b, 1.0f);
    if (!scale_b.ok()) return scale_b.status();
    out.scale_a = *std::move(scale_a);
    out.scale_b = *std::move(scale_b);
    out.operands.scale_a = out.scale_a->address();
    out.operands.scale_b = out.scale_b->address();
  }
  out.operands.a = out.a.address();
  out.operands.b = out.b.address();
  out.operands.d = out.d.address();
  out.operands.group_rows = out.group_rows.address();
  return out;
}

// Median milliseconds per call of each of `runs`, timed in alternating
// batches of at least 1 ms after 100 ms of warm-up each.
absl::StatusOr<std::vector<double>> TimeAlternating(
    const std::vector<std::function<absl::Status()>>& runs, int repeats) {
  std::vector<int> calls;
  for (const auto& run : runs) {
    absl::StatusOr<double> once = MedianMilliseconds(run, nullptr, 3, 3, 1);
    if (!once.ok()) return once.status();
    const int batch = static_cast<int>(std::ceil(1.0 / std::max(*once, 1e-3)));
    const int warm = static_cast<int>(std::ceil(100.0 / std::max(*once, 1e-3)));
    if (absl::Status warmed =
            MedianMilliseconds(run, nullptr, 0, 1, warm).status();
        !warmed.ok()) {
      return warmed;
    }
    calls.push_back(batch);
  }
  std::vector<std::vector<double>> times(runs.size());
  for (int r = 0; r < repeats; ++r) {
    for (size_t i = 0; i < runs.size(); ++i) {
      absl::StatusOr<double> ms =
          MedianMilliseconds(runs[i], nullptr, 0, 1, calls[i]);
      if (!ms.ok()) return ms.status();
      times[i].push_back(*ms);
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t[t.size() / 2]);
  }
  return medians;
}

// Device-to-device copy bandwidth (bytes read plus written per second) of
// 1 GiB copies, far past L2.
absl::StatusOr<double> CopyBytesPerSecond(int repeats) {
  constexpr size_t kBytes = size_t{1} << 30;
  absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
  if (!driver.ok()) return driver.status();
  absl::StatusOr<DeviceBuffer> source = DeviceBuffer::Allocate(kBytes);
  if (!source.ok()) return source.status();
  absl::StatusOr<DeviceBuffer> destination = DeviceBuffer::Allocate(kBytes);
  if (!destination.ok()) return destination.status();
  const auto copy = [&] {
    return (*driver)->Check(
        (*driver)->cuMemcpyDtoDAsync(destination->address(), source->address(),
                                     kBytes, nullptr),
        "cuMemcpyDtoDAsync");
  };
  absl::StatusOr<std::vector<double>> ms = TimeAlternating({copy}, repeats);
  if (!ms.ok()) return ms.status();
  return 2.0 * kBytes / ((*ms)[0] * 1e-3);
}

// The rows of group 0 of the grouped D beside the dense GEMM's rows with
// group 0's B: the same products, so a wrong grouped kernel shows.
absl::StatusOr<double> GroupZeroError(const GemmProblem& p,
                                      const GroupedOperands& grouped,
                                      const DeviceBuffer& dense_d,
                                      int group_zero_rows) {
  const ptx::ScalarType output = *Resolved(p).output;
  absl::StatusOr<std::vector<double>> ours = DownloadValues(grouped.d, output);
  if (!ours.ok()) return ours.status();
  absl::StatusOr<std::vector<double>> theirs = DownloadValues(dense_d, output);
  if (!theirs.ok()) return theirs.status();
  const size_t count = static_cast<size_t>(group_zero_rows * p.n);
  return RelativeErrorByNorm(
      std::vector<double>(ours->begin(), ours->begin() + count),
      std::vector<double>(theirs->begin(), theirs->begin() + count));
}

// `value` with `digits` decimals; "-" for NaN (nothing measured).
std::string Cell(double value, int digits) {
  return std::isnan(value) ? "-" : absl::StrFormat("%.*f", digits, value);
}

}  // namespace

absl::Status RunGroupedSuite(const GroupedBenchFlags& flags, FILE* out,
                             FILE* notes) {
  absl::StatusOr<double> copy = CopyBytesPerSecond(flags.repeats);
  if (!copy.ok()) return copy.status();
  std::fprintf(
      notes,
      "grouped: %s%s; device-to-device copy %.0f GB/s (read + "
      "written); vs dense: ptxgen's dense GEMM of the same total "
      "rows (group 0's B) / grouped; of copy: B's bytes streamed "
      "per second over the copy's\n",
      std::string(ptx::PtxName(flags.element)).c_str(),
      flags.scaling == GemmScaling::kNone
          ? ""
          : absl::StrCat(" ", ScalingName(flags.scaling), "-scaled").c_str(),
      *copy / 1e9);
  const char* separator = flags.csv ? "," : " | ";
  const std::vector<std::string> header = {
      "model",
      "layout",
      "groups",
      "rows",
      "n",
      "k",
      "routing",
      "config",
      "ptxgen ms",
      "TFLOP/s",
      "dense ms",
      "vs dense",
      "alternatives: ms (its time / the pick's)",
      "weights GB/s",
      "of copy",
      "group 0 error"};
  std::fprintf(out, "%s%s%s\n", flags.csv ? "" : "| ",
               absl::StrJoin(header, separator).c_str(), flags.csv ? "" : " |");
  if (!flags.csv) {
    std::fprintf(
        out, "|%s\n",
        absl::StrJoin(std::vector<std::string>(header.size(), "---"), "|")
            .append("|")
            .c_str());
  }
  for (const GroupedShape& shape : Shapes()) {
    const std::vector<int> rows = Routing(shape);
    const GemmProblem problem = ProblemOf(shape, flags, rows);
    absl::StatusOr<Gemm> grouped = Gemm::Prepare(problem);
    if (!grouped.ok()) return grouped.status();
    absl::StatusOr<GroupedOperands> operands = MakeOperands(problem, rows);
    if (!operands.ok()) return operands.status();
    std::vector<std::function<absl::Status()>> runs = {
        [&] { return grouped->Run(operands->operands, nullptr); }};
    const bool contiguous = shape.grouping == Grouping::kContiguous;
    // The dense peer: all the rows against group 0's B.
    GemmProblem dense_problem;
    dense_problem.m = problem.m;
    dense_problem.n = problem.n;
    dense_problem.k = problem.k;
    dense_problem.element = problem.element;
    dense_problem.scaling = problem.scaling;
    absl::StatusOr<Gemm> dense = absl::UnavailableError("masked: no peer");
    absl::StatusOr<DeviceBuffer> dense_d = absl::UnavailableError("none");
    GemmOperands dense_operands = operands->operands;
    if (contiguous) {
      dense = Gemm::Prepare(dense_problem);
      if (!dense.ok()) return dense.status();
      dense_d = DeviceBuffer::Allocate(operands->d.size());
      if (!dense_d.ok()) return dense_d.status();
      dense_operands.d = dense_d->address();
      dense_operands.group_rows = 0;
      runs.push_back([&] { return dense->Run(dense_operands, nullptr); });
    }
    // Each alternative the problem takes, timed with the pick.
    std::vector<Gemm> alternatives;
    std::vector<std::string> alternative_cells;
    for (const gen::GemmConfig& config : flags.alternatives) {
      GemmOptions options;
      options.config = config;
      absl::StatusOr<Gemm> alternative = Gemm::Prepare(problem, options);
      if (!alternative.ok()) {
        alternative_cells.push_back(
            absl::StrCat(gen::ConfigName(config), ": refused"));
        continue;
      }
      alternatives.push_back(*std::move(alternative));
    }
    const size_t first_alternative = runs.size();
    for (const Gemm& alternative : alternatives) {
      runs.push_back(
          [&] { return alternative.Run(operands->operands, nullptr); });
    }
    absl::StatusOr<std::vector<double>> ms =
        TimeAlternating(runs, flags.repeats);
    if (!ms.ok()) return ms.status();
    for (size_t i = 0; i < alternatives.size(); ++i) {
      const double alternative_ms = (*ms)[first_alternative + i];
      alternative_cells.push_back(
          absl::StrCat(gen::ConfigName(alternatives[i].config()), ": ",
                       Cell(alternative_ms, 4), " (",
                       Cell(alternative_ms / (*ms)[0], 3), ")"));
    }
    const int64_t used_rows =
        std::accumulate(rows.begin(), rows.end(), int64_t{0});
    const double flops = 2.0 * used_rows * problem.n * problem.k;
    int routed_groups = 0;
    for (int count : rows) routed_groups += count > 0;
    const double weight_bytes = static_cast<double>(routed_groups) * problem.n *
                                problem.k * ptx::SizeInBytes(problem.element);
    const double weights_per_second = weight_bytes / ((*ms)[0] * 1e-3);
    double error = NAN;
    if (contiguous && rows[0] > 0) {
      absl::StatusOr<double> measured =
          GroupZeroError(problem, *operands, *dense_d, rows[0]);
      if (!measured.ok()) return measured.status();
      error = *measured;
      if (!(error <= ErrorBound(*Resolved(problem).output))) {
        return absl::InternalError(absl::StrCat(
            shape.model, ": group 0's rows differ from the dense GEMM's by ",
            error));
      }
    }
    const std::vector<std::string> cells = {
        shape.model,
        contiguous ? "contiguous" : "masked",
        absl::StrCat(shape.groups),
        contiguous ? absl::StrCat(used_rows)
                   : absl::StrCat("<=", problem.m, " (", shape.rows, " exp.)"),
        absl::StrCat(problem.n),
        absl::StrCat(problem.k),
        shape.skewed ? "skewed" : "uniform",
        gen::ConfigName(grouped->config()),
        Cell((*ms)[0], 4),
        Cell(flops / ((*ms)[0] * 1e-3) / 1e12, 0),
        contiguous ? Cell((*ms)[1], 4) : "-",
        contiguous ? Cell((*ms)[1] / (*ms)[0], 3) : "-",
        alternative_cells.empty() ? "-"
                                  : absl::StrJoin(alternative_cells, "; "),
        Cell(weights_per_second / 1e9, 0),
        Cell(weights_per_second / *copy, 2),
        std::isnan(error) ? "-" : absl::StrFormat("%.1e", error),
    };
    std::fprintf(out, "%s%s%s\n", flags.csv ? "" : "| ",
                 absl::StrJoin(cells, separator).c_str(),
                 flags.csv ? "" : " |");
    std::fflush(out);
  }
  return absl::OkStatus();
}

}  // namespace ptxgen::gemm
