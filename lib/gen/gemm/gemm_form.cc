// What a GEMM kernel computes: operand layouts, types and epilogue ops.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ptxgen/gen/gemm.h"
#include "ptxgen/ptx/wgmma.h"

namespace ptxgen::gen {
namespace {

struct ScalingSpec {
  GemmScaling scaling;
  absl::string_view name;
};

constexpr ScalingSpec kScalingSpecs[] = {
    {GemmScaling::kNone, "none"},
    {GemmScaling::kTensor, "tensor"},
    {GemmScaling::kBlock, "block"},
};

struct GroupingSpec {
  GemmGrouping grouping;
  absl::string_view name;
};

constexpr GroupingSpec kGroupingSpecs[] = {
    {GemmGrouping::kNone, "none"},
    {GemmGrouping::kContiguous, "contiguous"},
    {GemmGrouping::kMasked, "masked"},
};

// A form name's "+<grouping>_groups".
constexpr absl::string_view kGroupsSuffix = "_groups";

bool IsIntegerOutput(ptx::ScalarType type) {
  return type == ptx::ScalarType::kS8 || type == ptx::ScalarType::kS32;
}

// What C and the bias may be, and D beside fp8.
bool IsEpilogueInputType(ptx::ScalarType type) {
  return type == ptx::ScalarType::kF16 || type == ptx::ScalarType::kBF16 ||
         type == ptx::ScalarType::kF32;
}

// D's type beside the epilogue's: an fp8 D, or an s8 or s32 one from
// integer inputs (IntegerOutputRule).
bool IsOutputType(ptx::ScalarType type) {
  return IsEpilogueInputType(type) || ptx::IsFp8(type) || IsIntegerOutput(type);
}

// Integer inputs give an exact s32 D (the sums as wgmma adds them: nothing
// applied to them), an s8 D (alpha times the sums, rounded with
// saturation) or a float D; float inputs give no integer D.
absl::Status IntegerOutputRule(const GemmForm& form) {
  if (!IsIntegerOutput(form.output)) return absl::OkStatus();
  if (!ptx::IsInt8(form.element)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GEMM: an ", ptx::PtxName(form.output),
        " D comes from s8/u8 inputs, not ", ptx::PtxName(form.element)));
  }
  if (form.output == ptx::ScalarType::kS32 &&
      (form.bias != BiasAlong::kNone || form.activation != Activation::kNone ||
       form.records_amax)) {
    return absl::InvalidArgumentError(
        "GEMM: an s32 D is the exact sums (alpha 1, no bias, activation or "
        "amax); an s8, 16-bit or f32 D takes them");
  }
  return absl::OkStatus();
}

// Block scales change every 128 of k, so each stage's sums are promoted
// (multiplied by their scales on the way into f32); D has no scale of its
// own to take an fp8 D's range from.
absl::Status BlockScalingRule(const GemmForm& form) {
  if (form.scaling != GemmScaling::kBlock) return absl::OkStatus();
  if (form.fast_accumulation) {
    return absl::InvalidArgumentError(
        "GEMM: block scaling promotes every 128-k block's sums through their "
        "scales: no fast accumulation");
  }
  if (!IsEpilogueInputType(form.output)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GEMM: a block-scaled GEMM writes an f16, bf16 or f32 D, not ",
        ptx::PtxName(form.output),
        " (there is no scale_d beside block scales)"));
  }
  return absl::OkStatus();
}

// A grouped GEMM's groups are not a strided batch; each stores its rows of
// D [rows, n] (the rows are the group's), with a bias per group along n.
absl::Status GroupingRule(const GemmForm& form) {
  if (GroupingName(form.grouping) == "unknown") {
    return absl::InvalidArgumentError(
        "GEMM: the grouping is none, contiguous or masked");
  }
  if (!IsGrouped(form)) return absl::OkStatus();
  if (form.batched) {
    return absl::InvalidArgumentError(
        "GEMM: a grouped GEMM's groups are not a strided batch (batched and "
        "grouped exclude each other)");
  }
  if (form.d_transposed) {
    return absl::InvalidArgumentError(
        "GEMM: a grouped GEMM stores D [rows, n], not transposed");
  }
  if (form.bias == BiasAlong::kM) {
    return absl::InvalidArgumentError(
        "GEMM: a grouped GEMM's bias runs along n, one per group (its rows "
        "belong to the groups)");
  }
  // Its groups start at any row: an MN-major A's TMA boxes would start
  // there along their contiguous dimension, off the 16 bytes TMA needs
  // (the kernel faulted on the H200).
  if (form.grouping == GemmGrouping::kContiguous &&
      form.a_major == ptx::MajorOrder::kMN) {
    return absl::InvalidArgumentError(
        "GEMM: a contiguous grouped GEMM's A is K-major ([m, k]): its groups "
        "start at any row, where an MN-major A's TMA boxes would start off "
        "16-byte boundaries (a masked one's A may be MN-major)");
  }
  return absl::OkStatus();
}

absl::string_view MajorLetter(ptx::MajorOrder major) {
  return major == ptx::MajorOrder::kK ? "k" : "m";
}

absl::StatusOr<ptx::MajorOrder> ParseMajorLetter(char letter) {
  if (letter == 'k') return ptx::MajorOrder::kK;
  if (letter == 'm') return ptx::MajorOrder::kMN;
  return absl::InvalidArgumentError(absl::StrCat(
      "a major order is k or m, not '", std::string(1, letter), "'"));
}

// "f16.km" (or "e4m3xe5m2.kk") -> the input types and the majors of A and B.
absl::Status ParseInputs(absl::string_view text, GemmForm& form) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  if (parts.size() != 2 || parts[1].size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is not <element>[x<B element>].<A major><B major>"));
  }
  const std::vector<absl::string_view> types = absl::StrSplit(parts[0], 'x');
  if (types.size() > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", parts[0], "' names more than two input types"));
  }
  absl::StatusOr<ptx::ScalarType> element = ptx::ParseScalarType(types[0]);
  if (!element.ok()) return element.status();
  if (types.size() == 2) {
    absl::StatusOr<ptx::ScalarType> b_element = ptx::ParseScalarType(types[1]);
    if (!b_element.ok()) return b_element.status();
    form.b_element = *b_element;
  }
  absl::StatusOr<ptx::MajorOrder> a = ParseMajorLetter(parts[1][0]);
  if (!a.ok()) return a.status();
  absl::StatusOr<ptx::MajorOrder> b = ParseMajorLetter(parts[1][1]);
  if (!b.ok()) return b.status();
  form.element = *element;
  form.a_major = *a;
  form.b_major = *b;
  return absl::OkStatus();
}

// One "+op" of FormName: "c", "bias_m.f32", "gelu", "batched", "d_transposed".
absl::Status ParseEpilogueOp(absl::string_view op, GemmForm& form) {
  if (op == "c") {
    form.reads_c = true;
  } else if (op == "batched") {
    form.batched = true;
  } else if (op == "d_transposed") {
    form.d_transposed = true;
  } else if (op == "tensor_scaled") {
    form.scaling = GemmScaling::kTensor;
  } else if (op == "block_scaled") {
    form.scaling = GemmScaling::kBlock;
  } else if (absl::ConsumeSuffix(&op, kGroupsSuffix)) {
    absl::StatusOr<GemmGrouping> grouping = ParseGrouping(op);
    if (!grouping.ok()) return grouping.status();
    form.grouping = *grouping;
  } else if (op == "fast_accum") {
    form.fast_accumulation = true;
  } else if (op == "amax") {
    form.records_amax = true;
  } else if (absl::StartsWith(op, "bias_m.") ||
             absl::StartsWith(op, "bias_n.")) {
    absl::StatusOr<ptx::ScalarType> type = ptx::ParseScalarType(op.substr(7));
    if (!type.ok()) return type.status();
    form.bias = op[5] == 'm' ? BiasAlong::kM : BiasAlong::kN;
    form.bias_type = *type;
  } else {
    absl::StatusOr<Activation> activation = ParseActivation(op);
    if (!activation.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", op,
          "' is not c, bias_m.<type>, bias_n.<type>, batched, "
          "d_transposed, tensor_scaled, block_scaled, fast_accum, amax, "
          "contiguous_groups, masked_groups or an activation"));
    }
    form.activation = *activation;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GemmForm> ParseFormName(absl::string_view name) {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM form '", name, "': ", why));
  };
  const size_t arrow = name.find("->");
  if (arrow == absl::string_view::npos)
    return refuse("no '->' before the output type");
  GemmForm form;
  if (absl::Status inputs = ParseInputs(name.substr(0, arrow), form);
      !inputs.ok()) {
    return refuse(inputs.message());
  }
  const std::vector<absl::string_view> rest =
      absl::StrSplit(name.substr(arrow + 2), '+');
  absl::StatusOr<ptx::ScalarType> output = ptx::ParseScalarType(rest[0]);
  if (!output.ok()) return refuse(output.status().message());
  form.output = *output;
  for (size_t i = 1; i < rest.size(); ++i) {
    if (absl::Status op = ParseEpilogueOp(rest[i], form); !op.ok()) {
      return refuse(op.message());
    }
  }
  if (FormName(form) != name) {
    return refuse(absl::StrCat("write it as '", FormName(form),
                               "' (its canonical name)"));
  }
  if (absl::Status valid = ValidateGemmForm(form); !valid.ok()) return valid;
  return form;
}

bool GemmForm::operator==(const GemmForm& other) const {
  return FormName(*this) == FormName(other);
}

std::string FormName(const GemmForm& form) {
  std::string name = std::string(ptx::PtxName(form.element));
  if (form.b_element)
    absl::StrAppend(&name, "x", ptx::PtxName(*form.b_element));
  absl::StrAppend(&name, ".", MajorLetter(form.a_major),
                  MajorLetter(form.b_major), "->", ptx::PtxName(form.output));
  if (form.reads_c) absl::StrAppend(&name, "+c");
  if (form.bias != BiasAlong::kNone) {
    absl::StrAppend(&name, form.bias == BiasAlong::kM ? "+bias_m." : "+bias_n.",
                    ptx::PtxName(form.bias_type));
  }
  if (form.activation != Activation::kNone) {
    absl::StrAppend(&name, "+", ActivationName(form.activation));
  }
  if (form.batched) absl::StrAppend(&name, "+batched");
  if (form.d_transposed) absl::StrAppend(&name, "+d_transposed");
  if (form.scaling == GemmScaling::kTensor) {
    absl::StrAppend(&name, "+tensor_scaled");
  }
  if (form.scaling == GemmScaling::kBlock) {
    absl::StrAppend(&name, "+block_scaled");
  }
  if (form.fast_accumulation) absl::StrAppend(&name, "+fast_accum");
  if (form.records_amax) absl::StrAppend(&name, "+amax");
  if (IsGrouped(form)) {
    absl::StrAppend(&name, "+", GroupingName(form.grouping), kGroupsSuffix);
  }
  return name;
}

ptx::ScalarType BElement(const GemmForm& form) {
  return form.b_element.value_or(form.element);
}

bool PromotesAccumulators(const GemmForm& form) {
  return ptx::IsFp8(form.element) && !form.fast_accumulation;
}

ptx::ScalarType AccumulatorType(const GemmForm& form) {
  return ptx::IsInt8(form.element) ? ptx::ScalarType::kS32
                                   : ptx::ScalarType::kF32;
}

ptx::ScalarType DefaultOutput(ptx::ScalarType element) {
  if (ptx::IsFp8(element)) return ptx::ScalarType::kBF16;
  if (ptx::IsInt8(element)) return ptx::ScalarType::kS32;
  if (element == ptx::ScalarType::kTF32) return ptx::ScalarType::kF32;
  return element;
}

GemmForm SwappedForm(const GemmForm& form) {
  GemmForm swapped = form;
  if (form.b_element) {
    swapped.element = *form.b_element;
    swapped.b_element = form.element;
  }
  swapped.a_major = form.b_major;
  swapped.b_major = form.a_major;
  if (form.bias != BiasAlong::kNone) {
    swapped.bias = form.bias == BiasAlong::kM ? BiasAlong::kN : BiasAlong::kM;
  }
  swapped.d_transposed = !form.d_transposed;
  return swapped;
}

GemmForm KernelForm(const GemmTileShape& tile, const GemmForm& form) {
  return tile.swap_ab ? SwappedForm(form) : form;
}

GemmForm PlainForm(ptx::ScalarType element) {
  GemmForm form;
  form.element = element;
  form.output = DefaultOutput(element);
  return form;
}

int GemmMapRank(const GemmForm& form, GemmMapOperand operand) {
  switch (form.grouping) {
    case GemmGrouping::kContiguous:
      return operand == GemmMapOperand::kB ? 3 : 2;
    case GemmGrouping::kMasked:
      return 3;
    case GemmGrouping::kNone:
      break;
  }
  return form.batched ? 3 : 2;
}

bool HasEpilogueOps(const GemmForm& form) {
  return form.reads_c || form.bias != BiasAlong::kNone ||
         form.activation != Activation::kNone;
}

BlockScales BlockScalesOf(int64_t m, int64_t n, int64_t k, int64_t batch) {
  BlockScales scales;
  scales.k_blocks = (k + kScaleBlock - 1) / kScaleBlock;
  scales.n_blocks = (n + kScaleBlock - 1) / kScaleBlock;
  scales.a_count = batch * scales.k_blocks * m;
  scales.b_count = batch * scales.n_blocks * scales.k_blocks;
  return scales;
}

bool TmaStoreComputes(const GemmForm& form) {
  return ptx::SizeInBytes(form.output) == 2 && !form.d_transposed;
}

absl::Status ValidateGemmForm(const GemmForm& form) {
  if (absl::Status element = CheckGemmElement(form.element); !element.ok()) {
    return element;
  }
  auto refuse = [&](absl::string_view rule) {
    return absl::InvalidArgumentError(absl::StrCat("GEMM: ", rule));
  };
  const bool mixes_within_a_family =
      form.b_element &&
      ((ptx::IsFp8(form.element) && ptx::IsFp8(*form.b_element)) ||
       (ptx::IsInt8(form.element) && ptx::IsInt8(*form.b_element)));
  if (form.b_element &&
      (!mixes_within_a_family || *form.b_element == form.element)) {
    return refuse(absl::StrCat(
        "A and B differ in type only as e4m3 with e5m2 (fp8) or s8 with u8, "
        "not ",
        ptx::PtxName(form.element), " with ", ptx::PtxName(*form.b_element),
        "; write one type when they are the same"));
  }
  if (ScalingName(form.scaling) == "unknown") {
    return refuse("the scaling is none, per tensor or per block");
  }
  if (!ptx::IsFp8(form.element) &&
      (form.scaling != GemmScaling::kNone || form.fast_accumulation)) {
    return refuse(absl::StrCat(
        "per-tensor or block scales and fast accumulation are for fp8 "
        "inputs, not ",
        ptx::PtxName(form.element), " (scale by alpha)"));
  }
  if (absl::Status block = BlockScalingRule(form); !block.ok()) return block;
  if (!IsOutputType(form.output)) {
    return refuse(absl::StrCat(
        "the output type must be f16, bf16, f32, e4m3, e5m2, s8 or s32, not ",
        ptx::PtxName(form.output)));
  }
  if (absl::Status integer = IntegerOutputRule(form); !integer.ok()) {
    return integer;
  }
  if (!IsEpilogueInputType(form.output) && form.reads_c) {
    return refuse(absl::StrCat("an ", ptx::PtxName(form.output),
                               " D takes no C (beta 0; or a 16-bit or f32 D: "
                               "C is read in D's type)"));
  }
  for (ptx::MajorOrder major : {form.a_major, form.b_major}) {
    if (major != ptx::MajorOrder::kK && major != ptx::MajorOrder::kMN) {
      return refuse("a major order must be K or MN");
    }
  }
  // wgmma reads MN-major tiles (transposes) of 16-bit types only.
  if ((form.a_major == ptx::MajorOrder::kMN ||
       form.b_major == ptx::MajorOrder::kMN) &&
      !ptx::WgmmaSupportsTranspose(form.element)) {
    return refuse(
        absl::StrCat("MN-major operands need f16 or bf16 inputs "
                     "(wgmma transposes no other type; store ",
                     ptx::PtxName(form.element), " operands K-major)"));
  }
  if (form.bias != BiasAlong::kNone && form.bias != BiasAlong::kM &&
      form.bias != BiasAlong::kN) {
    return refuse("the bias runs along m or n, or there is none");
  }
  if (form.bias != BiasAlong::kNone && !IsEpilogueInputType(form.bias_type)) {
    return refuse(absl::StrCat("the bias must be f16, bf16 or f32, not ",
                               ptx::PtxName(form.bias_type)));
  }
  if (ActivationName(form.activation) == "unknown") {
    return refuse("unknown activation");
  }
  return GroupingRule(form);
}

absl::string_view ScalingName(GemmScaling scaling) {
  for (const ScalingSpec& spec : kScalingSpecs) {
    if (spec.scaling == scaling) return spec.name;
  }
  return "unknown";
}

absl::string_view GroupingName(GemmGrouping grouping) {
  for (const GroupingSpec& spec : kGroupingSpecs) {
    if (spec.grouping == grouping) return spec.name;
  }
  return "unknown";
}

absl::StatusOr<GemmGrouping> ParseGrouping(absl::string_view name) {
  std::vector<absl::string_view> names;
  for (const GroupingSpec& spec : kGroupingSpecs) {
    if (spec.name == name) return spec.grouping;
    names.push_back(spec.name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("grouping '", name, "': expected ",
                   absl::StrJoin(names, ", "), " (exactly, in lower case)"));
}

absl::StatusOr<GemmScaling> ParseScaling(absl::string_view name) {
  std::vector<absl::string_view> names;
  for (const ScalingSpec& spec : kScalingSpecs) {
    if (spec.name == name) return spec.scaling;
    names.push_back(spec.name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("scaling '", name, "': expected ",
                   absl::StrJoin(names, ", "), " (exactly, in lower case)"));
}

}  // namespace ptxgen::gen
