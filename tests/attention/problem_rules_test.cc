// The attention problem model as a specification: what
// ValidateAttentionProblem refuses, each rule by a status naming it; the
// problems it accepts (GQA and MQA, seq 1, ragged lengths, both layouts,
// head dims 16..256, variable lengths, padded and interleaved strides);
// what Resolved fills in; and what StoredSpans says a caller allocates.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ptxgen/attention/attention.h"
#include "ptxgen/attention/problem.h"

namespace ptxgen::attention {
namespace {

using ptx::ScalarType;

constexpr Layout kBshd = Layout::kBatchSeqHeadDim;
constexpr Layout kBhsd = Layout::kBatchHeadSeqDim;
constexpr int64_t kMax = kMaxAttentionDimension;

// Two sequences of 256 rows, 8 query heads sharing 2 K/V heads (GQA 4:1),
// head_dim 128, bf16, [batch, seq, heads, dim] packed.
AttentionProblem Base() {
  AttentionProblem p;
  p.batch = 2;
  p.heads_q = 8;
  p.heads_kv = 2;
  p.seq_q = p.seq_k = 256;
  p.head_dim = 128;
  return p;
}

// Base() with variable lengths: 3 sequences of at most 256 rows, 600 rows
// of Q and 700 of K allocated.
AttentionProblem Varlen() {
  AttentionProblem p = Base();
  p.batch = 3;
  p.variable_lengths = true;
  p.total_q = 600;
  p.total_k = 700;
  return p;
}

// ---------------------------------------------------------------------------
// Problems the kernels cannot take, each refused by a status naming the rule
// problem.h states.

struct Refusal {
  std::string what;
  AttentionProblem problem;
  std::vector<std::string> message_parts;  // each in the status's message
};

std::vector<Refusal> Refusals() {
  std::vector<Refusal> refusals;
  auto add_to = [&](AttentionProblem p, std::string what,
                    const std::function<void(AttentionProblem&)>& change,
                    std::vector<std::string> parts) {
    change(p);
    refusals.push_back({std::move(what), p, std::move(parts)});
  };
  auto add = [&](std::string what,
                 const std::function<void(AttentionProblem&)>& change,
                 std::vector<std::string> parts) {
    add_to(Base(), std::move(what), change, std::move(parts));
  };
  auto add_varlen = [&](std::string what,
                        const std::function<void(AttentionProblem&)>& change,
                        std::vector<std::string> parts) {
    add_to(Varlen(), std::move(what), change, std::move(parts));
  };
  // Sizes: 1..2^31-1, the kernel's int.
  add("batch = 0", [](AttentionProblem& p) { p.batch = 0; },
      {"batch=0 is outside 1..2147483647"});
  add("heads_q = -1", [](AttentionProblem& p) { p.heads_q = -1; },
      {"heads_q=-1 is outside 1..2147483647"});
  add("heads_kv = -2", [](AttentionProblem& p) { p.heads_kv = -2; },
      {"heads_kv=-2 is outside 1..2147483647"});
  add("seq_q = 0", [](AttentionProblem& p) { p.seq_q = 0; },
      {"seq_q=0 is outside 1..2147483647"});
  add("seq_k = 2^31", [](AttentionProblem& p) { p.seq_k = kMax + 1; },
      {"seq_k=2147483648 is outside 1..2147483647"});
  add("head_dim unset", [](AttentionProblem& p) { p.head_dim = 0; },
      {"head_dim=0 is outside 1..2147483647"});
  // GQA and MQA: query heads in equal groups per K/V head.
  add("8 query heads over 3 K/V heads",
      [](AttentionProblem& p) { p.heads_kv = 3; },
      {"heads_q=8 must be a multiple of heads_kv=3"});
  add("more K/V heads than query heads",
      [](AttentionProblem& p) {
        p.heads_q = 2;
        p.heads_kv = 8;
      },
      {"heads_q=2 must be a multiple of heads_kv=8"});
  // head_dim: wgmma's K step, the accumulator's registers.
  add("head_dim 72", [](AttentionProblem& p) { p.head_dim = 72; },
      {"head_dim=72 must be a multiple of 16 and at most 256"});
  add("head_dim 8", [](AttentionProblem& p) { p.head_dim = 8; },
      {"head_dim=8 must be a multiple of 16"});
  add("head_dim 272", [](AttentionProblem& p) { p.head_dim = 272; },
      {"head_dim=272 must be a multiple of 16 and at most 256"});
  // The element type.
  add("e4m3, the stretch not generated yet",
      [](AttentionProblem& p) { p.element = ScalarType::kE4M3; },
      {"e4m3", "not generated yet", "f16 or bf16"});
  add("f32 inputs", [](AttentionProblem& p) { p.element = ScalarType::kF32; },
      {"element must be f16 or bf16, not f32"});
  add("s8 inputs", [](AttentionProblem& p) { p.element = ScalarType::kS8; },
      {"element must be f16 or bf16, not s8"});
  add("an element outside the enumeration",
      [](AttentionProblem& p) { p.element = static_cast<ScalarType>(42); },
      {"element must be f16 or bf16, not unknown"});
  add("a layout outside the enumeration",
      [](AttentionProblem& p) { p.layout = static_cast<Layout>(7); },
      {"layout=7 is not a Layout"});
  // The scale: the online softmax's maximum is taken before scaling.
  add("scale 0", [](AttentionProblem& p) { p.scale = 0.0f; },
      {"scale=0 must be finite and positive"});
  add("a negative scale", [](AttentionProblem& p) { p.scale = -0.125f; },
      {"scale=-0.125 must be finite and positive"});
  add("a NaN scale",
      [](AttentionProblem& p) {
        p.scale = std::numeric_limits<float>::quiet_NaN();
      },
      {"scale=nan must be finite and positive"});
  add("an infinite scale",
      [](AttentionProblem& p) {
        p.scale = std::numeric_limits<float>::infinity();
      },
      {"scale=inf must be finite and positive"});
  // The kernel takes scale * log2(e) in f32 (ScaleLog2): it must be finite.
  add("a scale whose base-2 form is infinite",
      [](AttentionProblem& p) { p.scale = 3e38f; },
      {"scale=3e+38 is too large", "scale * log2(e)", "would be infinite"});
  // Variable lengths: packed [total, heads, dim] only, with their totals.
  add("totals with fixed lengths", [](AttentionProblem& p) { p.total_q = 512; },
      {"total_q and total_k", "leave them 0 with fixed lengths"});
  add_varlen("variable lengths [batch, heads, seq, dim]",
             [](AttentionProblem& p) { p.layout = kBhsd; },
             {"[total, heads, dim]", "layout must be kBatchSeqHeadDim"});
  add_varlen("variable lengths without total_q",
             [](AttentionProblem& p) { p.total_q = 0; },
             {"total_q=0 is outside 1..2147483647"});
  add_varlen("variable lengths past int32 offsets",
             [](AttentionProblem& p) { p.total_k = kMax + 1; },
             {"total_k=2147483648 is outside 1..2147483647", "int32 offsets"});
  add_varlen("a longest sequence of more rows than Q has",
             [](AttentionProblem& p) { p.seq_q = p.total_q + 1; },
             {"seq_q=", "(the longest sequence) is more than total_q=",
              "the rows Q and O have in all"});
  add_varlen("a longest sequence of more rows than K has",
             [](AttentionProblem& p) { p.seq_k = 4096; },
             {"seq_k=4096 (the longest sequence) is more than total_k=",
              "the rows K and V have in all"});
  add_varlen("variable lengths with a batch stride",
             [](AttentionProblem& p) { p.k_stride.batch = 700 * 2 * 128; },
             {"k_stride.batch=179200 must be 0", "no batch stride"});
  // Strides: each past what is inside it.
  add("Q's heads overlapping",
      [](AttentionProblem& p) { p.q_stride.head = 64; },
      {"q_stride.head=64 is less than the span of the head_dim inside it "
       "(128 elements): Q's heads would overlap"});
  add("K's rows overlapping", [](AttentionProblem& p) { p.k_stride.seq = 128; },
      {"k_stride.seq=128 is less than the span of the heads and head_dim "
       "inside it (256 elements): K's rows would overlap"});
  add("V's sequences overlapping",
      [](AttentionProblem& p) { p.v_stride.batch = 256 * 2 * 128 - 8; },
      {"v_stride.batch=65528 is less than the span of the rows, heads and "
       "head_dim inside it (65536 elements): V's sequences would overlap"});
  add("a negative stride", [](AttentionProblem& p) { p.o_stride.seq = -1024; },
      {"o_stride.seq=-1024 is less than", "O's rows would overlap"});
  add("[batch, heads, seq, dim] rows overlapping",
      [](AttentionProblem& p) {
        p.layout = kBhsd;
        p.q_stride.seq = 120;
      },
      {"q_stride.seq=120 is less than the span of the head_dim inside it "
       "(128 elements)"});
  add("[batch, heads, seq, dim] heads overlapping",
      [](AttentionProblem& p) {
        p.layout = kBhsd;
        p.k_stride.head = 255 * 128;
      },
      {"k_stride.head=32640 is less than the span of the rows and head_dim "
       "inside it (32768 elements): K's heads would overlap"});
  add("strides nested against the layout",
      [](AttentionProblem& p) {
        p.q_stride.head = 256 * 128;  // [batch, heads, seq, dim]'s
        p.q_stride.seq = 128;
      },
      {"q_stride.seq=128 is less than the span of the heads and head_dim "
       "inside it (229504 elements)"});
  add("inner dimensions spanning more than int64_t",
      [](AttentionProblem& p) {
        p.layout = kBhsd;
        p.batch = 1;
        p.seq_q = kMax;
        p.q_stride.seq = p.q_stride.head = int64_t{1} << 38;
      },
      {"q_stride.head=274877906944 is less than the span of the rows and "
       "head_dim inside it (more than 2^63-1 elements)"});
  // Strides: TMA's rules.
  add("a 264-byte head stride",
      [](AttentionProblem& p) { p.q_stride.head = 132; },
      {"q_stride.head=132 steps 264 bytes",
       "each of Q's heads to start on a 16-byte boundary",
       "a multiple of 8 elements"});
  add("an f16 row stride of 2056 bytes",
      [](AttentionProblem& p) {
        p.element = ScalarType::kF16;
        p.o_stride.seq = 8 * 128 + 4;
      },
      {"o_stride.seq=1028 steps 2056 bytes", "O's rows", "16-byte boundary"});
  add("a batch stride of 2^40 bytes",
      [](AttentionProblem& p) { p.k_stride.batch = int64_t{1} << 39; },
      {"k_stride.batch=549755813888 must be below 2^40 bytes"});
  add("the largest stride",
      [](AttentionProblem& p) {
        p.v_stride.head = std::numeric_limits<int64_t>::max();
      },
      {"v_stride.head=9223372036854775807 must be below 2^40 bytes"});
  // A packed stride is named as the caller wrote it (0), with its value.
  add("a packed batch stride of 2^40 bytes",
      [](AttentionProblem& p) { p.seq_q = (int64_t{1} << 40) / (8 * 128 * 2); },
      {"q_stride.batch (0: packed, 549755813888 elements) must be below 2^40 "
       "bytes"});
  // No element offset wraps.
  add("Q spanning more than int64_t",
      [](AttentionProblem& p) {
        p.batch = kMax;
        p.q_stride.batch = (int64_t{1} << 39) - 8;
      },
      {"Q spans more than 2^63-1 elements"});
  return refusals;
}

TEST(AttentionRules, ValidateRefusesNamingTheRule) {
  for (const Refusal& refusal : Refusals()) {
    const absl::Status status = ValidateAttentionProblem(refusal.problem);
    ASSERT_FALSE(status.ok()) << refusal.what << " was accepted";
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << refusal.what;
    EXPECT_TRUE(absl::StartsWith(status.message(), "attention: "))
        << refusal.what << ": " << status;
    for (const std::string& part : refusal.message_parts) {
      EXPECT_NE(status.message().find(part), absl::string_view::npos)
          << refusal.what << ": \"" << part << "\" is not in: " << status;
    }
  }
}

// ---------------------------------------------------------------------------
// Problems the kernels take: every one accepted, with spans a caller can
// allocate.

std::vector<std::pair<std::string, AttentionProblem>> Accepted() {
  std::vector<std::pair<std::string, AttentionProblem>> accepted;
  auto add_to = [&](AttentionProblem p, std::string what,
                    const std::function<void(AttentionProblem&)>& change) {
    change(p);
    accepted.emplace_back(std::move(what), p);
  };
  auto add = [&](std::string what,
                 const std::function<void(AttentionProblem&)>& change) {
    add_to(Base(), std::move(what), change);
  };
  auto add_varlen = [&](std::string what,
                        const std::function<void(AttentionProblem&)>& change) {
    add_to(Varlen(), std::move(what), change);
  };
  add("GQA 4:1", [](AttentionProblem&) {});
  add("GQA 8:1", [](AttentionProblem& p) {
    p.heads_q = 64;
    p.heads_kv = 8;
  });
  add("MQA", [](AttentionProblem& p) {
    p.heads_q = 32;
    p.heads_kv = 1;
  });
  add("MHA, heads_kv left 0", [](AttentionProblem& p) { p.heads_kv = 0; });
  add("seq 1", [](AttentionProblem& p) { p.seq_q = p.seq_k = 1; });
  add("one query row over 4097 keys, causal", [](AttentionProblem& p) {
    p.seq_q = 1;
    p.seq_k = 4097;
    p.causal = true;
  });
  add("ragged lengths, more queries than keys, causal",
      [](AttentionProblem& p) {
        p.seq_q = 1000;
        p.seq_k = 777;
        p.causal = true;
      });
  add("ragged lengths, [batch, heads, seq, dim]", [](AttentionProblem& p) {
    p.layout = kBhsd;
    p.seq_q = 333;
    p.seq_k = 1025;
  });
  for (const int64_t head_dim : {16, 64, 80, 96, 128, 192, 256}) {
    for (const Layout layout : {kBshd, kBhsd}) {
      for (const ScalarType element : {ScalarType::kF16, ScalarType::kBF16}) {
        add(absl::StrCat("head_dim ", head_dim, ", layout ",
                         static_cast<int>(layout), ", ", ptx::PtxName(element)),
            [=](AttentionProblem& p) {
              p.head_dim = head_dim;
              p.layout = layout;
              p.element = element;
            });
      }
    }
  }
  add("an explicit scale", [](AttentionProblem& p) { p.scale = 0.5f; });
  add("a scale of 1e38, finite in base 2 too",
      [](AttentionProblem& p) { p.scale = 1e38f; });
  add_varlen("variable lengths", [](AttentionProblem& p) { p.causal = true; });
  add_varlen("variable lengths, one sequence of all the rows",
             [](AttentionProblem& p) {
               p.seq_q = p.total_q = 100;
               p.seq_k = p.total_k = 1;
             });
  // Q, K and V as views of one [batch, seq, 3, heads, dim] tensor, as a
  // fused QKV projection leaves them.
  auto interleaved = [](AttentionProblem& p) {
    p.heads_kv = p.heads_q;
    for (Strides* s : {&p.q_stride, &p.k_stride, &p.v_stride}) {
      s->head = p.head_dim;
      s->seq = 3 * p.heads_q * p.head_dim;
      if (!p.variable_lengths) s->batch = p.seq_q * s->seq;
    }
  };
  add("interleaved QKV", interleaved);
  add_varlen("interleaved QKV, variable lengths", [&](AttentionProblem& p) {
    p.total_k = p.total_q;
    interleaved(p);
  });
  add("padded rows, [batch, heads, seq, dim]", [](AttentionProblem& p) {
    p.layout = kBhsd;
    p.k_stride.seq = 136;
  });
  add("a batch stride just below 2^40 bytes",
      [](AttentionProblem& p) { p.k_stride.batch = (int64_t{1} << 39) - 8; });
  add("the longest sequence", [](AttentionProblem& p) {
    p.batch = p.heads_q = p.heads_kv = 1;
    p.seq_k = kMax;
    p.head_dim = 16;
  });
  return accepted;
}

TEST(AttentionRules, LegalProblemsAreAcceptedAndSpanned) {
  for (const auto& [what, problem] : Accepted()) {
    EXPECT_TRUE(ValidateAttentionProblem(problem).ok())
        << what << ": " << ValidateAttentionProblem(problem);
    const absl::StatusOr<AttentionSpans> spans = StoredSpans(problem);
    ASSERT_TRUE(spans.ok()) << what << ": " << spans.status();
    for (const int64_t span : {spans->q, spans->k, spans->v, spans->o}) {
      EXPECT_GE(span, problem.head_dim) << what;
    }
    EXPECT_GE(spans->lse, 1) << what;
  }
}

// ---------------------------------------------------------------------------
// Resolution: packed strides by the layout, heads_kv, the scale.

TEST(AttentionResolved, PackedStridesFollowTheLayout) {
  AttentionProblem p = Base();
  p.seq_k = 300;
  const AttentionProblem bshd = Resolved(p);
  EXPECT_EQ(bshd.q_stride.head, 128);
  EXPECT_EQ(bshd.q_stride.seq, 8 * 128);
  EXPECT_EQ(bshd.q_stride.batch, 256 * 8 * 128);
  EXPECT_EQ(bshd.k_stride.head, 128);
  EXPECT_EQ(bshd.k_stride.seq, 2 * 128);
  EXPECT_EQ(bshd.k_stride.batch, 300 * 2 * 128);
  p.layout = kBhsd;
  const AttentionProblem bhsd = Resolved(p);
  EXPECT_EQ(bhsd.o_stride.seq, 128);
  EXPECT_EQ(bhsd.o_stride.head, 256 * 128);
  EXPECT_EQ(bhsd.o_stride.batch, 8 * 256 * 128);
  EXPECT_EQ(bhsd.v_stride.seq, 128);
  EXPECT_EQ(bhsd.v_stride.head, 300 * 128);
  EXPECT_EQ(bhsd.v_stride.batch, 2 * 300 * 128);
}

TEST(AttentionResolved, ExplicitStridesAreKept) {
  AttentionProblem p = Base();
  p.q_stride = {1 << 20, 4096, 256};
  const AttentionProblem r = Resolved(p);
  EXPECT_EQ(r.q_stride.batch, 1 << 20);
  EXPECT_EQ(r.q_stride.seq, 4096);
  EXPECT_EQ(r.q_stride.head, 256);
  EXPECT_EQ(r.k_stride.seq, 2 * 128);  // the others still packed
}

// A packed stride steps over the padded rows of an explicit one inside it.
TEST(AttentionResolved, PackedStridesStepOverExplicitInnerOnes) {
  AttentionProblem p = Base();
  p.layout = kBhsd;
  p.k_stride.seq = 136;
  const AttentionProblem r = Resolved(p);
  EXPECT_EQ(r.k_stride.head, 256 * 136);
  EXPECT_EQ(r.k_stride.batch, 2 * 256 * 136);
  EXPECT_EQ(r.v_stride.head, 256 * 128);
}

// The offsets place each sequence: no batch stride to fill.
TEST(AttentionResolved, VariableLengthsHaveNoBatchStride) {
  const AttentionProblem r = Resolved(Varlen());
  for (const Strides& s : {r.q_stride, r.k_stride, r.v_stride, r.o_stride}) {
    EXPECT_EQ(s.batch, 0);
  }
  EXPECT_EQ(r.q_stride.seq, 8 * 128);
  EXPECT_EQ(r.k_stride.seq, 2 * 128);
}

TEST(AttentionResolved, ScaleDefaultsToOneOverSqrtHeadDim) {
  AttentionProblem p = Base();
  EXPECT_FLOAT_EQ(*Resolved(p).scale, 1.0f / std::sqrt(128.0f));
  p.head_dim = 80;
  EXPECT_FLOAT_EQ(*Resolved(p).scale, 1.0f / std::sqrt(80.0f));
  p.scale = 0.25f;
  EXPECT_EQ(*Resolved(p).scale, 0.25f);
}

TEST(AttentionResolved, HeadsKvDefaultsToHeadsQ) {
  AttentionProblem p = Base();
  p.heads_kv = 0;
  EXPECT_EQ(Resolved(p).heads_kv, 8);
  EXPECT_EQ(Resolved(p).k_stride.seq, 8 * 128);
}

TEST(AttentionResolved, ResolvingTwiceChangesNothing) {
  for (const auto& [what, problem] : Accepted()) {
    const AttentionProblem once = Resolved(problem);
    const AttentionProblem twice = Resolved(once);
    EXPECT_EQ(twice.heads_kv, once.heads_kv) << what;
    EXPECT_EQ(twice.scale, once.scale) << what;
    for (const auto& [a, b] : {std::pair{once.q_stride, twice.q_stride},
                               {once.k_stride, twice.k_stride},
                               {once.v_stride, twice.v_stride},
                               {once.o_stride, twice.o_stride}}) {
      EXPECT_EQ(a.batch, b.batch) << what;
      EXPECT_EQ(a.seq, b.seq) << what;
      EXPECT_EQ(a.head, b.head) << what;
    }
  }
}

// ---------------------------------------------------------------------------
// Spans: what a caller allocates for each tensor.

TEST(AttentionSpans, PackedTensorsSpanTheirElements) {
  AttentionProblem p = Base();
  p.seq_k = 300;
  for (const Layout layout : {kBshd, kBhsd}) {
    p.layout = layout;
    const absl::StatusOr<AttentionSpans> spans = StoredSpans(p);
    ASSERT_TRUE(spans.ok()) << spans.status();
    EXPECT_EQ(spans->q, 2 * 256 * 8 * 128);
    EXPECT_EQ(spans->o, 2 * 256 * 8 * 128);
    EXPECT_EQ(spans->k, 2 * 300 * 2 * 128);
    EXPECT_EQ(spans->v, 2 * 300 * 2 * 128);
    EXPECT_EQ(spans->lse, 2 * 8 * 256);  // [batch, heads_q, seq_q]
  }
}

// From the first element to past the last: the gaps between rows and
// sequences count, the padding after the last row does not.
TEST(AttentionSpans, PaddedTensorsSpanToTheirLastElement) {
  AttentionProblem p = Base();
  p.q_stride = {300 * 1024, 1024 + 64, 128};
  const absl::StatusOr<AttentionSpans> spans = StoredSpans(p);
  ASSERT_TRUE(spans.ok()) << spans.status();
  EXPECT_EQ(spans->q, 1 * 300 * 1024 + 255 * (1024 + 64) + 7 * 128 + 128);
  EXPECT_EQ(spans->o, 2 * 256 * 8 * 128);
}

TEST(AttentionSpans, VariableLengthsSpanTheAllocatedRows) {
  const absl::StatusOr<AttentionSpans> spans = StoredSpans(Varlen());
  ASSERT_TRUE(spans.ok()) << spans.status();
  EXPECT_EQ(spans->q, 600 * 8 * 128);
  EXPECT_EQ(spans->o, 600 * 8 * 128);
  EXPECT_EQ(spans->k, 700 * 2 * 128);
  EXPECT_EQ(spans->v, 700 * 2 * 128);
  EXPECT_EQ(spans->lse, 8 * 600);  // [heads_q, total_q]
}

// Past int64_t a span is refused, naming the tensor, rather than wrapped.
TEST(AttentionSpans, ASpanPastInt64IsRefusedNotWrapped) {
  AttentionProblem p = Base();
  p.batch = 3;
  p.v_stride.batch = std::numeric_limits<int64_t>::max() / 2 + 1;
  absl::StatusOr<AttentionSpans> spans = StoredSpans(p);
  ASSERT_FALSE(spans.ok());
  EXPECT_EQ(spans.status().message(),
            "attention: V spans more than 2^63-1 elements");
  // Overlapping rows keep Q small; its LSE, one float a row, is not.
  p = Base();
  p.batch = p.heads_q = p.heads_kv = p.seq_q = kMax;
  p.q_stride = p.k_stride = p.v_stride = p.o_stride = {8, 8, 8};
  spans = StoredSpans(p);
  ASSERT_FALSE(spans.ok());
  EXPECT_EQ(spans.status().message(),
            "attention: the LSE spans more than 2^63-1 elements");
}

// ---- Where the operands lie ----

constexpr CUdeviceptr kMemory = 0x7f0000000000;

// Base()'s tensors 16 MiB apart (each spans 1 MiB of bf16).
AttentionOperands ApartOperands() {
  AttentionOperands o;
  o.q = kMemory;
  o.k = kMemory + (16 << 20);
  o.v = kMemory + (32 << 20);
  o.o = kMemory + (48 << 20);
  o.lse = kMemory + (64 << 20);
  return o;
}

// O or the LSE sharing memory with another operand is refused, naming
// both: out=k, out=q, the LSE inside O, the offsets inside O.
TEST(AttentionOutputsApart, AnOutputSharingAnotherOperandsMemoryIsRefused) {
  EXPECT_TRUE(CheckOutputsApart(Base(), ApartOperands()).ok());
  const struct {
    const char* what;
    std::function<void(AttentionProblem&, AttentionOperands&)> change;
    const char* message;
  } refused[] = {
      {"out=k", [](AttentionProblem&, AttentionOperands& o) { o.o = o.k; },
       "attention: O (at 0x7f0001000000) shares memory with K (at "
       "0x7f0001000000)"},
      {"out=q", [](AttentionProblem&, AttentionOperands& o) { o.o = o.q; },
       "O (at 0x7f0000000000) shares memory with Q"},
      {"the LSE in O",
       [](AttentionProblem&, AttentionOperands& o) { o.lse = o.o + 4096; },
       "O (at 0x7f0003000000) shares memory with the LSE"},
      {"the LSE in V",
       [](AttentionProblem&, AttentionOperands& o) { o.lse = o.v + 256; },
       "the LSE (at 0x7f0002000100) shares memory with V"},
      {"cu_seqlens_q in O",
       [](AttentionProblem& p, AttentionOperands& o) {
         p.batch = 3;
         p.variable_lengths = true;
         p.total_q = 600;
         p.total_k = 700;
         o.cu_seqlens_q = o.o + 16;
         o.cu_seqlens_k = kMemory + (80 << 20);
       },
       "O (at 0x7f0003000000) shares memory with cu_seqlens_q"},
  };
  for (const auto& r : refused) {
    AttentionProblem problem = Base();
    AttentionOperands operands = ApartOperands();
    r.change(problem, operands);
    const absl::Status status = CheckOutputsApart(problem, operands);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << r.what << ": " << status;
    EXPECT_TRUE(absl::StrContains(status.message(), r.message))
        << r.what << ": " << status;
  }
}

// Q, K, V and O as views of one [batch, seq, 4, heads, dim] buffer: they
// interleave without touching, and pass; no LSE is nothing to check.
TEST(AttentionOutputsApart, HeadsOfOneBufferThatDoNotTouchPass) {
  AttentionProblem p = Base();
  p.heads_kv = 8;
  for (Strides* s : {&p.q_stride, &p.k_stride, &p.v_stride, &p.o_stride}) {
    s->head = 128;
    s->seq = 4 * 8 * 128;
    s->batch = 256 * 4 * 8 * 128;
  }
  AttentionOperands o;
  o.q = kMemory;
  o.k = kMemory + 8 * 128 * 2;
  o.v = kMemory + 2 * 8 * 128 * 2;
  o.o = kMemory + 3 * 8 * 128 * 2;
  EXPECT_TRUE(CheckOutputsApart(p, o).ok()) << CheckOutputsApart(p, o);
  o.o = o.v + 2;
  EXPECT_FALSE(CheckOutputsApart(p, o).ok());
}

}  // namespace
}  // namespace ptxgen::attention
