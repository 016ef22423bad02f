// The layer-1 statement builders (include/ptxgen/ptx/*.h) fed with fuzzed
// field values, and the renderer. Input (text), one request per line:
//   wgmma N A B D ss|rs SCALE_A SCALE_B TRANS_A TRANS_B SATFINITE
//   wait N | pin D N | coord THREAD INDEX N
//   tma_load RANK MULTICAST HINT | tma_store RANK HINT | tma_prefetch RANK HINT
//   bulk_wait N READ_ONLY | rank N
//   setmaxnreg inc|dec COUNT | stmatrix MATRICES TRANSPOSE
//   cvt TYPE | cvt_pack TYPE | type NAME | swizzle NAME
//   fixed NAME (a statement without parameters: fence, commit, mbarrier_init,
//   ...)
// A line may end in " | role=name,name role=name": names to render with
// (which may be refused, never crash). Types are PTX names or integers (a
// cast enumerator). Invariants: every builder agrees with its validator and
// with the documented ranges; every statement a builder returns renders as
// inline asm and as PTX with one name per slot, the same text each time;
// the accumulator layout is separable and inside the 64xN tile; parsed names
// print back to themselves.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "fuzz/fuzz_support.h"
#include "ptxgen/ptx/convert.h"
#include "ptxgen/ptx/fragment_layout.h"
#include "ptxgen/ptx/global_flag.h"
#include "ptxgen/ptx/mbarrier.h"
#include "ptxgen/ptx/named_barrier.h"
#include "ptxgen/ptx/scalar_type.h"
#include "ptxgen/ptx/statement.h"
#include "ptxgen/ptx/swizzle.h"
#include "ptxgen/ptx/tma.h"
#include "ptxgen/ptx/warp_specialization.h"
#include "ptxgen/ptx/wgmma.h"

namespace {

namespace ptx = ptxgen::ptx;
using ptxgen::fuzz::IntegerWord;
using Words = std::vector<absl::string_view>;

ptx::ScalarType TypeWord(const Words& words, size_t index) {
  if (index < words.size()) {
    if (absl::StatusOr<ptx::ScalarType> type =
            ptx::ParseScalarType(words[index]);
        type.ok()) {
      return *type;
    }
  }
  return static_cast<ptx::ScalarType>(IntegerWord<int>(words, index, 0));
}

bool BoolWord(const Words& words, size_t index) {
  return IntegerWord<int>(words, index, 0) != 0;
}

// Renders `statement` with one name per slot (must succeed, twice the
// same), then with the fuzzed `names` (may be refused).
void CheckRenders(const ptx::Statement& statement,
                  const ptx::OperandNames& names) {
  ptx::OperandNames expressions, registers;
  for (const ptx::Slot& slot : statement.slots()) {
    FUZZ_CHECK(slot.count >= 1 && !slot.role.empty(), statement.description(),
               ": slot '", slot.role, "' of ", slot.count, " registers");
    expressions[slot.role] = {slot.role};
    registers[slot.role] = {absl::StrCat("%", slot.role)};
  }
  const absl::StatusOr<std::string> asm_text =
      ptx::RenderInlineAsm(statement, expressions);
  FUZZ_CHECK(asm_text.ok(), statement.description(),
             ": inline asm refused: ", asm_text.status().message());
  FUZZ_CHECK(absl::StartsWith(*asm_text, "asm volatile(") &&
                 absl::EndsWith(*asm_text, ");"),
             statement.description(), ": not an asm statement: ", *asm_text);
  FUZZ_CHECK(*ptx::RenderInlineAsm(statement, expressions) == *asm_text,
             statement.description(), ": two renderings differ");
  const absl::StatusOr<std::string> ptx_text =
      ptx::RenderPtx(statement, registers);
  FUZZ_CHECK(ptx_text.ok(), statement.description(),
             ": PTX refused: ", ptx_text.status().message());
  FUZZ_CHECK(*ptx::RenderPtx(statement, registers) == *ptx_text,
             statement.description(), ": two PTX renderings differ");
  if (!names.empty()) {
    (void)ptx::RenderInlineAsm(statement, names);
    (void)ptx::RenderPtx(statement, names);
  }
}

void CheckBuilt(const absl::StatusOr<ptx::Statement>& statement, bool legal,
                const ptx::OperandNames& names, absl::string_view line) {
  FUZZ_CHECK(statement.ok() == legal, "'", line, "': the builder ",
             statement.ok() ? "accepted" : "refused", " what the rules ",
             legal ? "allow" : "forbid", ": ",
             statement.ok() ? "" : statement.status().message());
  if (!statement.ok()) {
    FUZZ_CHECK(!statement.status().message().empty(), "'", line,
               "': refused without a reason");
    return;
  }
  CheckRenders(*statement, names);
}

void CheckWgmma(const Words& words, const ptx::OperandNames& names,
                absl::string_view line) {
  ptx::WgmmaMma mma;
  mma.n = IntegerWord<int>(words, 1, 0);
  mma.a_type = TypeWord(words, 2);
  mma.b_type = TypeWord(words, 3);
  mma.d_type = TypeWord(words, 4);
  mma.a_source = words.size() > 5 && words[5] == "rs"
                     ? ptx::WgmmaASource::kRegisters
                     : ptx::WgmmaASource::kSharedMemory;
  mma.scale_a = IntegerWord<int>(words, 6, 1);
  mma.scale_b = IntegerWord<int>(words, 7, 1);
  mma.transpose_a = BoolWord(words, 8);
  mma.transpose_b = BoolWord(words, 9);
  mma.satfinite = BoolWord(words, 10);
  const absl::Status valid = ptx::ValidateWgmma(mma);
  const absl::StatusOr<ptx::Statement> statement = ptx::WgmmaMmaAsync(mma);
  CheckBuilt(statement, valid.ok(), names, line);
  if (!statement.ok()) return;
  FUZZ_CHECK(
      ptx::IsLegalWgmmaN(mma.a_type, mma.n) && ptx::WgmmaK(mma.a_type).ok(),
      "'", line, "': an illegal N or input type was accepted");
  const ptx::Slot* d = statement->FindSlot("d");
  FUZZ_CHECK(d != nullptr &&
                 d->count == ptx::WgmmaAccumulatorRegisters(mma.d_type, mma.n),
             "'", line, "': the accumulator slot disagrees with ",
             ptx::WgmmaAccumulatorRegisters(mma.d_type, mma.n), " registers");
  const absl::StatusOr<ptx::Statement> pin =
      ptx::WgmmaAccumulatorPin(mma.d_type, mma.n);
  FUZZ_CHECK(pin.ok() && pin->FindSlot("d") != nullptr &&
                 pin->FindSlot("d")->count == d->count,
             "'", line, "': the accumulator pin disagrees");
}

void CheckCoordinate(const Words& words) {
  const int thread = IntegerWord<int>(words, 1, 0);
  const int index = IntegerWord<int>(words, 2, 0);
  const int n = IntegerWord<int>(words, 3, 256);
  if (thread < 0 || thread >= 128 ||
      !ptx::IsLegalWgmmaN(ptx::ScalarType::kF16, n) || index < 0 ||
      index >= ptx::WgmmaAccumulatorRegisters(ptx::ScalarType::kF32, n)) {
    return;
  }
  ptx::WgmmaMma mma;
  mma.n = n;
  const absl::StatusOr<ptx::AccumulatorFragment> fragment =
      ptx::AccumulatorFragment::Of(mma);
  FUZZ_CHECK(fragment.ok(), "no accumulator fragment for N=", n, ": ",
             fragment.status().message());
  const ptx::FragmentCoordinate c = *fragment->Coordinate(thread, index);
  const ptx::FragmentCoordinate t = *fragment->Coordinate(thread, 0);
  const ptx::FragmentCoordinate i = *fragment->Coordinate(0, index);
  FUZZ_CHECK(
      c.row >= 0 && c.row < ptx::kWgmmaM && c.column >= 0 && c.column < n,
      "thread ", thread, " register ", index, " of N=", n, " holds (", c.row,
      ", ", c.column, ")");
  FUZZ_CHECK(c.row == t.row + i.row && c.column == t.column + i.column,
             "the accumulator layout is not separable at thread ", thread,
             " register ", index);
}

const std::map<std::string, std::function<ptx::Statement()>>&
FixedStatements() {
  static const auto* const fixed = new std::map<
      std::string, std::function<ptx::Statement()>>{
      {"fence", ptx::WgmmaFence},
      {"commit", ptx::WgmmaCommitGroup},
      {"bulk_commit", ptx::CpAsyncBulkCommitGroup},
      {"prefetch_map", ptx::PrefetchTensorMap},
      {"proxy_fence", ptx::FenceProxyAsyncSharedCta},
      {"mbarrier_init", ptx::MbarrierInit},
      {"arrive", [] { return ptx::MbarrierArrive(ptx::MbarrierScope::kCta); }},
      {"arrive_cluster",
       [] { return ptx::MbarrierArrive(ptx::MbarrierScope::kCluster); }},
      {"arrive_relaxed",
       [] { return ptx::MbarrierArrive(ptx::MbarrierScope::kClusterRelaxed); }},
      {"expect_tx", ptx::MbarrierArriveExpectTx},
      {"try_wait", [] { return ptx::MbarrierTryWaitParity(); }},
      {"try_wait_cluster",
       [] {
         return ptx::MbarrierTryWaitParity(ptx::MbarrierWaitScope::kCluster);
       }},
      {"inval", ptx::MbarrierInval},
      {"fence_init", ptx::FenceMbarrierInit},
      {"elect", ptx::ElectSync},
      {"cluster_arrive",
       [] {
         return ptx::BarrierClusterArrive(ptx::ClusterArriveOrdering::kRelease);
       }},
      {"cluster_arrive_relaxed",
       [] {
         return ptx::BarrierClusterArrive(ptx::ClusterArriveOrdering::kRelaxed);
       }},
      {"cluster_wait", ptx::BarrierClusterWait},
      {"cluster_rank", ptx::ClusterCtaRank},
      {"mapa", ptx::MapaSharedCluster},
      {"ld_cluster", ptx::LoadSharedClusterF32x4},
      {"named_barrier", ptx::NamedBarrierSync},
      {"store_release", ptx::StoreReleaseGpu},
      {"load_acquire", ptx::LoadAcquireGpu},
  };
  return *fixed;
}

// "role=a,b role2=c" -> names.
ptx::OperandNames ParseNames(absl::string_view text) {
  ptx::OperandNames names;
  for (absl::string_view item : ptxgen::fuzz::Words(text)) {
    const std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    std::vector<std::string>& list = names[std::string(parts.first)];
    for (absl::string_view name : absl::StrSplit(parts.second, ',')) {
      list.emplace_back(name);
    }
  }
  return names;
}

void CheckLine(absl::string_view line) {
  const std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(line, absl::MaxSplits(" | ", 1));
  const Words words = ptxgen::fuzz::Words(parts.first);
  if (words.empty()) return;
  const ptx::OperandNames names = ParseNames(parts.second);
  const absl::string_view op = words[0];
  const int number = IntegerWord<int>(words, 1, 0);
  if (op == "wgmma") {
    CheckWgmma(words, names, line);
  } else if (op == "wait") {
    CheckBuilt(ptx::WgmmaWaitGroup(number),
               number >= 0 && number <= ptx::kMaxWgmmaPendingGroups, names,
               line);
  } else if (op == "pin") {
    const ptx::ScalarType d = TypeWord(words, 1);
    const int n = IntegerWord<int>(words, 2, 0);
    const absl::StatusOr<ptx::Statement> pin = ptx::WgmmaAccumulatorPin(d, n);
    if (pin.ok()) CheckRenders(*pin, names);
  } else if (op == "coord") {
    CheckCoordinate(words);
  } else if (op == "tma_load") {
    ptx::TensorLoad load;
    load.rank = number;
    load.multicast = BoolWord(words, 2);
    load.l2_cache_hint = BoolWord(words, 3);
    CheckBuilt(ptx::CpAsyncBulkTensorLoad(load),
               ptx::ValidateTensorRank(number).ok(), names, line);
  } else if (op == "tma_store") {
    ptx::TensorStore store;
    store.rank = number;
    store.l2_cache_hint = BoolWord(words, 2);
    CheckBuilt(ptx::CpAsyncBulkTensorStore(store),
               ptx::ValidateTensorRank(number).ok(), names, line);
  } else if (op == "tma_prefetch") {
    ptx::TensorPrefetch prefetch;
    prefetch.rank = number;
    prefetch.l2_cache_hint = BoolWord(words, 2);
    CheckBuilt(ptx::CpAsyncBulkPrefetchTensor(prefetch),
               ptx::ValidateTensorRank(number).ok(), names, line);
  } else if (op == "rank") {
    FUZZ_CHECK(
        ptx::ValidateTensorRank(number).ok() ==
            (number >= ptx::kMinTensorRank && number <= ptx::kMaxTensorRank),
        "rank ", number);
  } else if (op == "bulk_wait") {
    CheckBuilt(ptx::CpAsyncBulkWaitGroup(number, BoolWord(words, 2)),
               number >= 0 && number <= ptx::kMaxBulkPendingGroups, names,
               line);
  } else if (op == "setmaxnreg") {
    const int count = IntegerWord<int>(words, 2, 0);
    const bool legal = count >= ptx::kMinMaxNReg && count <= ptx::kMaxMaxNReg &&
                       count % 8 == 0;
    FUZZ_CHECK(ptx::ValidateMaxNReg(count).ok() == legal, "setmaxnreg ", count);
    CheckBuilt(ptx::SetMaxNReg(words.size() > 1 && words[1] == "dec"
                                   ? ptx::RegisterAdjustment::kDecrease
                                   : ptx::RegisterAdjustment::kIncrease,
                               count),
               legal, names, line);
  } else if (op == "stmatrix") {
    ptx::StMatrix stmatrix;
    stmatrix.matrices = number;
    stmatrix.transpose = BoolWord(words, 2);
    CheckBuilt(ptx::StMatrixSharedB16(stmatrix),
               number == 1 || number == 2 || number == 4, names, line);
  } else if (op == "cvt" || op == "cvt_pack") {
    const ptx::ScalarType to = TypeWord(words, 1);
    CheckBuilt(
        op == "cvt" ? ptx::CvtRoundFromF32(to) : ptx::CvtPackFromF32x2(to),
        ptx::CvtRoundsTo(to), names, line);
  } else if (op == "type" && words.size() > 1) {
    const absl::StatusOr<ptx::ScalarType> type = ptx::ParseScalarType(words[1]);
    if (type.ok()) {
      FUZZ_CHECK(
          ptx::IsKnownScalarType(*type) && ptx::PtxName(*type) == words[1],
          "type '", words[1], "' prints as '", ptx::PtxName(*type), "'");
    }
  } else if (op == "swizzle" && words.size() > 1) {
    const absl::StatusOr<ptx::Swizzle> swizzle = ptx::ParseSwizzle(words[1]);
    if (swizzle.ok()) {
      FUZZ_CHECK(ptx::IsKnownSwizzle(*swizzle) &&
                     ptx::SwizzleName(*swizzle) == words[1],
                 "swizzle '", words[1], "' prints as '",
                 ptx::SwizzleName(*swizzle), "'");
    }
  } else if (op == "fixed" && words.size() > 1) {
    auto it = FixedStatements().find(std::string(words[1]));
    if (it != FixedStatements().end()) CheckRenders(it->second(), names);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (absl::string_view line :
       ptxgen::fuzz::Lines(ptxgen::fuzz::AsText(data, size))) {
    CheckLine(line);
  }
  return 0;
}
