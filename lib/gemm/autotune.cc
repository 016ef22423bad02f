// Layer: the autotuner, above gemm.cc, plan.cc, selection.cc and
// problem.cc (which it calls: each candidate planned, then prepared through
// lib/gemm/gemm_preparation.h) and below prepare.cc, whose Gemm::Prepare
// calls it for Selection::kAutotune.
#include "ptxgen/gemm/autotune.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "lib/gemm/autotune_record.h"
#include "lib/gemm/gemm_preparation.h"
#include "lib/gemm/timing.h"
#include "ptxgen/base/environment.h"
#include "ptxgen/base/log.h"
#include "ptxgen/compile/files.h"
#include "ptxgen/compile/sha256.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/launch_checks.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/target.h"
#include "ptxgen/version.h"

namespace ptxgen::gemm {
namespace {

// Real records take about 300 bytes.
constexpr int64_t kMaxRecordBytes = 4096;
// "1": the table of every autotuning is logged whatever the log level.
constexpr char kPrintVariable[] = "PTXGEN_PRINT_AUTOTUNING";

// "f16.kk->f16 16x4096x4096", " batch 3" when batched: for messages.
std::string ProblemName(const GemmProblem& problem) {
  return absl::StrCat(
      gen::FormName(FormOf(problem)), " ", problem.m, "x", problem.n, "x",
      problem.k,
      problem.batch > 1 ? absl::StrCat(" batch ", problem.batch) : "");
}

// Part of the record key: records timed another way are not reused.
constexpr char kTimingMethod[] = "interleaved rounds, operand copies beyond L2";

// Everything that changes which configuration is fastest.
std::string RecordKey(const GemmProblem& problem,
                      const std::vector<gen::GemmConfig>& candidates,
                      const runtime::DeviceProperties& device) {
  const GemmProblem resolved = Resolved(problem);
  std::vector<std::string> names;
  for (const gen::GemmConfig& config : candidates) {
    names.push_back(gen::ConfigName(config));
  }
  return compile::Sha256Hex(absl::StrCat(
      kVersion, "\n", kTimingMethod, "\n", device.name, "\n", device.sm_count,
      "\n", device.cc_major, ".", device.cc_minor, "\n",
      gen::FormName(FormOf(problem)), " ", problem.m, "x", problem.n, "x",
      problem.k, " batch ", problem.batch, " ld ", resolved.lda, " ",
      resolved.ldb, " ", resolved.ldd, "\n", absl::StrJoin(names, "\n")));
}

struct Records {
  absl::Mutex mutex;
  std::map<std::string, gen::GemmConfig> best ABSL_GUARDED_BY(mutex);
};

Records& MemoryRecords() {
  static Records* records = new Records;
  return *records;
}

void WarnAboutRecords(absl::string_view what, absl::string_view why) {
  base::Log(base::LogLevel::kWarning,
            absl::StrCat("autotuning ", what, ": ", why));
}

// The autotune/ folder of a cache folder when both pass the trust rule of
// compile/files.h; a refusal other than absence is logged as `what`.
std::optional<compile::TrustedFolder> AutotuneFolder(
    const std::string& directory, bool create, absl::string_view what) {
  absl::StatusOr<compile::TrustedFolder> folder =
      compile::TrustedFolder::Open(directory, create);
  if (folder.ok()) folder = folder->Subfolder("autotune", create);
  if (folder.ok()) return *std::move(folder);
  if (!absl::IsNotFound(folder.status()))
    WarnAboutRecords(what, folder.status().message());
  return std::nullopt;
}

// The writable cache folder's autotune/ folder, when the disk cache is on.
std::optional<compile::TrustedFolder> RecordFolder(
    const compile::KernelCache& cache, bool create) {
  const compile::CacheConfig& config = cache.config();
  if (!config.disk_enabled || config.directory.empty()) return std::nullopt;
  return AutotuneFolder(config.directory, create, "records not used");
}

// A record names its key and a configuration among the candidates; any
// other content is discarded (with a warning) and the problem tuned again.
absl::StatusOr<gen::GemmConfig> ReadRecord(
    const compile::TrustedFolder& folder, const std::string& key,
    const std::vector<gen::GemmConfig>& candidates) {
  absl::StatusOr<std::string> text =
      folder.ReadFile(key, kAutotuneRecordStart, kMaxRecordBytes);
  const std::string path = absl::StrCat(folder.path(), "/", key);
  auto corrupt = [&](absl::string_view why) {
    WarnAboutRecords(absl::StrCat("record ", path),
                     absl::StrCat(why, "; tuning again"));
    return absl::DataLossError(why);
  };
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) return text.status();
    return corrupt(text.status().message());
  }
  absl::StatusOr<gen::GemmConfig> config =
      ParseAutotuneRecord(*text, key, candidates);
  if (!config.ok()) return corrupt(config.status().message());
  return *config;
}

// The autotune/ folders of the cache's read-only folders (bundles an
// application ships), in their order, where they exist and are trusted.
std::vector<compile::TrustedFolder> ShippedRecordFolders(
    const compile::KernelCache& cache) {
  std::vector<compile::TrustedFolder> folders;
  for (const std::string& directory : cache.config().read_only_directories) {
    if (std::optional<compile::TrustedFolder> folder = AutotuneFolder(
            directory, /*create=*/false, "shipped records not used")) {
      folders.push_back(*std::move(folder));
    }
  }
  return folders;
}

// Plans every candidate for `target` in parallel, compiling their kernels,
// so that preparing them one by one afterwards finds each in the cache by
// its identity.
void CompileConcurrently(const GemmProblem& problem,
                         const std::vector<gen::GemmConfig>& candidates,
                         const GemmTarget& target,
                         compile::KernelCache& cache) {
  const unsigned workers = std::max(
      1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                             static_cast<unsigned>(candidates.size())));
  std::vector<std::thread> threads;
  std::atomic<size_t> compiled{0};
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      for (size_t i = w; i < candidates.size(); i += workers) {
        GemmOptions options;
        options.config = candidates[i];
        options.cache = &cache;
        // Failures surface again, with their reason, when preparing.
        PlanGemm(problem, target, options).IgnoreError();
        base::Log(
            base::LogLevel::kInfo,
            absl::StrCat("autotune ", ProblemName(problem), ": compiled ",
                         ++compiled, " of ", candidates.size(), " candidates"));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// Times every candidate that prepares. The rounds interleave the
// candidates (one batch of each per round, median over rounds), so that
// the GPU warming up and slowing down over the session does not favour the
// candidates timed first. Calls rotate through copies of the operands, as
// gemm_bench does: timed with inputs left in L2, a small problem ranked
// 256x128 tiles 10% ahead of 128x128 ones that ran faster from DRAM.
std::vector<TuningMeasurement> MeasureAll(
    const GemmProblem& problem, const std::vector<gen::GemmConfig>& candidates,
    compile::KernelCache& cache, const RotatingGemmOperands& operands,
    const runtime::Stream& stream, int rounds) {
  std::vector<TuningMeasurement> measurements;
  std::vector<std::optional<Gemm>> gemms;
  std::vector<std::vector<double>> times(candidates.size());
  const absl::StatusOr<CUcontext> context = runtime::CurrentOrPrimaryContext();
  for (const gen::GemmConfig& config : candidates) {
    GemmOptions options;
    options.config = config;
    options.cache = &cache;
    absl::StatusOr<Gemm> gemm =
        context.ok()
            ? GemmPreparation::PrepareChosen(problem, options, *context)
            : absl::StatusOr<Gemm>(context.status());
    measurements.push_back({config, gemm.status()});
    gemms.push_back(gemm.ok() ? std::optional<Gemm>(*std::move(gemm))
                              : std::nullopt);
  }
  size_t next_copy = 0;
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (!measurements[i].status.ok()) continue;
      absl::StatusOr<double> milliseconds = MedianMilliseconds(
          [&] {
            return gemms[i]->Run(operands.OperandsOfCopy(next_copy++),
                                 stream.get());
          },
          stream.get(), /*warmups=*/round == 0 ? 2 : 0, /*repeats=*/1,
          /*calls_per_batch=*/3);
      measurements[i].status = milliseconds.status();
      if (milliseconds.ok()) times[i].push_back(*milliseconds);
    }
    base::Log(base::LogLevel::kInfo,
              absl::StrCat("autotune ", ProblemName(problem), ": timed round ",
                           round + 1, " of ", rounds));
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!measurements[i].status.ok() || times[i].empty()) continue;
    std::sort(times[i].begin(), times[i].end());
    measurements[i].milliseconds = times[i][times[i].size() / 2];
  }
  return measurements;
}

// Autotune without its table: the recorded choice, or the measured one.
absl::StatusOr<TuningReport> RecallOrTune(
    const GemmProblem& problem, const std::vector<gen::GemmConfig>& candidates,
    compile::KernelCache& cache, const AutotuneOptions& options) {
  if (absl::Status valid = ValidateProblem(problem); !valid.ok()) return valid;
  if (candidates.empty()) {
    return absl::InvalidArgumentError("autotune: no candidate configurations");
  }
  absl::StatusOr<runtime::DeviceProperties> device =
      runtime::CurrentDeviceProperties();
  if (!device.ok()) return device.status();
  const std::string key = RecordKey(problem, candidates, *device);
  TuningReport report;
  Records& records = MemoryRecords();
  if (options.use_records) {
    absl::MutexLock lock(&records.mutex);
    if (auto it = records.best.find(key); it != records.best.end()) {
      report.best = it->second;
      report.from_record = true;
      return report;
    }
  }
  // The writable folder's record, else the first bundle's.
  std::vector<compile::TrustedFolder> folders;
  if (options.use_records) {
    if (std::optional<compile::TrustedFolder> own =
            RecordFolder(cache, /*create=*/false)) {
      folders.push_back(*std::move(own));
    }
    for (compile::TrustedFolder& shipped : ShippedRecordFolders(cache)) {
      folders.push_back(std::move(shipped));
    }
  }
  for (const compile::TrustedFolder& folder : folders) {
    absl::StatusOr<gen::GemmConfig> recorded =
        ReadRecord(folder, key, candidates);
    if (!recorded.ok()) continue;
    report.record_path = absl::StrCat(folder.path(), "/", key);
    report.best = *recorded;
    report.from_record = true;
    absl::MutexLock lock(&records.mutex);
    records.best[key] = *recorded;
    return report;
  }
  // On a device the kernels are not for, nothing is compiled: preparing
  // each candidate refuses it in GemmTargetOf's words.
  if (absl::StatusOr<GemmTarget> target =
          runtime::KernelTargetOf(*device, kGemmFamily);
      target.ok()) {
    CompileConcurrently(problem, candidates, *target, cache);
  }
  absl::StatusOr<runtime::Stream> stream = runtime::Stream::Create();
  if (!stream.ok()) return stream.status();
  absl::StatusOr<RotatingGemmOperands> operands = RandomRotatingGemmOperands(
      problem, device->l2_bytes, /*seed=*/1, stream->get());
  if (!operands.ok()) return operands.status();
  report.measurements = MeasureAll(problem, candidates, cache, *operands,
                                   *stream, options.repeats);
  const TuningMeasurement* best = nullptr;
  for (const TuningMeasurement& measured : report.measurements) {
    if (measured.status.ok() &&
        (best == nullptr || measured.milliseconds < best->milliseconds)) {
      best = &measured;
    }
  }
  if (best == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("autotune: no candidate ran; the first failed with: ",
                     report.measurements.front().status.message()));
  }
  report.best = best->config;
  {
    absl::MutexLock lock(&records.mutex);
    records.best[key] = report.best;
  }
  if (std::optional<compile::TrustedFolder> folder =
          RecordFolder(cache, /*create=*/true)) {
    folder->RemoveStaleTemporaries(compile::kStaleTemporarySeconds,
                                   compile::IsSha256Hex);
    report.record_path = absl::StrCat(folder->path(), "/", key);
    const AutotuneRecord record{
        key,
        report.best,
        ProblemName(problem),
        absl::StrCat(device->name, " (", device->sm_count, " SMs, sm_",
                     device->cc_major, device->cc_minor, ")"),
        kVersion,
        best->milliseconds};
    if (absl::Status written =
            folder->WriteFileAtomically(key, AutotuneRecordText(record));
        !written.ok()) {
      WarnAboutRecords("record not kept", written.message());
    }
  }
  return report;
}

}  // namespace

std::string TuningTable(const GemmProblem& problem,
                        const TuningReport& report) {
  std::string text = absl::StrCat("autotune ", ProblemName(problem), ": ");
  if (report.from_record) {
    return absl::StrCat(text, gen::ConfigName(report.best), ", as recorded",
                        report.record_path.empty()
                            ? " in memory"
                            : absl::StrCat(" in ", report.record_path));
  }
  std::vector<const TuningMeasurement*> rows;
  for (const TuningMeasurement& measured : report.measurements)
    rows.push_back(&measured);
  // Fastest first; those that did not run last, in candidate order.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TuningMeasurement* a, const TuningMeasurement* b) {
                     if (a->status.ok() != b->status.ok())
                       return a->status.ok();
                     return a->status.ok() && a->milliseconds < b->milliseconds;
                   });
  absl::StrAppend(&text, rows.size(), " candidates, ",
                  gen::ConfigName(report.best), " chosen");
  for (const TuningMeasurement* row : rows) {
    const std::string name = gen::ConfigName(row->config);
    if (!row->status.ok()) {
      absl::StrAppend(&text, "\n  did not run  ", name, ": ",
                      row->status.message());
      continue;
    }
    absl::StrAppendFormat(&text, "\n  %9.4f ms  %s%s", row->milliseconds, name,
                          row->config == report.best ? "  <- chosen" : "");
  }
  return text;
}

absl::StatusOr<TuningReport> Autotune(
    const GemmProblem& problem, const std::vector<gen::GemmConfig>& candidates,
    compile::KernelCache& cache, const AutotuneOptions& options) {
  absl::StatusOr<TuningReport> report =
      RecallOrTune(problem, candidates, cache, options);
  if (!report.ok()) return report;
  const std::string table = TuningTable(problem, *report);
  if (base::EnvironmentVariable(kPrintVariable) == "1") {
    base::LogRequested(base::LogLevel::kInfo, table);
  } else {
    base::Log(base::LogLevel::kInfo, table);
  }
  return report;
}

absl::StatusOr<gen::GemmConfig> AutotunedConfig(
    const GemmProblem& problem, const std::vector<gen::GemmConfig>& candidates,
    compile::KernelCache& cache) {
  absl::StatusOr<TuningReport> report = Autotune(problem, candidates, cache);
  if (!report.ok()) return report.status();
  return report->best;
}

}  // namespace ptxgen::gemm
