#include "ptxgen/ptx/wgmma.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ptxgen::ptx {
namespace {

// The type families of wgmma inputs; each has one K, one N ladder, one set
// of accumulators and one set of immediates.
enum class Family { kF16, kBF16, kTF32, kFloat8, kInteger8, kNotAnInput };

Family FamilyOf(ScalarType type) {
  switch (type) {
    case ScalarType::kF16:
      return Family::kF16;
    case ScalarType::kBF16:
      return Family::kBF16;
    case ScalarType::kTF32:
      return Family::kTF32;
    case ScalarType::kE4M3:
    case ScalarType::kE5M2:
      return Family::kFloat8;
    case ScalarType::kS8:
    case ScalarType::kU8:
      return Family::kInteger8;
    case ScalarType::kF32:
    case ScalarType::kS32:
      return Family::kNotAnInput;
  }
  return Family::kNotAnInput;
}

constexpr const char* kInputTypes = "f16, bf16, tf32, e4m3, e5m2, s8, u8";

absl::Status Illegal(const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat("wgmma: ", rule));
}

// Legal N as arithmetic runs: the one place the N ladders are written.
struct NRun {
  int first, last, step;
};

std::vector<NRun> LegalNRuns(Family family) {
  switch (family) {
    case Family::kNotAnInput:
      return {};
    case Family::kInteger8:
      return {{kMinWgmmaN, 32, kWgmmaNStep}, {48, kMaxWgmmaN, 16}};
    default:
      return {{kMinWgmmaN, kMaxWgmmaN, kWgmmaNStep}};
  }
}

// "8..256 step 8"; a short run is listed: "8, 16, 24, 32, then 48..256 step
// 16".
std::string LegalNText(Family family) {
  std::vector<std::string> runs;
  for (const NRun& run : LegalNRuns(family)) {
    if ((run.last - run.first) / run.step < 4) {
      std::vector<int> values;
      for (int n = run.first; n <= run.last; n += run.step) values.push_back(n);
      runs.push_back(absl::StrJoin(values, ", "));
    } else {
      runs.push_back(
          absl::StrCat(run.first, "..", run.last, " step ", run.step));
    }
  }
  return absl::StrJoin(runs, ", then ");
}

bool HasScaleImmediates(Family family) { return family != Family::kInteger8; }

bool IsAccumulatorType(ScalarType type) {
  return type == ScalarType::kF16 || type == ScalarType::kF32 ||
         type == ScalarType::kS32;
}

absl::Status ValidateTypes(const WgmmaMma& mma) {
  const Family a = FamilyOf(mma.a_type);
  const Family b = FamilyOf(mma.b_type);
  if (a == Family::kNotAnInput || b == Family::kNotAnInput) {
    return Illegal(absl::StrCat("inputs must be one of ", kInputTypes, " (got ",
                                PtxName(mma.a_type), " x ", PtxName(mma.b_type),
                                ")"));
  }
  if (a != b || (a != Family::kFloat8 && a != Family::kInteger8 &&
                 mma.a_type != mma.b_type)) {
    return Illegal(absl::StrCat(
        "A and B must be the same type, except e4m3/e5m2 and s8/u8 which may "
        "mix within their family (got ",
        PtxName(mma.a_type), " x ", PtxName(mma.b_type), ")"));
  }
  const ScalarType d = mma.d_type;
  switch (a) {
    case Family::kF16:
    case Family::kFloat8:
      if (d == ScalarType::kF16 || d == ScalarType::kF32)
        return absl::OkStatus();
      return Illegal(absl::StrCat(
          PtxName(mma.a_type), " inputs need an f16 or f32 accumulator, not ",
          PtxName(d)));
    case Family::kBF16:
    case Family::kTF32:
      if (d == ScalarType::kF32) return absl::OkStatus();
      return Illegal(absl::StrCat(PtxName(mma.a_type),
                                  " inputs need an f32 accumulator, not ",
                                  PtxName(d)));
    case Family::kInteger8:
      if (d == ScalarType::kS32) return absl::OkStatus();
      return Illegal(absl::StrCat(PtxName(mma.a_type),
                                  " inputs need an s32 accumulator, not ",
                                  PtxName(d)));
    case Family::kNotAnInput:
      break;
  }
  return absl::OkStatus();
}

absl::Status ValidateImmediates(const WgmmaMma& mma) {
  const Family family = FamilyOf(mma.a_type);
  if (!HasScaleImmediates(family) && (mma.scale_a != 1 || mma.scale_b != 1)) {
    return Illegal(absl::StrCat(
        "scale-a/scale-b exist for floating-point inputs only, not ",
        PtxName(mma.a_type)));
  }
  for (int scale : {mma.scale_a, mma.scale_b}) {
    if (scale != 1 && scale != -1) {
      return Illegal(
          absl::StrCat("scale-a/scale-b must be 1 or -1, not ", scale));
    }
  }
  if ((mma.transpose_a || mma.transpose_b) &&
      !WgmmaSupportsTranspose(mma.a_type)) {
    return Illegal(
        absl::StrCat("transpose exists for f16/bf16 inputs only, not ",
                     PtxName(mma.a_type)));
  }
  if (mma.transpose_a && mma.a_source == WgmmaASource::kRegisters) {
    return Illegal(
        "the register-A (RS) form has no transpose-A: A in registers is "
        "always K-major");
  }
  if (mma.satfinite && family != Family::kInteger8) {
    return Illegal(absl::StrCat(
        ".satfinite exists for s8/u8 inputs (s32 accumulator) only, not ",
        PtxName(mma.a_type)));
  }
  return absl::OkStatus();
}

// The operand-type part of the opcode: ".f32.f16.f16" (".s32.s8.u8").
std::string TypeSuffix(const WgmmaMma& mma) {
  return absl::StrCat(".", PtxName(mma.d_type), ".", PtxName(mma.a_type), ".",
                      PtxName(mma.b_type));
}

RegType AccumulatorRegType(ScalarType d_type) {
  if (d_type == ScalarType::kF32) return RegType::kF32;
  return d_type == ScalarType::kS32 ? RegType::kS32 : RegType::kB32;
}

}  // namespace

absl::StatusOr<int> WgmmaK(ScalarType input_type) {
  switch (FamilyOf(input_type)) {
    case Family::kF16:
    case Family::kBF16:
      return 16;
    case Family::kTF32:
      return 8;
    case Family::kFloat8:
    case Family::kInteger8:
      return 32;
    case Family::kNotAnInput:
      break;
  }
  return Illegal(absl::StrCat("inputs must be one of ", kInputTypes, ", not ",
                              PtxName(input_type)));
}

std::vector<int> LegalWgmmaN(ScalarType input_type) {
  std::vector<int> legal;
  for (const NRun& run : LegalNRuns(FamilyOf(input_type))) {
    for (int n = run.first; n <= run.last; n += run.step) legal.push_back(n);
  }
  return legal;
}

bool IsLegalWgmmaN(ScalarType input_type, int n) {
  for (int legal : LegalWgmmaN(input_type)) {
    if (legal == n) return true;
  }
  return false;
}

std::string LegalWgmmaNText(ScalarType input_type) {
  return LegalNText(FamilyOf(input_type));
}

bool WgmmaHasScaleImmediates(ScalarType input_type) {
  return HasScaleImmediates(FamilyOf(input_type));
}

bool WgmmaSupportsTranspose(ScalarType input_type) {
  const Family family = FamilyOf(input_type);
  return family == Family::kF16 || family == Family::kBF16;
}

absl::Status ValidateWgmma(const WgmmaMma& mma) {
  if (mma.a_source != WgmmaASource::kSharedMemory &&
      mma.a_source != WgmmaASource::kRegisters) {
    return Illegal(absl::StrCat("A source ", static_cast<int>(mma.a_source),
                                " is neither shared memory nor registers"));
  }
  if (absl::Status types = ValidateTypes(mma); !types.ok()) return types;
  if (!IsLegalWgmmaN(mma.a_type, mma.n)) {
    return Illegal(
        absl::StrCat("N=", mma.n, " is not legal for ", PtxName(mma.a_type),
                     " inputs (legal N: ", LegalWgmmaNText(mma.a_type), ")"));
  }
  return ValidateImmediates(mma);
}

int WgmmaAccumulatorRegisters(ScalarType d_type, int n) {
  return d_type == ScalarType::kF16 ? n / 4 : n / 2;
}

absl::StatusOr<Statement> WgmmaMmaAsync(const WgmmaMma& mma) {
  if (absl::Status valid = ValidateWgmma(mma); !valid.ok()) return valid;
  const int k = *WgmmaK(mma.a_type);
  const bool registers_a = mma.a_source == WgmmaASource::kRegisters;
  const std::string opcode =
      absl::StrCat("wgmma.mma_async.sync.aligned.m", kWgmmaM, "n", mma.n, "k",
                   k, mma.satfinite ? ".satfinite" : "", TypeSuffix(mma));

  Statement statement(opcode);
  statement.set_touches_memory(true);  // Reads shared memory.
  const int accumulators = WgmmaAccumulatorRegisters(mma.d_type, mma.n);
  const SlotId d = statement.AddSlot("d", AccumulatorRegType(mma.d_type),
                                     Access::kReadWrite, accumulators);
  const SlotId a = registers_a
                       ? statement.AddSlot("a", RegType::kB32, Access::kRead, 4)
                       : statement.AddSlot("a", RegType::kB64, Access::kRead);
  const SlotId b = statement.AddSlot("b", RegType::kB64, Access::kRead);
  const SlotId scale_d =
      statement.AddSlot("scale_d", RegType::kPred, Access::kRead);

  std::vector<Argument> arguments = {
      Vector(Regs(d, accumulators)),
      registers_a ? Vector(Regs(a, 4)) : Plain(Reg(a)),
      Plain(Reg(b)),
      Plain(Reg(scale_d)),
  };
  if (WgmmaHasScaleImmediates(mma.a_type)) {
    arguments.push_back(Plain(Imm(mma.scale_a)));
    arguments.push_back(Plain(Imm(mma.scale_b)));
  }
  if (WgmmaSupportsTranspose(mma.a_type)) {
    if (!registers_a) arguments.push_back(Plain(Imm(mma.transpose_a ? 1 : 0)));
    arguments.push_back(Plain(Imm(mma.transpose_b ? 1 : 0)));
  }
  statement.Emit(opcode, std::move(arguments));
  return statement;
}

Statement WgmmaFence() {
  Statement statement("wgmma.fence");
  statement.set_touches_memory(true);
  statement.Emit("wgmma.fence.sync.aligned", {});
  return statement;
}

Statement WgmmaCommitGroup() {
  Statement statement("wgmma.commit_group");
  statement.set_touches_memory(true);
  statement.Emit("wgmma.commit_group.sync.aligned", {});
  return statement;
}

absl::StatusOr<Statement> WgmmaWaitGroup(int pending_groups) {
  if (pending_groups < 0 || pending_groups > kMaxWgmmaPendingGroups) {
    return Illegal(absl::StrCat("wait_group takes 0..", kMaxWgmmaPendingGroups,
                                " pending groups, not ", pending_groups));
  }
  Statement statement("wgmma.wait_group");
  statement.set_touches_memory(true);
  statement.Emit("wgmma.wait_group.sync.aligned", {Plain(Imm(pending_groups))});
  return statement;
}

absl::StatusOr<Statement> WgmmaAccumulatorPin(ScalarType d_type, int n) {
  if (!IsAccumulatorType(d_type)) {
    return Illegal(absl::StrCat("accumulators are f16, f32 or s32, not ",
                                PtxName(d_type)));
  }
  // Any N some wgmma takes: the f16 family's ladder holds every other one.
  if (!IsLegalWgmmaN(ScalarType::kF16, n)) {
    return Illegal(absl::StrCat("accumulator pin needs N in ",
                                LegalWgmmaNText(ScalarType::kF16), ", not ",
                                n));
  }
  Statement statement("wgmma accumulator pin");
  statement.set_touches_memory(true);
  statement.AddSlot("d", AccumulatorRegType(d_type), Access::kReadWrite,
                    WgmmaAccumulatorRegisters(d_type, n));
  return statement;
}

}  // namespace ptxgen::ptx
