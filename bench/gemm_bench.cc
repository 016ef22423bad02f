// ptxgen GEMMs beside cuBLAS, measured in the same process. Flags: Usage()
// below (gemm_bench --help).
//
// Every problem runs in each layout of --a-major x --b-major and with each
// --epilogue; the peer is cuBLAS for the plain problem (both K-major, no
// epilogue) and cuBLASLt, with the same layout and fused epilogue, for the
// others.
//
// --shapes=suite (the default) is the GEMM issues' mostly large problems;
// --shapes=small the ones where tiles go idle or memory, not the tensor
// cores, sets the pace (SmallShapes()).
//
// heuristic: the configuration Gemm::Prepare picks; autotune: the autotuned
// one; compare: both, and whether the heuristic is within 5% of the tuned
// best; pingpong: the heuristic's pick beside the ping-pong configuration
// (PingPongConfig), and how often and by how much ping-pong is faster;
// ladder: the schedule steps at 8192^3; v1: the seed's schedule,
// autotuned over its own space. Every time is the median over `repeats`
// batches (of 1 ms or more) of CUDA-event-timed calls, after 100 ms or more
// of warm-up, with inputs rotated through enough copies to exceed L2.
// launch: the host time one call takes to validate and enqueue, ptxgen's
// heuristic pick beside cuBLAS; a batch of short kernels waits for its
// first enqueue. Prints Markdown tables, or CSV with --format=csv.
//
// Each row of the timed modes also gets its memory floor: the time to move
// the bytes it must (A, B and D; C and the bias when read) once, at the
// device-to-device copy bandwidth measured at start; `bound` says whether
// that or the tensor cores' peak limits it (Roofline).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "bench/grouped_bench.h"
#include "bench/shapes.h"
#include "lib/testing/cublaslt_reference.h"
#include "lib/testing/verification.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gemm/autotune.h"
#include "ptxgen/gemm/gemm.h"
#include "ptxgen/gemm/plan.h"
#include "ptxgen/gemm/selection.h"
#include "ptxgen/runtime/context.h"
#include "ptxgen/runtime/device.h"
#include "ptxgen/runtime/driver.h"
#include "ptxgen/runtime/memory.h"
#include "ptxgen/runtime/target.h"

namespace ptxgen::gemm {
namespace {

constexpr absl::string_view kModes[] = {"heuristic", "autotune", "compare",
                                        "pingpong",  "ladder",   "v1",
                                        "configs",   "launch"};

// The fused epilogues the benchmark offers, and the cuBLASLt epilogue each
// is measured against.
struct BenchEpilogue {
  const char* name;
  BiasAlong bias;
  Activation activation;
  LtGemm::Activation peer_activation;
};
constexpr BenchEpilogue kEpilogues[] = {
    {"none", BiasAlong::kNone, Activation::kNone, LtGemm::Activation::kNone},
    {"bias", BiasAlong::kN, Activation::kNone, LtGemm::Activation::kNone},
    {"bias_relu", BiasAlong::kN, Activation::kRelu, LtGemm::Activation::kRelu},
    {"bias_gelu", BiasAlong::kN, Activation::kGelu, LtGemm::Activation::kGelu},
    {"bias_gelu_tanh", BiasAlong::kN, Activation::kGeluTanh,
     LtGemm::Activation::kGelu},
};

std::vector<std::string> EpilogueNames() {
  std::vector<std::string> names;
  for (const BenchEpilogue& epilogue : kEpilogues)
    names.push_back(epilogue.name);
  return names;
}

std::string Usage() {
  return absl::StrCat(
      "gemm_bench [--mode=", absl::StrJoin(kModes, "|"),
      "]\n"
      "           [--dtype=f16,bf16,e4m3,e5m2,tf32,s8,u8] [--b-dtype=TYPE] "
      "[--out-dtype=TYPE]\n"
      "           [--scaling=none|tensor|block] [--fast-accum] [--amax]\n"
      "           [--shapes=suite|small|MxNxK,...] [--repeats=N]\n"
      "           [--configs=\"ws 128x256x64 s4 ...;v1 128x128x64\"]\n"
      "           [--a-major=k,m] [--b-major=k,n] [--epilogue=",
      absl::StrJoin(EpilogueNames(), ","),
      "]\n"
      "           [--format=markdown|csv] [--nvrtc-flags=\"FLAG FLAG...\"]\n"
      "gemm_bench --grouped [--dtype=bf16,...] [--scaling=...] [--repeats=N]\n"
      "           [--configs=\"NAME;...\"] [--format=markdown|csv]: grouped "
      "GEMMs of\n"
      "           mixture-of-experts layers, each --configs config timed "
      "beside\n"
      "           the heuristic's pick (bench/grouped_bench.h)\n"
      "ptxgen GEMMs beside cuBLAS in the same process (needs a GPU); Markdown\n"
      "tables on stdout. --configs only with --mode=configs; the ladder runs\n"
      "at 8192x8192x8192. Each shape runs in every listed layout (A stored\n"
      "[m,k] for k, [k,m] for m; B [n,k] for k, [k,n] for n) and epilogue:\n"
      "bias adds a vector along n in the input type, then relu, gelu (erf)\n"
      "or gelu_tanh. The peer of a layout or an epilogue is cuBLASLt with the\n"
      "same layout and its fused BIAS, RELU_BIAS or GELU_BIAS epilogue (its\n"
      "GELU is the tanh form: gelu_tanh is the like-for-like row). "
      "--format=csv\n"
      "prints the table as CSV (the same columns) and the notes on stderr, "
      "for\n"
      "bench/bench_charts.py. --shapes=suite (the default): the issues' ten,\n"
      "mostly large; small: 26 LLM shapes with small m, small n, short k, or\n"
      "a small output over a long k. Rows end with bound (memory when the\n"
      "row's FLOP per floor byte is under the ridge in the notes), floor ms\n"
      "(A, B, D, and C and the bias when read, each moved once at the\n"
      "measured device-to-device copy bandwidth), of floor (floor ms /\n"
      "ptxgen ms), copy ms (a device-to-device copy moving those bytes, its\n"
      "launch and ramp included: what memory allows at that size) and of\n"
      "copy (copy ms / ptxgen ms).\n"
      "fp8, tf32 and s8 (K-major only) run beside cuBLASLt (fp8: scale\n"
      "pointers with --scaling=tensor, CUBLASLT_MATMUL_DESC_FAST_ACCUM with\n"
      "--fast-accum; tf32: CUBLAS_COMPUTE_32F_FAST_TF32; s8: "
      "CUBLAS_COMPUTE_32I\n"
      "into s32 or s8, the plain epilogue only); --b-dtype mixes e4m3 with\n"
      "e5m2 (s8 with u8: no peer); --out-dtype is D's type (default: the\n"
      "input type, bf16 from fp8, f32 from tf32, s32 from s8; an e4m3 or e5m2\n"
      "D is scaled by scale_d with --scaling=tensor); --amax records the\n"
      "largest |D| in both. --scaling=block runs block-scaled fp8 (scales of\n"
      "1) beside cuBLASLt's per-tensor-scaled GEMM of the same types (scales\n"
      "0.5 and 2): the same D, so that both run and are checked.\n"
      "--nvrtc-flags compiles ptxgen's kernels with those further NVRTC\n"
      "options (GemmOptions::nvrtc_flags), e.g. -Xptxas=-O2: run with and\n"
      "without them to see what they cost the kernels.\n");
}

// One layout and epilogue of the problems each shape is run in.
struct Variant {
  MajorOrder a_major = MajorOrder::kK;
  MajorOrder b_major = MajorOrder::kK;
  const BenchEpilogue* epilogue = &kEpilogues[0];
};

// The bias in the input type; from fp8 in bf16 (cuBLASLt's fp8 bias), from
// tf32 in f32.
ptx::ScalarType BenchBiasType(ptx::ScalarType element) {
  if (ptx::SizeInBytes(element) == 2) return element;
  return element == ptx::ScalarType::kTF32 ? ptx::ScalarType::kF32
                                           : ptx::ScalarType::kBF16;
}

GemmProblem WithVariant(GemmProblem problem, const Variant& variant) {
  problem.a_major = variant.a_major;
  problem.b_major = variant.b_major;
  problem.bias = variant.epilogue->bias;
  problem.bias_type = BenchBiasType(problem.element);
  problem.activation = variant.epilogue->activation;
  return problem;
}

bool IsPlain(const Variant& variant) {
  return variant.a_major == MajorOrder::kK &&
         variant.b_major == MajorOrder::kK &&
         variant.epilogue == &kEpilogues[0];
}

// "k,m" -> the majors; `mn_letter` names MN-major ("m" for A, "n" for B).
absl::StatusOr<std::vector<MajorOrder>> ParseMajors(
    absl::string_view flag, absl::string_view value,
    absl::string_view mn_letter) {
  std::vector<MajorOrder> majors;
  for (absl::string_view text : absl::StrSplit(value, ',')) {
    if (text == "k") {
      majors.push_back(MajorOrder::kK);
    } else if (text == mn_letter) {
      majors.push_back(MajorOrder::kMN);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " takes k or ", mn_letter,
                       " (a comma-separated list), not '", text, "'"));
    }
  }
  return majors;
}

absl::StatusOr<std::vector<const BenchEpilogue*>> ParseEpilogues(
    absl::string_view value) {
  std::vector<const BenchEpilogue*> epilogues;
  for (absl::string_view text : absl::StrSplit(value, ',')) {
    const BenchEpilogue* found = nullptr;
    for (const BenchEpilogue& epilogue : kEpilogues) {
      if (text == epilogue.name) found = &epilogue;
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--epilogue takes ", absl::StrJoin(EpilogueNames(), ", "),
          " (a comma-separated list), not '", text, "'"));
    }
    epilogues.push_back(found);
  }
  return epilogues;
}

struct Flags {
  bool help = false;
  std::string mode = "heuristic";
  std::vector<ptx::ScalarType> dtypes = {ptx::ScalarType::kF16,
                                         ptx::ScalarType::kBF16};
  std::vector<GemmProblem> shapes;  // element filled per dtype
  std::optional<ptx::ScalarType> b_dtype, out_dtype;
  GemmScaling scaling = GemmScaling::kNone;
  bool fast_accumulation = false;
  bool record_amax = false;
  bool shapes_given = false;
  std::vector<gen::GemmConfig> configs;
  int repeats = 20;
  std::vector<MajorOrder> a_majors = {MajorOrder::kK};
  std::vector<MajorOrder> b_majors = {MajorOrder::kK};
  std::vector<const BenchEpilogue*> epilogues = {&kEpilogues[0]};
  bool csv = false;                      // --format=csv
  std::vector<std::string> nvrtc_flags;  // GemmOptions::nvrtc_flags
  bool grouped = false;                  // --grouped: grouped_bench.h
  bool dtypes_given = false;

  // Every layout with every epilogue, in the order of the flags.
  std::vector<Variant> Variants() const {
    std::vector<Variant> variants;
    for (MajorOrder a : a_majors) {
      for (MajorOrder b : b_majors) {
        for (const BenchEpilogue* epilogue : epilogues)
          variants.push_back({a, b, epilogue});
      }
    }
    return variants;
  }
};

// A shape as the flags type it: `element` in, --b-dtype, --out-dtype,
// --scaling and --fast-accum.
// Shapes made for 16-bit inputs (k a multiple of 8) whose rows of 8-bit
// values would not start 16 bytes apart packed (k = 4104) get rows padded
// to the next 16 bytes, for both libraries.
GemmProblem Typed(GemmProblem shape, ptx::ScalarType element,
                  const Flags& flags) {
  shape.element = element;
  const int64_t per_16_bytes = 16 / ptx::SizeInBytes(element);
  if (shape.k % 8 == 0 && shape.k % per_16_bytes != 0) {
    shape.lda = shape.ldb = (shape.k / per_16_bytes + 1) * per_16_bytes;
  }
  shape.b_element = flags.b_dtype;
  shape.output = flags.out_dtype;
  shape.scaling = flags.scaling;
  shape.fast_accumulation = flags.fast_accumulation;
  shape.record_amax = flags.record_amax;
  return shape;
}

// --shapes: "suite", "small", or a list of MxNxK.
absl::StatusOr<std::vector<GemmProblem>> ParseShapes(absl::string_view value) {
  if (value == "suite") return SuiteShapes();
  if (value == "small") return SmallShapes();
  std::vector<GemmProblem> shapes;
  for (absl::string_view text : absl::StrSplit(value, ',')) {
    absl::StatusOr<std::array<int64_t, 3>> sizes = gen::ParseDimensions(text);
    if (!sizes.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shapes: '", text, "' is not MxNxK"));
    }
    shapes.push_back(GemmProblem{(*sizes)[0], (*sizes)[1], (*sizes)[2]});
  }
  return shapes;
}

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  flags.shapes = SuiteShapes();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    const std::string value =
        equals == std::string::npos ? "" : arg.substr(equals + 1);
    if (arg == "--help" || arg == "-h") {
      flags.help = true;
    } else if (name == "--mode") {
      if (std::find(std::begin(kModes), std::end(kModes), value) ==
          std::end(kModes)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--mode must be one of ", absl::StrJoin(kModes, ", "),
                         ", not '", value, "'"));
      }
      flags.mode = value;
    } else if (arg == "--grouped") {
      flags.grouped = true;
    } else if (name == "--dtype") {
      flags.dtypes_given = true;
      flags.dtypes.clear();
      for (absl::string_view text : absl::StrSplit(value, ',')) {
        absl::StatusOr<ptx::ScalarType> type = ptx::ParseScalarType(text);
        if (!type.ok()) return type.status();
        flags.dtypes.push_back(*type);
      }
    } else if (name == "--b-dtype" || name == "--out-dtype") {
      absl::StatusOr<ptx::ScalarType> type = ptx::ParseScalarType(value);
      if (!type.ok()) return type.status();
      (name == "--b-dtype" ? flags.b_dtype : flags.out_dtype) = *type;
    } else if (name == "--scaling") {
      absl::StatusOr<GemmScaling> scaling = gen::ParseScaling(value);
      if (!scaling.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--scaling: ", scaling.status().message()));
      }
      flags.scaling = *scaling;
    } else if (arg == "--fast-accum") {
      flags.fast_accumulation = true;
    } else if (arg == "--amax") {
      flags.record_amax = true;
    } else if (name == "--shapes") {
      flags.shapes_given = true;
      absl::StatusOr<std::vector<GemmProblem>> shapes = ParseShapes(value);
      if (!shapes.ok()) return shapes.status();
      flags.shapes = *std::move(shapes);
    } else if (name == "--configs") {
      for (absl::string_view text : absl::StrSplit(value, ';')) {
        absl::StatusOr<gen::GemmConfig> config =
            gen::ParseConfigName(std::string(text));
        if (!config.ok()) return config.status();
        flags.configs.push_back(*config);
      }
    } else if (name == "--a-major" || name == "--b-major") {
      absl::StatusOr<std::vector<MajorOrder>> majors =
          ParseMajors(name, value, name == "--a-major" ? "m" : "n");
      if (!majors.ok()) return majors.status();
      (name == "--a-major" ? flags.a_majors : flags.b_majors) =
          *std::move(majors);
    } else if (name == "--epilogue") {
      absl::StatusOr<std::vector<const BenchEpilogue*>> epilogues =
          ParseEpilogues(value);
      if (!epilogues.ok()) return epilogues.status();
      flags.epilogues = *std::move(epilogues);
    } else if (name == "--format") {
      if (value != "markdown" && value != "csv") {
        return absl::InvalidArgumentError(absl::StrCat(
            "--format must be markdown or csv, not '", value, "'"));
      }
      flags.csv = value == "csv";
    } else if (name == "--nvrtc-flags") {
      absl::StatusOr<std::vector<std::string>> nvrtc = ParseNvrtcFlags(value);
      if (!nvrtc.ok()) return nvrtc.status();
      flags.nvrtc_flags = *std::move(nvrtc);
    } else if (name == "--repeats") {
      if (!absl::SimpleAtoi(value, &flags.repeats) || flags.repeats < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--repeats must be a positive integer, not '", value, "'"));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
    }
  }
  if (flags.help) return flags;
  if (flags.grouped &&
      (flags.mode != "heuristic" || flags.shapes_given ||
       flags.Variants().size() != 1 || flags.b_dtype || flags.out_dtype ||
       flags.fast_accumulation || flags.record_amax)) {
    return absl::InvalidArgumentError(
        "--grouped runs its own suite of expert GEMMs with the heuristic's "
        "picks: it takes only --dtype, --scaling, --configs, --repeats and "
        "--format");
  }
  if (flags.mode == "configs" && flags.configs.empty()) {
    return absl::InvalidArgumentError(
        "--mode=configs needs --configs=\"NAME;NAME...\"");
  }
  if (flags.mode != "configs" && !flags.grouped && !flags.configs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--configs applies only to --mode=configs and --grouped (not --mode=",
        flags.mode, ")"));
  }
  if (flags.mode == "ladder" && flags.shapes_given) {
    return absl::InvalidArgumentError(
        "--shapes does not apply to --mode=ladder: the ladder runs at "
        "8192x8192x8192");
  }
  const std::vector<Variant> variants = flags.Variants();
  if ((flags.mode == "ladder" || flags.mode == "v1" ||
       flags.mode == "launch") &&
      (variants.size() != 1 || !IsPlain(variants[0]))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--a-major, --b-major and --epilogue do not apply to --mode=",
        flags.mode, ": it measures the plain problem"));
  }
  // Refused here, not as a row that "failed" in a run that exits 0.
  for (ptx::ScalarType dtype : flags.dtypes) {
    for (GemmProblem shape : flags.shapes) {
      shape = Typed(shape, dtype, flags);
      for (const Variant& variant : variants) {
        if (absl::Status valid = ValidateProblem(WithVariant(shape, variant));
            !valid.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "--shapes/--dtype: ", shape.m, "x", shape.n, "x", shape.k, " ",
              ptx::PtxName(dtype), ": ", valid.message()));
        }
      }
    }
  }
  return flags;
}

// The output type of a benchmark problem.
ptx::ScalarType OutputOf(const GemmProblem& problem) {
  return *Resolved(problem).output;
}

// The dtype column: "f16", or with other types "e4m3xe5m2->f32 scaled fast".
std::string TypesName(const GemmProblem& problem) {
  std::string name(ptx::PtxName(problem.element));
  if (problem.b_element) {
    absl::StrAppend(&name, "x", ptx::PtxName(*problem.b_element));
  }
  if (OutputOf(problem) != problem.element || problem.b_element) {
    absl::StrAppend(&name, "->", ptx::PtxName(OutputOf(problem)));
  }
  if (problem.scaling == GemmScaling::kTensor) {
    absl::StrAppend(&name, " scaled");
  }
  if (problem.scaling == GemmScaling::kBlock) absl::StrAppend(&name, " block");
  if (problem.fast_accumulation) absl::StrAppend(&name, " fast");
  if (problem.record_amax) absl::StrAppend(&name, " amax");
  return name;
}

// Whether cuBLAS's GEMM computes the problem as it is: 16-bit inputs, D in
// their type, the plain variant.
bool CublasComputes(const GemmProblem& problem, const Variant& variant) {
  return IsPlain(variant) && ptx::SizeInBytes(problem.element) == 2 &&
         OutputOf(problem) == problem.element;
}

// What ptxgen is measured against: cuBLAS for the plain problem, cuBLASLt
// with the same types, scales, layout and fused epilogue for the others.
class Peer {
 public:
  static absl::StatusOr<Peer> Create(const GemmProblem& problem,
                                     const Variant& variant) {
    Peer peer;
    peer.problem_ = problem;
    if (CublasComputes(problem, variant)) return peer;
    LtGemm lt = PackedLtGemm(
        problem.m, problem.n, problem.k, problem.element, OutputOf(problem),
        variant.a_major == MajorOrder::kK, variant.b_major == MajorOrder::kK);
    lt.b_type = problem.b_element.value_or(problem.element);
    const GemmProblem resolved = Resolved(problem);
    lt.lda = resolved.lda;
    lt.ldb = resolved.ldb;
    lt.bias = variant.epilogue->bias == BiasAlong::kN ? LtGemm::Bias::kAlongN
                                                      : LtGemm::Bias::kNone;
    lt.bias_type = problem.bias_type;
    lt.activation = variant.epilogue->peer_activation;
    // Block-scaled: against the per-tensor-scaled GEMM of the same types
    // (timing's block scales are 1, its per-tensor ones 0.5 and 2: one D).
    lt.scale_a = lt.scale_b = problem.scaling != GemmScaling::kNone;
    lt.scale_d = lt.scale_a && ptx::IsFp8(OutputOf(problem));
    lt.amax_d = problem.record_amax;
    lt.fast_accumulation = problem.fast_accumulation;
    absl::StatusOr<PreparedLtGemm> prepared =
        PreparedLtGemm::Create(lt, kLtWorkspaceBytes);
    if (!prepared.ok()) return prepared.status();
    absl::StatusOr<runtime::DeviceBuffer> workspace =
        runtime::DeviceBuffer::Allocate(
            std::max<size_t>(prepared->workspace_bytes(), 16));
    if (!workspace.ok()) return workspace.status();
    peer.lt_ = std::make_shared<PreparedLtGemm>(*std::move(prepared));
    peer.workspace_ =
        std::make_shared<runtime::DeviceBuffer>(*std::move(workspace));
    return peer;
  }

  const char* name() const { return lt_ ? "cuBLASLt" : "cuBLAS"; }

  // D = the product at c, with the operands' bias and scales where the
  // problem has them.
  GemmCall Call(const RotatingGemmOperands& operands) const {
    if (!lt_) {
      return [problem = problem_](CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) {
        return CublasGemm(problem, a, b, c, nullptr);
      };
    }
    const CUdeviceptr bias = operands.bias ? operands.bias->address() : 0;
    LtScales scales;
    scales.a = operands.ScaleA();
    scales.b = operands.ScaleB();
    if (lt_->gemm().scale_d) scales.d = operands.ScaleD();
    if (lt_->gemm().amax_d) scales.amax_d = operands.AmaxD();
    return [lt = lt_, workspace = workspace_, bias, scales](
               CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) {
      return lt->Run(a, b, 0, c, bias, scales, nullptr,
                     reinterpret_cast<void*>(workspace->address()),
                     workspace->size());
    };
  }

 private:
  GemmProblem problem_;
  std::shared_ptr<const PreparedLtGemm> lt_;  // null: cuBLAS
  std::shared_ptr<const runtime::DeviceBuffer> workspace_;
};

// Rotating copies of A and B, the bias and the scales when the problem has
// them (RandomRotatingGemmOperands), and the peer's D for the first copy.
struct Operands : RotatingGemmOperands {
  std::vector<double> reference;
};

absl::StatusOr<Operands> MakeOperands(const GemmProblem& problem, int l2_bytes,
                                      const Peer& peer) {
  absl::StatusOr<RotatingGemmOperands> inputs =
      RandomRotatingGemmOperands(problem, l2_bytes, /*seed=*/7, nullptr);
  if (!inputs.ok()) return inputs.status();
  Operands operands{*std::move(inputs), {}};
  if (absl::Status s =
          peer.Call(operands)(operands.a[0].address(), operands.b[0].address(),
                              operands.c.address());
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<double>> reference =
      DownloadValues(operands.c, OutputOf(problem));
  if (!reference.ok()) return reference.status();
  operands.reference = *std::move(reference);
  return operands;
}

// Each library runs for at least this long before its times count, and a
// timed batch lasts at least this long: timed in a few milliseconds right
// after another shape, a short kernel measures the GPU's power state left
// by that shape rather than its own. At 1024x1024x8192 both libraries ran
// 5-15% faster that way than sustained (bench/JOURNAL.md, fifth session).
constexpr double kWarmupMilliseconds = 100;
constexpr double kMinBatchMilliseconds = 1;

// ptxgen's GEMM as a GemmCall on the default stream, D at c.
GemmCall OursCall(const Gemm& gemm, const Operands& inputs) {
  const GemmOperands fixed = inputs.OperandsOfCopy(0);
  return [&gemm, fixed](CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) {
    GemmOperands operands = fixed;
    operands.a = a;
    operands.b = b;
    operands.d = c;
    return gemm.Run(operands, nullptr);
  };
}

// How far ptxgen's D may be from the peer's: both round to D's type (16-bit
// D: ErrorBound; an fp8 D's 3 or 2 mantissa bits turn a last-bit difference
// of the sums into a step of 1/8 or more on the values it flips); an f32 D of
// tf32 inputs or of fp8 fast accumulation carries each library's own inexact
// sums (2e-3); other f32 results differ only in the order of their f32 sums.
double BenchErrorBound(const GemmProblem& problem) {
  const ptx::ScalarType output = OutputOf(problem);
  if (output == ptx::ScalarType::kS32) return 1e-12;  // both exact
  // alpha times exact sums, each rounded once: a tie rounded another way.
  if (output == ptx::ScalarType::kS8) return 1e-2;
  if (ptx::IsFp8(output)) return 3e-2;
  if (output != ptx::ScalarType::kF32) return ErrorBound(output);
  const bool inexact =
      problem.element == ptx::ScalarType::kTF32 || problem.fast_accumulation;
  return inexact ? 2e-3 : 1e-4;
}

// Milliseconds per call of `call` over one batch of `calls` calls, rotating
// through the operand copies.
absl::StatusOr<double> TimeBatch(const GemmCall& call, const Operands& operands,
                                 int calls) {
  size_t next = 0;
  return MedianMilliseconds([&] { return operands.RunOnCopy(next++, call); },
                            nullptr,
                            /*warmups=*/0, /*repeats=*/1, calls);
}

// Median ms per call of `ours` and of `theirs`, timed in alternating
// batches (so clock and temperature drift hit both alike) after both have
// alternated through a warm-up of kWarmupMilliseconds each.
absl::StatusOr<std::pair<double, double>> TimeInterleaved(
    const GemmCall& ours, const GemmCall& theirs, const Operands& operands,
    int repeats) {
  const int rotation = static_cast<int>(std::max<size_t>(operands.a.size(), 5));
  double warmed[2] = {0, 0};
  double slowest_call = 0;
  while (std::min(warmed[0], warmed[1]) < kWarmupMilliseconds) {
    for (int which = 0; which < 2; ++which) {
      absl::StatusOr<double> ms =
          TimeBatch(which == 0 ? ours : theirs, operands, rotation);
      if (!ms.ok()) return ms.status();
      warmed[which] += *ms * rotation;
      slowest_call = std::max(slowest_call, *ms);
    }
  }
  const int batch = std::max(
      rotation, static_cast<int>(std::ceil(kMinBatchMilliseconds /
                                           std::max(slowest_call, 1e-3))));
  std::vector<double> times[2];
  for (int r = 0; r < repeats; ++r) {
    for (int which = 0; which < 2; ++which) {
      absl::StatusOr<double> ms =
          TimeBatch(which == 0 ? ours : theirs, operands, batch);
      if (!ms.ok()) return ms.status();
      times[which].push_back(*ms);
    }
  }
  for (std::vector<double>& t : times) std::sort(t.begin(), t.end());
  return std::make_pair(times[0][repeats / 2], times[1][repeats / 2]);
}

// Median host microseconds per call over bursts of calls enqueued back to
// back: few enough that the launch queue never fills and blocks the host.
absl::StatusOr<double> HostMicrosecondsPerCall(const GemmCall& call,
                                               const Operands& operands) {
  constexpr int kBursts = 21, kCallsPerBurst = 64;
  std::vector<double> per_call;
  for (int burst = 0; burst < kBursts; ++burst) {
    if (absl::Status s = runtime::SynchronizeCurrentContext(); !s.ok())
      return s;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCallsPerBurst; ++i) {
      if (absl::Status s = operands.RunOnCopy(i, call); !s.ok()) return s;
    }
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    per_call.push_back(elapsed.count() / kCallsPerBurst);
  }
  if (absl::Status s = runtime::SynchronizeCurrentContext(); !s.ok()) return s;
  std::sort(per_call.begin(), per_call.end());
  return per_call[kBursts / 2];
}

// The bytes a GEMM must move at least: A and B read, D written, C read
// when beta is not 0, and the bias (one vector, or one per matrix of the
// batch).
double FloorBytes(const GemmProblem& p) {
  const int64_t in = ptx::SizeInBytes(p.element);
  const int64_t out = ptx::SizeInBytes(OutputOf(p));
  double bytes = static_cast<double>(p.batch) *
                 (p.m * p.k * in + p.n * p.k * in + p.m * p.n * out);
  if (p.beta != 0.0f) bytes += static_cast<double>(p.batch) * p.m * p.n * out;
  if (p.bias != BiasAlong::kNone) {
    bytes += static_cast<double>(p.stride_bias == 0 ? 1 : p.batch) *
             (p.bias == BiasAlong::kM ? p.m : p.n) *
             ptx::SizeInBytes(p.bias_type);
  }
  return bytes;
}

double Flops(const GemmProblem& p) { return 2.0 * p.m * p.n * p.k * p.batch; }

// The two ceilings of a GEMM's speed on this device: memory, as fast as a
// device-to-device copy moves bytes, and the tensor cores' dense peak.
struct Roofline {
  double bytes_per_second = 0;  // copy bandwidth, reads and writes counted
  double peak_flops = 0;
  double clock_ghz = 0;  // what peak_flops was figured from, for the notes
  int sm_count = 0;

  // FLOP per byte above which the tensor cores, not memory, bound the time
  // (of 16-bit inputs; the tensor cores run fp8 twice, tf32 half as fast).
  double Ridge() const { return peak_flops / bytes_per_second; }
  bool MemoryBound(const GemmProblem& p) const {
    const int bytes = ptx::SizeInBytes(p.element);
    const double speed = bytes == 1 ? 2.0 : bytes == 4 ? 0.5 : 1.0;
    return Flops(p) / FloorBytes(p) < speed * Ridge();
  }
  double FloorMilliseconds(const GemmProblem& p) const {
    return 1e3 * FloorBytes(p) / bytes_per_second;
  }
};

// A memory-bound row this close to its floor counts as reaching it.
constexpr double kNearFloor = 0.9;

// Device-to-device copies out of a 1 GiB buffer (far past L2), timed like
// the GEMMs: the median of timed copies after kWarmupMilliseconds of them.
// A whole-buffer copy gives the bandwidth of the floor; a copy of one
// row's bytes, launch and ramp included, what memory alone allows at that
// size.
class CopyProbe {
 public:
  static constexpr size_t kBytes = size_t{1} << 30;

  static absl::StatusOr<CopyProbe> Create() {
    absl::StatusOr<const runtime::Driver*> driver = runtime::Driver::Get();
    if (!driver.ok()) return driver.status();
    absl::StatusOr<runtime::DeviceBuffer> source =
        runtime::DeviceBuffer::Allocate(kBytes);
    if (!source.ok()) return source.status();
    absl::StatusOr<runtime::DeviceBuffer> destination =
        runtime::DeviceBuffer::Allocate(kBytes);
    if (!destination.ok()) return destination.status();
    return CopyProbe(*driver, *std::move(source), *std::move(destination));
  }

  // Bytes per second read plus written by whole-buffer copies.
  absl::StatusOr<double> BytesPerSecond() const {
    absl::StatusOr<double> ms = Milliseconds(kBytes);
    if (!ms.ok()) return ms.status();
    return 2.0 * kBytes / (*ms * 1e-3);
  }

  // Milliseconds per copy of `bytes`, each copy from the next `bytes` of
  // the buffer, so that none starts in L2; more than kBytes is timed as
  // whole-buffer copies scaled up.
  absl::StatusOr<double> Milliseconds(size_t bytes) const {
    if (bytes > kBytes) {
      absl::StatusOr<double> whole = Milliseconds(kBytes);
      if (!whole.ok()) return whole.status();
      return *whole * static_cast<double>(bytes) / kBytes;
    }
    bytes = std::max<size_t>(bytes, 1);
    const size_t slots = kBytes / bytes;
    size_t next = 0;
    const auto run = [&] {
      const size_t offset = (next++ % slots) * bytes;
      return driver_->Check(driver_->cuMemcpyDtoDAsync(
                                destination_.address() + offset,
                                source_.address() + offset, bytes, nullptr),
                            "cuMemcpyDtoDAsync");
    };
    absl::StatusOr<double> first =
        MedianMilliseconds(run, nullptr, /*warmups=*/1,
                           /*repeats=*/1, /*calls_per_batch=*/1);
    if (!first.ok()) return first.status();
    const int warmups = static_cast<int>(
        std::ceil(kWarmupMilliseconds / std::max(*first, 1e-3)));
    return MedianMilliseconds(run, nullptr, warmups, /*repeats=*/21,
                              /*calls_per_batch=*/1);
  }

 private:
  CopyProbe(const runtime::Driver* driver, runtime::DeviceBuffer source,
            runtime::DeviceBuffer destination)
      : driver_(driver),
        source_(std::move(source)),
        destination_(std::move(destination)) {}

  const runtime::Driver* driver_;
  runtime::DeviceBuffer source_;
  runtime::DeviceBuffer destination_;
};

absl::StatusOr<Roofline> MeasureRoofline(
    const runtime::DeviceProperties& device, const CopyProbe& copies) {
  absl::StatusOr<CUdevice> handle = runtime::GetDevice(device.ordinal);
  if (!handle.ok()) return handle.status();
  absl::StatusOr<int> clock_khz =
      runtime::GetDeviceAttribute(*handle, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  if (!clock_khz.ok()) return clock_khz.status();
  absl::StatusOr<double> bytes_per_second = copies.BytesPerSecond();
  if (!bytes_per_second.ok()) return bytes_per_second.status();
  Roofline roofline;
  roofline.bytes_per_second = *bytes_per_second;
  roofline.clock_ghz = *clock_khz * 1e-6;
  roofline.sm_count = device.sm_count;
  // Hopper's dense f16/bf16 wgmma rate: 4096 FLOP per clock per SM (the
  // H100 SXM's 989 TFLOP/s is 132 SMs x 1.83 GHz x 4096). The bench runs
  // only 16-bit inputs.
  roofline.peak_flops = 4096.0 * device.sm_count * roofline.clock_ghz * 1e9;
  return roofline;
}

void PrintRooflineNotes(const Roofline& roofline, FILE* out) {
  std::fprintf(out,
               "device-to-device copy: %.0f GB/s (each byte of a 1 GiB copy "
               "read and written)\n",
               roofline.bytes_per_second * 1e-9);
  std::fprintf(
      out,
      "ridge: %.0f FLOP/byte = dense 16-bit peak %.0f TFLOP/s (%d SMs x %.3f "
      "GHz x "
      "4096 FLOP/clock) / copy bandwidth; rows under it are memory-bound\n",
      roofline.Ridge(), roofline.peak_flops * 1e-12, roofline.sm_count,
      roofline.clock_ghz);
}

// The tables gemm_bench prints: Markdown to read, or CSV for scripts
// (bench/bench_charts.py), with the same columns. Beside CSV everything
// that is not a table row (notes, summaries, failures) goes to stderr.
class Table {
 public:
  explicit Table(bool csv) : csv_(csv) {}

  FILE* notes() const { return csv_ ? stderr : stdout; }

  // `columns`: a leading '>' marks a right-aligned (numeric) column.
  void Header(const std::vector<std::string>& columns) const {
    std::vector<std::string> names, rules;
    for (const std::string& column : columns) {
      const bool numeric = column[0] == '>';
      names.push_back(numeric ? column.substr(1) : column);
      rules.push_back(numeric ? "---:" : "---");
    }
    if (csv_) {
      Print(names);
    } else {
      Print(names);
      Print(rules);
    }
  }

  void Print(const std::vector<std::string>& cells) const {
    if (csv_) {
      std::vector<std::string> quoted;
      for (const std::string& cell : cells) {
        quoted.push_back(absl::StrCat(
            "\"", absl::StrReplaceAll(cell, {{"\"", "\"\""}}), "\""));
      }
      std::printf("%s\n", absl::StrJoin(quoted, ",").c_str());
    } else {
      std::printf("| %s |\n", absl::StrJoin(cells, " | ").c_str());
    }
    std::fflush(stdout);
  }

 private:
  bool csv_;
};

absl::Status PrintLaunchRow(const GemmProblem& problem,
                            const gen::GemmConfig& config, const Peer& peer,
                            const Operands& operands, const Table& table) {
  GemmOptions options;
  options.config = config;
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, options);
  if (!gemm.ok()) return gemm.status();
  absl::StatusOr<double> ours =
      HostMicrosecondsPerCall(OursCall(*gemm, operands), operands);
  if (!ours.ok()) return ours.status();
  absl::StatusOr<double> theirs =
      HostMicrosecondsPerCall(peer.Call(operands), operands);
  if (!theirs.ok()) return theirs.status();
  table.Print({absl::StrCat(problem.m, "x", problem.n, "x", problem.k),
               std::string(ptx::PtxName(problem.element)),
               gen::ConfigName(config), peer.name(),
               absl::StrFormat("%.1f", *ours),
               absl::StrFormat("%.1f", *theirs)});
  return absl::OkStatus();
}

// "kk", "kn", "mk", "mn": the --a-major and --b-major letters.
std::string LayoutName(const Variant& variant) {
  return absl::StrCat(variant.a_major == MajorOrder::kK ? "k" : "m",
                      variant.b_major == MajorOrder::kK ? "k" : "n");
}

struct Row {
  std::string label;
  GemmProblem problem;
  Variant variant;
  std::string config;
  std::string peer;
  double ms = 0, peer_ms = 0, error = 0;
  // A device-to-device copy moving the row's floor bytes (CopyProbe).
  double copy_ms = 0;
};

// Checks one configuration's result against the peer's (refusing a wrong
// one), then times both on the same operands.
absl::StatusOr<Row> Measure(const std::string& label,
                            const GemmProblem& problem, const Variant& variant,
                            const gen::GemmConfig& config, const Peer& peer,
                            const Operands& operands, int repeats,
                            const std::vector<std::string>& nvrtc_flags) {
  GemmOptions options;
  options.config = config;
  options.nvrtc_flags = nvrtc_flags;
  absl::StatusOr<Gemm> gemm = Gemm::Prepare(problem, options);
  if (!gemm.ok()) return gemm.status();
  Row row{label, problem, variant, gen::ConfigName(config), peer.name()};
  const GemmCall ours = OursCall(*gemm, operands);
  const ptx::ScalarType output = OutputOf(problem);
  if (absl::Status s = PoisonValues(operands.c.address(), problem.m * problem.n,
                                    output, nullptr);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ours(operands.a[0].address(), operands.b[0].address(),
                            operands.c.address());
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<double>> result =
      DownloadValues(operands.c, output);
  if (!result.ok()) return result.status();
  row.error = RelativeErrorByNorm(*result, operands.reference);
  if (!(row.error < BenchErrorBound(problem))) {
    return absl::InternalError(
        absl::StrFormat("wrong result: relative error %.2e vs %s (bound %.0e)",
                        row.error, peer.name(), BenchErrorBound(problem)));
  }
  absl::StatusOr<std::pair<double, double>> times =
      TimeInterleaved(ours, peer.Call(operands), operands, repeats);
  if (!times.ok()) return times.status();
  row.ms = times->first;
  row.peer_ms = times->second;
  return row;
}

void PrintRow(const Row& row, const Roofline& roofline, const Table& table) {
  const double floor_ms = roofline.FloorMilliseconds(row.problem);
  table.Print({row.label, TypesName(row.problem), LayoutName(row.variant),
               row.variant.epilogue->name, row.config,
               absl::StrFormat("%.4f", row.ms),
               absl::StrFormat("%.0f", Tflops(row.problem, row.ms)), row.peer,
               absl::StrFormat("%.4f", row.peer_ms),
               absl::StrFormat("%.0f", Tflops(row.problem, row.peer_ms)),
               absl::StrFormat("%.3f", row.peer_ms / row.ms),
               absl::StrFormat("%.1e", row.error),
               roofline.MemoryBound(row.problem) ? "memory" : "compute",
               absl::StrFormat("%.4f", floor_ms),
               absl::StrFormat("%.2f", floor_ms / row.ms),
               absl::StrFormat("%.4f", row.copy_ms),
               absl::StrFormat("%.2f", row.copy_ms / row.ms)});
}

// How many memory-bound rows come within kNearFloor of their floor, and of
// a same-size copy.
void PrintFloorSummary(const std::vector<Row>& rows, const Roofline& roofline,
                       FILE* out) {
  int memory_bound = 0, near_floor = 0, near_copy = 0;
  for (const Row& row : rows) {
    if (!roofline.MemoryBound(row.problem)) continue;
    ++memory_bound;
    if (roofline.FloorMilliseconds(row.problem) >= kNearFloor * row.ms)
      ++near_floor;
    if (row.copy_ms >= kNearFloor * row.ms) ++near_copy;
  }
  std::fprintf(out,
               "memory-bound rows at %.0f%% of their floor or better: %d of "
               "%d; at %.0f%% "
               "of a copy of their bytes: %d of %d\n",
               100 * kNearFloor, near_floor, memory_bound, 100 * kNearFloor,
               near_copy, memory_bound);
}

// ptxgen's time in each variant of a shape over its time in the shape's
// first variant (the first layout, no epilogue when one is listed): what a
// layout or an epilogue costs. Times come from separate interleaved runs,
// so differences of a percent or so are noise; the ratios to the peer are
// the steadier figures.
void PrintVariantCosts(const std::vector<Row>& rows, FILE* out) {
  for (const Row& row : rows) {
    for (const Row& base : rows) {
      if (&base == &row) break;
      if (base.problem.m != row.problem.m || base.problem.n != row.problem.n ||
          base.problem.k != row.problem.k ||
          base.problem.element != row.problem.element ||
          base.label != row.label) {
        continue;
      }
      std::fprintf(
          out, "%s %s %s %s: %+.1f%% against %s %s\n", row.label.c_str(),
          std::string(ptx::PtxName(row.problem.element)).c_str(),
          LayoutName(row.variant).c_str(), row.variant.epilogue->name,
          100 * (row.ms / base.ms - 1), LayoutName(base.variant).c_str(),
          base.variant.epilogue->name);
      break;
    }
  }
}

std::string ShapeName(const GemmProblem& p) {
  return absl::StrCat(p.m, "x", p.n, "x", p.k);
}

// The schedule ladder at 8192^3: each step adds one technique.
std::vector<std::pair<std::string, gen::GemmConfig>> Ladder(
    ptx::ScalarType element, const GemmTarget& target) {
  auto parse = [](const char* name) { return *gen::ParseConfigName(name); };
  std::vector<std::pair<std::string, gen::GemmConfig>> steps;
  // The best v1 tile is measured by the v1 mode; 128x128x64 is the seed's.
  steps.push_back({"v1: seed (TMA + wgmma, 1 stage)", parse("v1 128x128x64")});
  steps.push_back({"+ ring of 4 stages, producer warp, 1 consumer",
                   parse("ws 128x128x64 s4 c1 w0 m1 direct g1 tiles")});
  steps.push_back({"+ 2 consumers, 128x256 tile",
                   parse("ws 128x256x64 s4 c2 w0 m1 direct g1 tiles")});
  steps.push_back({"+ wait_group 1 (one wgmma group in flight)",
                   parse("ws 128x256x64 s4 c2 w1 m1 direct g1 tiles")});
  steps.push_back({"+ persistent grid, grouped raster (16 rows)",
                   parse("ws 128x256x64 s4 c2 w1 m1 direct g16 persistent")});
  steps.push_back({"+ 2-CTA cluster, B multicast",
                   parse("ws 128x256x64 s4 c2 w1 m2 direct g16 persistent")});
  steps.push_back({"+ TMA-store epilogue (stmatrix), 3 stages",
                   parse("ws 128x256x64 s3 c2 w1 m2 tma g16 persistent")});
  steps.push_back({"+ stream-K: the last wave shared out by k-tiles",
                   parse("ws 128x256x64 s3 c2 w1 m2 tma g16 sk persistent")});
  steps.push_back({"the heuristic's pick",
                   gemm::HeuristicConfig({8192, 8192, 8192, element}, target)});
  return steps;
}

// The configurations a mode measures on `problem`, each with its row label.
absl::StatusOr<std::vector<std::pair<std::string, gen::GemmConfig>>>
ConfigsToMeasure(const Flags& flags, const GemmProblem& problem,
                 const GemmTarget& target) {
  if (flags.mode == "ladder") return Ladder(problem.element, target);
  std::vector<std::pair<std::string, gen::GemmConfig>> runs;
  if (flags.mode == "configs") {
    for (const gen::GemmConfig& config : flags.configs) {
      runs.push_back({ShapeName(problem), config});
    }
  } else if (flags.mode == "pingpong") {
    runs = {
        {ShapeName(problem) + " heuristic", HeuristicConfig(problem, target)},
        {ShapeName(problem) + " pingpong", PingPongConfig(problem, target)}};
  } else if (flags.mode == "v1") {
    absl::StatusOr<gen::GemmConfig> tuned =
        AutotunedConfig(problem, V1CandidateConfigs(problem.element),
                        compile::KernelCache::Default());
    if (!tuned.ok()) return tuned.status();
    runs = {{ShapeName(problem) + " v1 tuned", *tuned}};
  } else {
    if (flags.mode != "autotune") {
      runs.push_back({ShapeName(problem) + " heuristic",
                      HeuristicConfig(problem, target)});
    }
    if (flags.mode != "heuristic") {
      absl::StatusOr<TuningReport> tuned =
          Autotune(problem, CandidateConfigs(problem, target),
                   compile::KernelCache::Default());
      if (!tuned.ok()) return tuned.status();
      // The autotuner's own timings go to stderr, for the record.
      for (const TuningMeasurement& measured : tuned->measurements) {
        std::fprintf(stderr, "tuning %s %s: %s %.4f ms\n",
                     ShapeName(problem).c_str(),
                     std::string(ptx::PtxName(problem.element)).c_str(),
                     gen::ConfigName(measured.config).c_str(),
                     measured.status.ok() ? measured.milliseconds : -1.0);
      }
      runs.push_back({ShapeName(problem) + " autotuned", tuned->best});
    }
  }
  return runs;
}

absl::Status Run(const Flags& flags) {
  absl::StatusOr<runtime::PrimaryContext> context =
      runtime::PrimaryContext::Retain(0);
  if (!context.ok()) return context.status();
  if (absl::Status s = context->SetCurrent(); !s.ok()) return s;
  absl::StatusOr<runtime::DeviceProperties> device =
      runtime::GetDeviceProperties(0);
  if (!device.ok()) return device.status();
  absl::StatusOr<GemmTarget> target =
      runtime::KernelTargetOf(*device, kGemmFamily);
  if (!target.ok()) return target.status();
  const Table table(flags.csv);
  std::fprintf(table.notes(), "device: %s, %d SMs, L2 %d MiB; mode %s\n",
               device->name.c_str(), device->sm_count, device->l2_bytes >> 20,
               flags.grouped ? "grouped" : flags.mode.c_str());
  if (flags.grouped) {
    // bf16 unless --dtype names the types.
    const std::vector<ptx::ScalarType> dtypes =
        flags.dtypes_given
            ? flags.dtypes
            : std::vector<ptx::ScalarType>{ptx::ScalarType::kBF16};
    for (ptx::ScalarType dtype : dtypes) {
      GroupedBenchFlags grouped;
      grouped.element = dtype;
      grouped.scaling = flags.scaling;
      grouped.repeats = flags.repeats;
      grouped.csv = flags.csv;
      grouped.alternatives = flags.configs;
      if (absl::Status ran = RunGroupedSuite(grouped, stdout, table.notes());
          !ran.ok()) {
        return ran;
      }
    }
    return absl::OkStatus();
  }
  Roofline roofline;
  std::optional<CopyProbe> copies;
  if (flags.mode != "launch") {
    absl::StatusOr<CopyProbe> probe = CopyProbe::Create();
    if (!probe.ok()) return probe.status();
    copies.emplace(*std::move(probe));
    absl::StatusOr<Roofline> measured = MeasureRoofline(*device, *copies);
    if (!measured.ok()) return measured.status();
    roofline = *measured;
    PrintRooflineNotes(roofline, table.notes());
  }
  std::fprintf(table.notes(), "\n");
  if (flags.mode == "launch") {
    table.Header({"shape", "dtype", "config", "peer", ">ptxgen host us/call",
                  ">peer host us/call"});
  } else {
    table.Header({"step / shape", "dtype", "layout", "epilogue", "config",
                  ">ptxgen ms", ">TFLOP/s", "peer", ">peer ms", ">TFLOP/s",
                  ">ratio", ">rel. error", "bound", ">floor ms", ">of floor",
                  ">copy ms", ">of copy"});
  }
  std::vector<double> ratios;
  std::vector<Row> rows;
  int within_five_percent = 0, compared = 0;
  // --mode=pingpong: the heuristic's time over ping-pong's, per row pair.
  std::vector<double> pingpong_gains;
  for (ptx::ScalarType element : flags.dtypes) {
    std::vector<GemmProblem> shapes = flags.shapes;
    if (flags.mode == "ladder") shapes = {{8192, 8192, 8192}};
    for (GemmProblem shape : shapes) {
      shape = Typed(shape, element, flags);
      for (const Variant& variant : flags.Variants()) {
        const GemmProblem problem = WithVariant(shape, variant);
        absl::StatusOr<Peer> peer = Peer::Create(problem, variant);
        if (absl::IsUnimplemented(peer.status())) {
          // Rows need a peer in the same process: none, no row.
          std::fprintf(table.notes(), "skipped %s %s: %s\n",
                       ShapeName(problem).c_str(), TypesName(problem).c_str(),
                       std::string(peer.status().message()).c_str());
          continue;
        }
        if (!peer.ok()) return peer.status();
        absl::StatusOr<Operands> operands =
            MakeOperands(problem, device->l2_bytes, *peer);
        if (!operands.ok()) return operands.status();
        if (flags.mode == "launch") {
          if (absl::Status s =
                  PrintLaunchRow(problem, HeuristicConfig(problem, *target),
                                 *peer, *operands, table);
              !s.ok()) {
            return s;
          }
          continue;
        }
        absl::StatusOr<std::vector<std::pair<std::string, gen::GemmConfig>>>
            runs = ConfigsToMeasure(flags, problem, *target);
        if (!runs.ok()) return runs.status();
        // Times relative to the peer's beside them: rows measured a minute
        // apart see different clocks on a power-limited GPU, the ratio much
        // less so.
        std::vector<double> relative_times;
        absl::StatusOr<double> copy_ms =
            copies->Milliseconds(static_cast<size_t>(FloorBytes(problem) / 2));
        if (!copy_ms.ok()) return copy_ms.status();
        for (const auto& [label, config] : *runs) {
          absl::StatusOr<Row> row =
              Measure(label, problem, variant, config, *peer, *operands,
                      flags.repeats, flags.nvrtc_flags);
          if (!row.ok()) {
            std::fprintf(table.notes(), "failed: %s %s %s %s %s: %s\n",
                         label.c_str(),
                         std::string(ptx::PtxName(element)).c_str(),
                         LayoutName(variant).c_str(), variant.epilogue->name,
                         gen::ConfigName(config).c_str(),
                         std::string(row.status().message()).c_str());
            continue;
          }
          row->copy_ms = *copy_ms;
          PrintRow(*row, roofline, table);
          rows.push_back(*row);
          relative_times.push_back(row->ms / row->peer_ms);
          if (flags.mode != "ladder" && flags.mode != "configs") {
            ratios.push_back(row->peer_ms / row->ms);
          }
        }
        if (flags.mode == "pingpong" && relative_times.size() == 2) {
          pingpong_gains.push_back(relative_times[0] / relative_times[1]);
        }
        if (flags.mode == "compare" && relative_times.size() == 2) {
          ++compared;
          if (relative_times[0] <= 1.05 * relative_times[1])
            ++within_five_percent;
        }
      }
    }
  }
  if (flags.Variants().size() > 1) {
    std::fprintf(
        table.notes(),
        "\nptxgen's time in each variant against the shape's first variant:\n");
    PrintVariantCosts(rows, table.notes());
  }
  if (!ratios.empty()) {
    double log_sum = 0, worst = 1e30;
    for (double r : ratios) {
      log_sum += std::log(r);
      worst = std::min(worst, r);
    }
    std::fprintf(
        table.notes(),
        "\ngeometric mean ratio (peer time / ptxgen time) over %zu rows: "
        "%.3f; lowest %.3f\n",
        ratios.size(), std::exp(log_sum / ratios.size()), worst);
  }
  if (!pingpong_gains.empty()) {
    double log_sum = 0;
    int faster = 0;
    for (double gain : pingpong_gains) {
      log_sum += std::log(gain);
      if (gain > 1) ++faster;
    }
    std::fprintf(table.notes(),
                 "ping-pong faster than the heuristic's pick on %d of %zu "
                 "rows; geometric mean speed-up %.3f\n",
                 faster, pingpong_gains.size(),
                 std::exp(log_sum / pingpong_gains.size()));
  }
  if (compared > 0) {
    std::fprintf(
        table.notes(),
        "heuristic within 5%% of the autotuned best: %d of %d shapes\n",
        within_five_percent, compared);
  }
  if (!rows.empty()) {
    // A blank line ends the Markdown table where no summary above did.
    if (ratios.empty()) std::fprintf(table.notes(), "\n");
    PrintFloorSummary(rows, roofline, table.notes());
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ptxgen::gemm

int main(int argc, char** argv) {
  absl::StatusOr<ptxgen::gemm::Flags> flags =
      ptxgen::gemm::ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::cerr << "gemm_bench: " << flags.status().message() << "\n";
    return 2;
  }
  if (flags->help) {
    std::cout << ptxgen::gemm::Usage();
    return 0;
  }
  if (absl::Status status = ptxgen::gemm::Run(*flags); !status.ok()) {
    std::cerr << "gemm_bench: " << status << "\n";
    return 1;
  }
  return 0;
}
