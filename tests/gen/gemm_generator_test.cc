// The GEMM generator: configuration rules and deterministic text. (That the
// kernels compile cleanly is gemm_compile_test's, and the exhaustive tier's:
// README, "Testing".)
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ptxgen/compile/compiler.h"
#include "ptxgen/gen/fill_kernel.h"
#include "ptxgen/gen/gemm.h"

namespace ptxgen::gen {
namespace {

using ptx::ScalarType;

GemmConfig Parse(const std::string& name) {
  absl::StatusOr<GemmConfig> config = ParseConfigName(name);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : GemmConfig{};
}

TEST(GemmConfigTest, NamesRoundTrip) {
  for (const std::string name :
       {"v1 128x128x64", "ws 128x256x64 s4 c2 w1 m2 tma g8 persistent",
        "ws 64x256x64 s6 c1 w0 m1 direct g1 tiles noregs",
        "ws 128x256x64 s3 c2 w1 m2 tma g16 sk persistent",
        "ws 128x256x64 s4 c2 w1 m1 tma e2 g8 persistent",
        "ws 64x128x64 s8 c1 w1 m2 tma hilbert persistent",
        "ws 64x16x64 s8 c1 w1 m1 direct g8 sk persistent swap",
        "ws 128x128x64 s4 c2 w1 m1 tma g8 k2 dsmem persistent",
        "pp 128x128x64 s6 c2 w1 m2 tma e1 g16 persistent"}) {
    EXPECT_EQ(ConfigName(Parse(name)), name);
  }
  EXPECT_EQ(Parse("pp 128x128x64 s6 c2 w1 m1 tma g8 persistent").schedule,
            GemmSchedule::kPingPong);
  EXPECT_FALSE(ParseConfigName("v2 128x128x64").ok());
  EXPECT_FALSE(ParseConfigName("ws 128x128 s4").ok());
  EXPECT_FALSE(ParseConfigName("ws 128x128x64 q4").ok());
}

// Every form's name parses back to the form: golden lists and tools may
// name forms in text. 8-bit and tf32 inputs are K-major only; fp8 also
// mixes types, scales per tensor and accumulates fast.
TEST(GemmFormTest, NamesRoundTrip) {
  int forms = 0;
  for (ScalarType element :
       {ScalarType::kF16, ScalarType::kBF16, ScalarType::kE4M3,
        ScalarType::kE5M2, ScalarType::kTF32}) {
    const bool sixteen_bit = ptx::SizeInBytes(element) == 2;
    const bool fp8 = ptx::SizeInBytes(element) == 1;
    for (ScalarType output :
         {ScalarType::kF16, ScalarType::kBF16, ScalarType::kF32}) {
      for (ptx::MajorOrder a : {ptx::MajorOrder::kK, ptx::MajorOrder::kMN}) {
        for (ptx::MajorOrder b : {ptx::MajorOrder::kK, ptx::MajorOrder::kMN}) {
          const bool k_major = a == ptx::MajorOrder::kK && b == a;
          if (!sixteen_bit && !k_major) continue;
          for (BiasAlong bias :
               {BiasAlong::kNone, BiasAlong::kM, BiasAlong::kN}) {
            for (Activation activation :
                 {Activation::kNone, Activation::kRelu, Activation::kGelu,
                  Activation::kGeluTanh, Activation::kSilu}) {
              for (bool reads_c : {false, true}) {
                GemmForm form;
                form.element = element;
                form.output = output;
                form.a_major = a;
                form.b_major = b;
                form.reads_c = reads_c;
                form.bias = bias;
                form.bias_type = ScalarType::kBF16;
                form.activation = activation;
                form.batched = reads_c && a == b;
                form.d_transposed = !reads_c && a != b;
                if (fp8) {
                  if (reads_c) {
                    form.b_element = element == ScalarType::kE4M3
                                         ? ScalarType::kE5M2
                                         : ScalarType::kE4M3;
                  }
                  form.scaling = bias == BiasAlong::kNone
                                     ? GemmScaling::kNone
                                     : GemmScaling::kTensor;
                  form.fast_accumulation = activation == Activation::kRelu;
                }
                absl::StatusOr<GemmForm> parsed = ParseFormName(FormName(form));
                ASSERT_TRUE(parsed.ok())
                    << FormName(form) << ": " << parsed.status();
                EXPECT_EQ(FormName(*parsed), FormName(form));
                EXPECT_TRUE(*parsed == form) << FormName(form);
                ++forms;
              }
            }
          }
        }
      }
    }
  }
  // Per output type, layout and epilogue: 4 layouts of 16-bit inputs, the
  // K-major one of the others.
  EXPECT_EQ(forms, (2 * 4 + 3) * 3 * 3 * 5 * 2);
}

// An fp8 D (rounded with saturation, scaled by scale_d with per-tensor
// scaling) and the amax of D, which any output type may record.
TEST(GemmFormTest, Fp8OutputsAndTheAmaxRoundTrip) {
  for (const char* name :
       {"e4m3.kk->e4m3", "e4m3.kk->e4m3+tensor_scaled+amax",
        "e4m3xe5m2.kk->e5m2+bias_n.bf16+gelu+fast_accum+amax",
        "bf16.kk->bf16+c+amax", "f16.mk->e4m3+bias_m.f32+d_transposed",
        "tf32.kk->e5m2+batched+amax"}) {
    absl::StatusOr<GemmForm> form = ParseFormName(name);
    ASSERT_TRUE(form.ok()) << name << ": " << form.status();
    EXPECT_EQ(FormName(*form), name);
  }
  EXPECT_TRUE(ParseFormName("e4m3.kk->e4m3+amax")->records_amax);
}

// Integer inputs: s8 and u8 (mixed), an exact s32 D (the default), an s8
// D or a float one through the epilogue's ops; what an integer D cannot
// take is refused by name.
TEST(GemmFormTest, IntegerFormsRoundTripAndTheirLimitsAreNamed) {
  for (const char* name :
       {"s8.kk->s32", "u8xs8.kk->s32+batched", "s8xu8.kk->s8+bias_n.f32+relu",
        "u8.kk->bf16+c+bias_m.bf16+gelu+amax", "s8.kk->f32+d_transposed",
        "s8.kk->s8+amax"}) {
    absl::StatusOr<GemmForm> form = ParseFormName(name);
    ASSERT_TRUE(form.ok()) << name << ": " << form.status();
    EXPECT_EQ(FormName(*form), name);
    EXPECT_EQ(AccumulatorType(*form), ScalarType::kS32) << name;
  }
  EXPECT_EQ(DefaultOutput(ScalarType::kU8), ScalarType::kS32);
  EXPECT_EQ(AccumulatorType(PlainForm(ScalarType::kE4M3)), ScalarType::kF32);
  const std::pair<const char*, const char*> refusals[] = {
      {"f16.kk->s8", "an s8 D comes from s8/u8 inputs, not f16"},
      {"e4m3.kk->s32", "an s32 D comes from s8/u8 inputs, not e4m3"},
      {"s8.kk->s8+c", "an s8 D takes no C"},
      {"s8.kk->s32+c", "an s32 D takes no C"},
      {"s8.kk->s32+bias_n.f32", "an s32 D is the exact sums"},
      {"u8.kk->s32+relu", "an s32 D is the exact sums"},
      {"s8.kk->s32+amax", "an s32 D is the exact sums"},
      {"s8xe4m3.kk->bf16", "s8 with u8, not s8 with e4m3"},
      {"s8.km->s32", "MN-major operands need f16 or bf16"},
      {"u8.kk->s32+tensor_scaled", "for fp8 inputs, not u8"},
      {"s8.kk->u8", "must be f16, bf16, f32, e4m3, e5m2, s8 or s32, not u8"},
  };
  for (const auto& [name, message] : refusals) {
    absl::StatusOr<GemmForm> form = ParseFormName(name);
    ASSERT_FALSE(form.ok()) << name;
    EXPECT_TRUE(absl::StrContains(form.status().message(), message))
        << name << ": " << form.status();
  }
}

// Block scaling (DeepGEMM's recipe) takes fp8 inputs and promotes: no fast
// accumulation, and D f16, bf16 or f32 (no scale_d beside block scales).
TEST(GemmFormTest, BlockScaledFormsRoundTripAndTheirLimitsAreNamed) {
  for (const char* name :
       {"e4m3.kk->bf16+block_scaled", "e4m3xe5m2.kk->f32+block_scaled",
        "e5m2.kk->f16+c+bias_n.bf16+gelu+batched+block_scaled+amax"}) {
    absl::StatusOr<GemmForm> form = ParseFormName(name);
    ASSERT_TRUE(form.ok()) << name << ": " << form.status();
    EXPECT_EQ(FormName(*form), name);
    EXPECT_EQ(form->scaling, GemmScaling::kBlock);
    EXPECT_TRUE(PromotesAccumulators(*form)) << name;
  }
  const std::pair<const char*, const char*> refusals[] = {
      {"e4m3.kk->bf16+block_scaled+fast_accum", "no fast accumulation"},
      {"e4m3.kk->e4m3+block_scaled", "writes an f16, bf16 or f32 D, not e4m3"},
      {"bf16.kk->bf16+block_scaled", "for fp8 inputs, not bf16"},
      {"s8.kk->s32+block_scaled", "for fp8 inputs, not s8"},
  };
  for (const auto& [name, message] : refusals) {
    absl::StatusOr<GemmForm> form = ParseFormName(name);
    ASSERT_FALSE(form.ok()) << name;
    EXPECT_TRUE(absl::StrContains(form.status().message(), message))
        << name << ": " << form.status();
  }
}

TEST(GemmFormTest, GroupedFormsRoundTripAndTheirLimitsAreNamed) {
  for (const char* name : {"bf16.kk->bf16+contiguous_groups",
                           "f16.km->f32+c+bias_n.f32+gelu+masked_groups",
                           "bf16.mm->bf16+masked_groups",
                           "e4m3.kk->bf16+block_scaled+contiguous_groups",
                           "e4m3.kk->bf16+tensor_scaled+amax+masked_groups"}) {
    absl::StatusOr<GemmForm> form = ParseFormName(name);
    ASSERT_TRUE(form.ok()) << name << ": " << form.status();
    EXPECT_EQ(FormName(*form), name);
    EXPECT_TRUE(IsGrouped(*form)) << name;
  }
  const std::pair<const char*, const char*> refusals[] = {
      {"bf16.kk->bf16+batched+contiguous_groups", "not a strided batch"},
      {"bf16.kk->bf16+d_transposed+masked_groups", "stores D [rows, n]"},
      {"bf16.kk->bf16+bias_m.f32+masked_groups", "bias runs along n"},
      {"bf16.mk->bf16+contiguous_groups", "A is K-major"},
  };
  for (const auto& [name, message] : refusals) {
    absl::StatusOr<GemmForm> form = ParseFormName(name);
    ASSERT_FALSE(form.ok()) << name;
    EXPECT_TRUE(absl::StrContains(form.status().message(), message))
        << name << ": " << form.status();
  }
}

// The stored scales: A's per row and 128-k block, B's per 128x128 block,
// the last blocks of k and n ragged, batch after batch.
TEST(GemmFormTest, BlockScalesCountRaggedBlocks) {
  const BlockScales scales = BlockScalesOf(300, 257, 1040, 3);
  EXPECT_EQ(scales.k_blocks, 9);
  EXPECT_EQ(scales.n_blocks, 3);
  EXPECT_EQ(scales.a_count, 3 * 9 * 300);
  EXPECT_EQ(scales.b_count, 3 * 3 * 9);
}

TEST(GemmFormTest, NamesNotWrittenAsFormNameWritesThemAreRefused) {
  const std::pair<const char*, const char*> cases[] = {
      {"f16.kk", "no '->' before the output type"},
      {"f16.k->f16", "is not <element>[x<B element>].<A major><B major>"},
      {"f16.kn->f16", "a major order is k or m, not 'n'"},
      {"f16.kk->f64", "f64"},
      {"f16.kk->f16+bias_n", "'bias_n' is not c, bias_m.<type>"},
      {"e4m3xe5m2xe4m3.kk->bf16", "more than two input types"},
      {"e4m3.kk->bf16+fast_accum+tensor_scaled",
       "e4m3.kk->bf16+tensor_scaled+fast_accum"},
      {"f16.kk->f16+fast_accum", "for fp8 inputs"},
      {"e4m3xe4m3.kk->bf16", "write one type"},
      {"e4m3.mk->bf16", "MN-major operands need f16 or bf16"},
      {"f16.kk->f16+gelu+c", "write it as 'f16.kk->f16+c+gelu'"},
      {"f32.kk->f32",
       "element type must be f16, bf16, e4m3, e5m2, tf32, s8 or u8"},
      {"e4m3.kk->e4m3+c", "an e4m3 D takes no C"},
      {"f16.kk->f16+bias_n.e4m3", "the bias must be f16, bf16 or f32"},
      {"e4m3.kk->bf16+amax+fast_accum", "write it as"},
  };
  for (const auto& [name, message] : cases) {
    absl::StatusOr<GemmForm> form = ParseFormName(name);
    ASSERT_FALSE(form.ok()) << name;
    EXPECT_TRUE(absl::StrContains(form.status().message(), message))
        << form.status();
  }
}

// The swapped kernel computes D^T = op(B).op(A)^T: the operands' majors
// and the bias trade places, D is stored the other way round; a config
// that swaps generates the swapped form's kernel for the form it is given.
TEST(GemmFormTest, SwappingExchangesTheOperandsAndTransposesD) {
  GemmForm form = PlainForm(ScalarType::kF16);
  form.a_major = ptx::MajorOrder::kMN;
  form.bias = BiasAlong::kM;
  form.reads_c = true;
  EXPECT_EQ(FormName(SwappedForm(form)),
            "f16.km->f16+c+bias_n.f32+d_transposed");
  EXPECT_EQ(FormName(SwappedForm(SwappedForm(form))), FormName(form));
  const GemmConfig swap =
      Parse("ws 64x16x64 s8 c1 w1 m1 direct g8 sk persistent swap");
  EXPECT_EQ(FormName(KernelForm(swap, form)), FormName(SwappedForm(form)));
  absl::StatusOr<GeneratedGemm> generated = GenerateGemm(swap, form);
  ASSERT_TRUE(generated.ok()) << generated.status();
  EXPECT_EQ(FormName(generated->form), FormName(form));
  // The module is looked up by the kernel's name: the swapped form's.
  EXPECT_TRUE(absl::StrContains(generated->source,
                                absl::StrCat(generated->kernel_name, "(")))
      << generated->kernel_name;
  EXPECT_TRUE(absl::StrContains(generated->source,
                                "f16.km->f16+c+bias_n.f32+d_transposed"));
  EXPECT_TRUE(
      absl::StrContains(generated->source, "column * destination.ldd + row"));
}

TEST(GemmFormTest, WhatATransposedDCannotTakeIsRefusedByName) {
  GemmForm transposed = PlainForm(ScalarType::kF16);
  transposed.d_transposed = true;
  const std::pair<const char*, const char*> cases[] = {
      {"ws 128x128x64 s4 c2 w1 m1 tma g8 persistent", "16-bit D [m, n]"},
      {"ws 128x128x64 s4 c2 w1 m1 direct g8 k2 persistent", "stored [m, n]"},
  };
  for (const auto& [name, message] : cases) {
    const absl::Status status =
        ValidateGemmConfigForForm(Parse(name), transposed);
    EXPECT_TRUE(absl::StrContains(status.message(), message))
        << name << ": " << status;
  }
  // A swapped config transposes D itself.
  const absl::Status swapped = ValidateGemmConfigForForm(
      Parse("ws 128x128x64 s4 c2 w1 m1 tma g8 persistent swap"),
      PlainForm(ScalarType::kF16));
  EXPECT_TRUE(absl::StrContains(swapped.message(), "16-bit D [m, n]"))
      << swapped;
  const absl::Status v1 = ValidateGemmConfig(
      [] {
        GemmConfig config;
        config.swap_ab = true;
        return config;
      }(),
      ScalarType::kF16);
  EXPECT_TRUE(absl::StrContains(v1.message(), "no split-K, stream-K or swap"))
      << v1;
}

// A name says every option once: no defaults the writer did not choose.
TEST(GemmConfigTest, NamesThatLeaveOutOrRepeatAnOptionAreRefused) {
  const std::pair<const char*, const char*> cases[] = {
      {"ws 128x128x64 ", "empty option"},
      {"ws 128x128x64  s3 c2 w1 m1 tma g8 persistent", "empty option"},
      {"ws 128x128x64", "missing option 's'"},
      {"ws 128x128x64 s3 c2 w1 m1 tma g8", "missing option 'persistent|tiles'"},
      {"ws 128x128x64 s3 s5 c2 w1 m1 tma g8 persistent",
       "option 's' given twice"},
      {"ws 128x128x64 s3 c2 w1 m1 tma g8 persistent tiles",
       "option 'persistent|tiles' given twice"},
      {"ws 128x128x64 s3 c2 w1 m1 tma direct g8 persistent",
       "option 'direct|tma' given twice"},
      {"ws 99999999999x128x64 s3 c2 w1 m1 tma g8 persistent",
       "99999999999 is outside -2147483648..2147483647"},
      {"ws 128x128x64 s3 c2 w1 m1 tma persistent",
       "missing option 'g#|hilbert'"},
      {"ws 128x128x64 s3 c2 w1 m1 tma g8 hilbert persistent",
       "option 'g#|hilbert' given twice"},
  };
  for (const auto& [name, message] : cases) {
    const absl::StatusOr<GemmConfig> config = ParseConfigName(name);
    ASSERT_FALSE(config.ok()) << name;
    EXPECT_TRUE(absl::StrContains(config.status().message(), message))
        << config.status();
  }
}

TEST(GemmConfigTest, ConfigurationsThatCannotFitNameTheLimit) {
  const std::pair<const char*, const char*> cases[] = {
      {"v1 128x256x64", "each consumer thread needs 256 accumulator registers"},
      {"v1 256x256x64", "needs 512 accumulator registers"},
      {"v1 128x128x64 ", "v1 takes only a tile"},
      {"v1 128x128x48", "block_k must make a 32-, 64- or 128-byte row"},
      {"v1 96x128x64", "block_m must be 64, 128, 192 or 256"},
      {"v1 128x120x64", ""},  // 120 is a legal N: accepted
      // 263296 bytes of shared memory: more than an H200 gives a block, but
      // the limit is the target's (plan_test refuses it for one).
      {"ws 128x256x64 s4 c2 w1 m2 tma g8 persistent", ""},
      {"ws 128x256x64 s1 c2 w1 m1 direct g8 persistent", "it needs 2+ stages"},
      {"ws 128x128x64 s4 c3 w1 m1 direct g8 persistent",
       "consumers must be 1, 2 or 4"},
      {"ws 128x200x64 s4 c2 w1 m1 tma g8 persistent",
       "block_n must be a multiple of 64"},
      {"ws 64x256x64 s4 c4 w1 m1 direct g8 persistent", "multiple of 64 rows"},
      {"ws 128x128x64 s4 c2 w1 m1 tma g8 sk tiles",
       "stream-K shares the last wave"},
      {"ws 128x128x64 s4 c2 w1 m1 direct g8 k2 sk persistent", "no split-K"},
      {"ws 128x128x64 s4 c2 w1 m1 direct g33 persistent",
       "raster_group must be 1..32"},
      {"ws 128x128x64 s4 c2 w1 m1 direct g8 dsmem persistent",
       "split_k must be 2..8"},
      {"ws 128x128x64 s4 c2 w1 m1 direct g8 k16 dsmem persistent",
       "split_k must be 2..8"},
      {"ws 128x128x64 s4 c2 w1 m2 tma g8 k2 dsmem persistent",
       "takes no 2-CTA cluster"},
      {"ws 128x128x64 s2 c2 w1 m1 tma g8 k8 dsmem tiles", ""},
      {"pp 128x128x64 s4 c1 w1 m1 direct g8 persistent",
       "ping-pong (pp) alternates two consumer warpgroups: c2"},
      {"pp 128x128x64 s4 c2 w1 m1 direct g8 sk persistent",
       "ping-pong (pp) takes no stream-K"},
      {"pp 128x128x64 s4 c2 w1 m1 direct g8 k2 dsmem persistent",
       "ping-pong (pp) takes no stream-K or split-K meeting in a cluster"},
      {"pp 128x256x64 s3 c2 w1 m1 direct g8 persistent",
       "each consumer thread needs 256 accumulator registers"},
      {"pp 64x128x64 s4 c2 w1 m1 direct g8 k2 persistent", ""},
      {"ws 128x128x64 s4 c2 w1 m1 tma g8 k2 persistent",
       "needs the direct epilogue"},
      {"v1 128x128x64 sk", "v1 takes only a tile"},
      {"ws 128x256x64 s4 c2 w1 m1 direct e2 g8 persistent",
       "e# (64-column chunks staged per TMA-store pass) needs the TMA-store "
       "epilogue"},
      {"ws 128x256x64 s4 c2 w1 m1 tma e3 g8 persistent",
       "must divide the tile's 4 chunk(s) into 2 or more passes"},
      {"ws 128x256x64 s4 c2 w1 m1 tma e4 g8 persistent",
       "leave it out to stage them all"},
      {"ws 128x256x64 s4 c2 w1 m1 tma e0 g8 persistent",
       "e# counts chunks: 1 or more"},
      {"ws 128x256x64 s4 c2 w1 m1 tma g8 persistent", ""},
      {"ws 128x256x64 s4 c2 w1 m1 tma e2 g8 persistent", ""},
  };
  for (const auto& [name, message] : cases) {
    absl::StatusOr<GemmConfig> config = ParseConfigName(name);
    if (!config.ok()) {
      EXPECT_TRUE(absl::StrContains(config.status().message(), message))
          << config.status();
      continue;
    }
    const absl::Status valid = ValidateGemmConfig(*config, ScalarType::kF16);
    if (std::string(message).empty()) {
      EXPECT_TRUE(valid.ok()) << valid;
    } else {
      EXPECT_TRUE(absl::StrContains(valid.message(), message))
          << name << ": " << valid;
    }
  }
  EXPECT_EQ(
      ValidateGemmConfig(Parse("v1 128x128x64"), ScalarType::kF32).message(),
      "GEMM: element type must be f16, bf16, e4m3, e5m2, tf32, s8 or u8, not "
      "f32");
}

// Each field is range-checked before any arithmetic with it: a hostile
// value must not wrap into a legal one (block_k = 64 - 2^31 makes 128 - 2^32
// bytes of f16, 128 in 32 bits), and a value outside an enumeration is not
// read as one of its members.
TEST(GemmConfigTest, HostileFieldsAreRefusedNamingTheirRule) {
  const GemmConfig base = Parse("ws 128x128x64 s3 c2 w1 m1 direct g16 tiles");
  GemmConfig wrapped_k = base;
  wrapped_k.block_k = -2147483584;
  GemmConfig unknown_order = base;
  unknown_order.tile_order = static_cast<TileOrder>(7);
  unknown_order.raster_group = 0;  // what a raster order would divide by
  GemmConfig unknown_epilogue = base;
  unknown_epilogue.epilogue = static_cast<GemmEpilogue>(7);
  GemmConfig unknown_schedule = base;
  unknown_schedule.schedule = static_cast<GemmSchedule>(7);
  const std::pair<GemmConfig, const char*> cases[] = {
      {wrapped_k, "block_k must make a 32-, 64- or 128-byte row"},
      {unknown_order, "tile order 7 is neither raster nor hilbert"},
      {unknown_epilogue, "epilogue 7 is neither direct nor tma"},
      {unknown_schedule, "schedule 7 is neither v1, ws nor pp"},
  };
  for (const auto& [config, message] : cases) {
    const absl::Status valid = ValidateGemmConfig(config, ScalarType::kF16);
    EXPECT_TRUE(absl::StrContains(valid.message(), message))
        << message << ": " << valid;
  }
}

// Sizes are range-checked at both ends before they are narrowed to int:
// -4294967168 is 128 in 32 bits.
TEST(GemmConfigTest, SizesOutsideIntAreRefusedNotNarrowed) {
  for (const char* tile :
       {"-4294967168x128x64", "128x4294967424x64", "128x128x-4294967232"}) {
    const absl::StatusOr<GemmConfig> config = WithTile(GemmConfig{}, tile);
    ASSERT_FALSE(config.ok()) << tile << ": " << ConfigName(*config);
    EXPECT_TRUE(absl::StrContains(config.status().message(),
                                  "is outside -2147483648..2147483647"))
        << config.status();
    EXPECT_FALSE(ParseConfigName(absl::StrCat("v1 ", tile)).ok()) << tile;
  }
  // Option numbers too: refused naming the range, not as unknown options.
  const absl::StatusOr<GemmConfig> stages =
      ParseConfigName("ws 128x128x64 s4294967299 c2 w1 m1 direct g16 tiles");
  ASSERT_FALSE(stages.ok());
  EXPECT_TRUE(absl::StrContains(stages.status().message(),
                                "option 's4294967299' needs an int "
                                "(-2147483648..2147483647) after 's'"))
      << stages.status();
}

TEST(GemmGeneratorTest, SameRequestSameText) {
  const GemmConfig config =
      Parse("ws 128x256x64 s3 c2 w1 m2 tma g8 persistent");
  absl::StatusOr<GeneratedGemm> first = GenerateGemm(config, ScalarType::kBF16);
  absl::StatusOr<GeneratedGemm> second =
      GenerateGemm(config, ScalarType::kBF16);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->source, second->source);
  EXPECT_EQ(first->kernel_name,
            "ptxgen_gemm_bf16_ws_128x256x64_s3_c2_w1_m2_tma_g8");
}

TEST(GemmGeneratorTest, LaunchPolicyDoesNotChangeTheCode) {
  GemmConfig persistent =
      Parse("ws 128x128x64 s4 c2 w1 m1 direct g8 persistent");
  GemmConfig tiles = persistent;
  tiles.persistent = false;
  EXPECT_EQ(GenerateGemm(persistent, ScalarType::kF16)->source,
            GenerateGemm(tiles, ScalarType::kF16)->source);
  EXPECT_EQ(GemmLaunchGrid(persistent, 8192, 8192, 132).x, 132);
  EXPECT_EQ(GemmLaunchGrid(tiles, 8192, 8192, 132).x, 64 * 64);
}

TEST(GemmGeneratorTest, LaunchGrids) {
  const GemmGrid v1 = GemmLaunchGrid(Parse("v1 128x128x64"), 257, 129, 132);
  EXPECT_EQ(v1.x, 3);
  EXPECT_EQ(v1.y, 2);
  const GemmGrid cluster = GemmLaunchGrid(
      Parse("ws 128x256x64 s4 c2 w1 m2 direct g8 persistent"), 8192, 8192, 60);
  EXPECT_EQ(cluster.x, 120);  // 60 resident clusters of 2
  EXPECT_EQ(cluster.cluster_x, 2);
  // Fewer tiles than SMs: one cluster per pair of tile rows.
  const GemmGrid small = GemmLaunchGrid(
      Parse("ws 128x256x64 s4 c2 w1 m2 direct g8 persistent"), 300, 256, 60);
  EXPECT_EQ(small.x, 4);
}

// A grouped kernel's units are counted on the device: the host launches
// for the most the rows can give (m / cluster rows + groups, per column of
// tiles, when contiguous; every group's m when masked), and only
// persistent kernels of whole tiles walk them, storing directly or
// through TMA.
TEST(GemmGeneratorTest, GroupedGridsCoverTheMostUnitsTheRowsCanGive) {
  const GemmConfig config =
      Parse("ws 128x256x64 s4 c2 w1 m1 direct g8 persistent");
  EXPECT_EQ(GemmWorkUnits(config, 1000, 512, 8, GemmGrouping::kContiguous),
            (1000 / 128 + 8) * 2);
  EXPECT_EQ(GemmWorkUnits(config, 1000, 512, 8, GemmGrouping::kMasked),
            8 * 8 * 2);
  EXPECT_EQ(
      GemmLaunchGrid(config, 1000, 512, 132, 8, GemmGrouping::kContiguous).x,
      30);
  EXPECT_EQ(
      GemmLaunchGrid(config, 8192, 4096, 132, 8, GemmGrouping::kContiguous).x,
      132);
  const GemmForm grouped = *ParseFormName("bf16.kk->bf16+contiguous_groups");
  EXPECT_TRUE(ValidateGemmConfigForForm(config, grouped).ok());
  EXPECT_TRUE(ValidateGemmConfigForForm(
                  Parse("ws 128x256x64 s3 c2 w1 m1 tma g8 persistent"), grouped)
                  .ok());
  for (const char* name :
       {"ws 128x128x64 s6 c2 w1 m1 direct g8 k2 persistent",
        "ws 128x256x64 s4 c2 w1 m1 direct g8 sk persistent",
        "ws 128x256x64 s4 c2 w1 m1 direct g8 tiles",
        "ws 64x16x64 s8 c1 w1 m1 direct g8 persistent swap", "v1 128x128x64"}) {
    const absl::Status refused =
        ValidateGemmConfigForForm(Parse(name), grouped);
    EXPECT_FALSE(refused.ok()) << name;
    EXPECT_TRUE(absl::StrContains(refused.message(), "grouped GEMM"))
        << name << ": " << refused;
  }
}

// Slices meeting in a cluster: a cluster of split_k CTAs per tile, no
// workspace; a persistent grid holds whole clusters.
TEST(GemmGeneratorTest, SlicesMeetingInAClusterLaunchInClustersOfTheirCount) {
  const GemmConfig meeting =
      Parse("ws 64x128x64 s6 c1 w1 m1 direct g8 k4 dsmem persistent");
  EXPECT_EQ(ClusterCtas(meeting), 4);
  // 128 tiles of 4 slices over 33 resident clusters of 4.
  const GemmGrid persistent = GemmLaunchGrid(meeting, 1024, 1024, 33);
  EXPECT_EQ(persistent.x, 132);
  EXPECT_EQ(persistent.cluster_x, 4);
  EXPECT_EQ(GemmWorkspaceBytes(meeting, 1024, 1024, persistent), 0);
  // Fewer units than resident CTAs: one CTA per unit, still whole clusters.
  const GemmGrid few = GemmLaunchGrid(meeting, 100, 200, 33);
  EXPECT_EQ(few.x, 2 * 2 * 4);
  GemmConfig tiles = meeting;
  tiles.persistent = false;
  EXPECT_EQ(GemmLaunchGrid(tiles, 1024, 1024, 33).x, 512);
  EXPECT_EQ(ClusterCtas(Parse("ws 128x256x64 s3 c2 w1 m2 tma g16 persistent")),
            2);
  EXPECT_EQ(
      ClusterCtas(Parse("ws 128x128x64 s6 c2 w1 m1 direct g8 k4 persistent")),
      1);
}

TEST(GemmGeneratorTest, StreamKRunsOnEveryResidentCluster) {
  const GemmConfig stream_k =
      Parse("ws 128x256x64 s3 c2 w1 m2 tma g16 sk persistent");
  // Even one tile is shared out by k-tiles over the whole persistent grid.
  const GemmGrid grid = GemmLaunchGrid(stream_k, 100, 100, 66);
  EXPECT_EQ(grid.x, 132);
  EXPECT_EQ(grid.cluster_x, 2);
  // 132 flags (2 per CTA) padded to 16 bytes, ending the flag region, then
  // a 128x256 f32 slot per CTA.
  EXPECT_EQ(GemmStreamKFlagBytes(stream_k, grid), 132 * 2 * 4);
  EXPECT_EQ(GemmWorkspaceKernelOffset(stream_k, grid),
            kWorkspaceFlagRegionBytes - 132 * 2 * 4);
  EXPECT_EQ(GemmWorkspaceBytes(stream_k, 100, 100, grid),
            kWorkspaceFlagRegionBytes + int64_t{132} * 128 * 256 * 4);
  const GemmConfig plain =
      Parse("ws 128x256x64 s3 c2 w1 m2 tma g16 persistent");
  EXPECT_EQ(
      GemmWorkspaceBytes(plain, 100, 100, GemmLaunchGrid(plain, 100, 100, 66)),
      0);
}

TEST(GemmGeneratorTest, StreamKRefusesIterationCountsBeyond32Bits) {
  const GemmConfig config =
      Parse("ws 128x256x64 s3 c2 w1 m1 tma g16 sk persistent");
  const GemmGrid grid = GemmLaunchGrid(config, 8192, 8192, 132);
  EXPECT_TRUE(CheckGemmLaunch(config, 8192, 8192, 8192, grid).ok());
  const absl::Status huge =
      CheckGemmLaunch(config, 8192, 8192, int64_t{1} << 30, grid);
  EXPECT_TRUE(
      absl::StrContains(huge.message(), "stream-K counts k-tiles in 32 bits"))
      << huge;
  GemmConfig no_stream_k = config;
  no_stream_k.stream_k = false;
  EXPECT_TRUE(
      CheckGemmLaunch(no_stream_k, 8192, 8192, int64_t{1} << 30, grid).ok());
}

TEST(GemmGeneratorTest, TileCountsBeyond32BitsAreRefused) {
  const int64_t huge = (int64_t{1} << 31) - 1;
  const GemmConfig square =
      Parse("ws 64x64x64 s4 c1 w1 m1 direct g32 persistent");
  const GemmGrid grid = GemmLaunchGrid(square, 8, 8, 132);
  EXPECT_TRUE(CheckGemmLaunch(square, huge, 8, 64, grid).ok());
  EXPECT_TRUE(CheckGemmLaunch(square, 8, huge, 64, grid).ok());
  const absl::Status both = CheckGemmLaunch(square, 1 << 22, 1 << 22, 64, grid);
  EXPECT_TRUE(absl::StrContains(both.message(), "makes 4294967296 work units"))
      << both;
  const GemmConfig narrow =
      Parse("ws 64x8x64 s4 c1 w1 m1 direct g32 persistent");
  const absl::Status wide = CheckGemmLaunch(narrow, 8, huge, 64, grid);
  EXPECT_TRUE(
      absl::StrContains(wide.message(), "raster spans of 8589934592 tiles"))
      << wide;
}

// The grid is computed in 64 bits and refused where CUDA cannot launch it
// (grid.x up to 2^31-1, grid.y up to 65535), not wrapped into one it can.
TEST(GemmGeneratorTest, GridsBeyondCudaLimitsAreRefused) {
  // 2^30 clusters of 2 CTAs, one per pair of tile rows: x = 2^31.
  const GemmConfig pairs = Parse("ws 64x16x64 s4 c1 w1 m2 direct g1 tiles");
  ASSERT_TRUE(ValidateGemmConfig(pairs, ScalarType::kF16).ok());
  const GemmGrid wide = GemmLaunchGrid(pairs, 1 << 21, 1 << 20, 132);
  EXPECT_EQ(wide.x, int64_t{1} << 31);
  const absl::Status x = CheckGemmLaunch(pairs, 1 << 21, 1 << 20, 64, wide);
  EXPECT_TRUE(absl::StrContains(x.message(),
                                "a grid of 2147483648 x 1 CTAs is beyond "
                                "CUDA's 2147483647 x 65535"))
      << x;
  // v1 takes a tile column per grid row: 2^31-1 columns of C in 128-wide
  // tiles are 16777216 rows.
  const GemmConfig v1 = Parse("v1 128x128x64");
  const int64_t huge = (int64_t{1} << 31) - 1;
  const GemmGrid tall = GemmLaunchGrid(v1, 128, huge, 132);
  EXPECT_EQ(tall.y, 16777216);
  const absl::Status y = CheckGemmLaunch(v1, 128, huge, 64, tall);
  EXPECT_TRUE(
      absl::StrContains(y.message(), "a grid of 1 x 16777216 CTAs is beyond"))
      << y;
  EXPECT_TRUE(CheckGemmLaunch(v1, 128, 65535 * 128, 64,
                              GemmLaunchGrid(v1, 128, 65535 * 128, 132))
                  .ok());
}

// The Hilbert order has no raster group: no raster span to count, and its
// kernel walks the curve instead of the groups of rows.
TEST(GemmGeneratorTest, HilbertOrderReplacesTheRasterGroups) {
  const GemmConfig hilbert =
      Parse("ws 64x8x64 s4 c1 w1 m1 direct hilbert persistent");
  const GemmGrid grid = GemmLaunchGrid(hilbert, 8, 8, 132);
  EXPECT_TRUE(
      CheckGemmLaunch(hilbert, 8, (int64_t{1} << 31) - 1, 64, grid).ok());
  GemmConfig junk_group = hilbert;
  junk_group.raster_group = 0;  // read by the raster order only
  EXPECT_TRUE(ValidateGemmConfig(junk_group, ScalarType::kF16).ok());
  absl::StatusOr<GeneratedGemm> curve = GenerateGemm(hilbert, ScalarType::kF16);
  ASSERT_TRUE(curve.ok()) << curve.status();
  EXPECT_TRUE(absl::StrContains(curve->source,
                                "hilbert_cell(t, tiles_n, cluster_rows"));
  EXPECT_TRUE(
      absl::StrContains(curve->source, "Tile order: along a Hilbert curve"));
  absl::StatusOr<GeneratedGemm> rows = GenerateGemm(
      Parse("ws 64x8x64 s4 c1 w1 m1 direct g8 persistent"), ScalarType::kF16);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_FALSE(absl::StrContains(rows->source, "hilbert_cell"));
  EXPECT_TRUE(
      absl::StrContains(rows->source, "Tile order: in groups of 8 tile rows"));
}

// The value the generated kernel's plan block gives `name`; "" when absent.
std::string Planned(const GeneratedGemm& gemm, const std::string& name) {
  for (const PlannedConstant& constant : gemm.plan) {
    if (constant.name == name) return constant.value;
  }
  return "";
}

TEST(GemmGeneratorTest, SharedMemoryPlanKeepsBarriersOutsideTmaDestinations) {
  const GemmConfig config =
      Parse("ws 128x256x64 s3 c2 w1 m2 tma g8 persistent");
  absl::StatusOr<GeneratedGemm> gemm = GenerateGemm(config, ScalarType::kF16);
  ASSERT_TRUE(gemm.ok());
  // Stages (3 x 48 KiB), then the C tile (64 KiB), then 6 barriers, the
  // work schedule, and the base-alignment slack.
  EXPECT_EQ(Planned(*gemm, "kBarrierOffset"), "212992u");
  EXPECT_EQ(Planned(*gemm, "kScheduleOffset"), "213040u");
  EXPECT_EQ(gemm->shared_bytes, 212992 + 48 + 64 + 1024);
  EXPECT_EQ(gemm->a_box.inner, 64);
  EXPECT_EQ(gemm->a_box.outer, 128);
  EXPECT_EQ(gemm->b_box.outer, 128);  // half of B per CTA of the pair
  EXPECT_EQ(gemm->d_box.outer, 64);   // one consumer's rows
}

// A ping-pong consumer reads every stage it takes whole: all of A's rows,
// its own C buffer, one consumer's warps releasing each stage; and it
// waits for its turns.
TEST(GemmGeneratorTest, PingPongConsumersOwnWholeTiles) {
  const GemmConfig config =
      Parse("pp 128x128x64 s6 c2 w1 m2 tma e1 g8 persistent");
  absl::StatusOr<GeneratedGemm> gemm = GenerateGemm(config, ScalarType::kF16);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  EXPECT_EQ(Planned(*gemm, "kRowsPerConsumer"), "128");
  EXPECT_EQ(Planned(*gemm, "kMSlices"), "2");
  EXPECT_EQ(Planned(*gemm, "kPingPong"), "true");
  EXPECT_EQ(Planned(*gemm, "kConsumerABytes"), "0u");
  // 4 warps of one consumer, in each CTA of the pair.
  EXPECT_EQ(Planned(*gemm, "kEmptyArrivals"), "8u");
  // Each consumer stages one 64-column chunk of its 128 rows.
  EXPECT_EQ(Planned(*gemm, "kConsumerCBytes"), "16384u");
  EXPECT_EQ(gemm->d_box.outer, 128);
  EXPECT_EQ(gemm->a_box.outer, 128);
  EXPECT_EQ(gemm->threads_per_block, 384);
  EXPECT_TRUE(absl::StrContains(gemm->source, "bar.arrive"));

  const GemmConfig cooperative =
      Parse("ws 128x128x64 s6 c2 w1 m2 tma e1 g8 persistent");
  absl::StatusOr<GeneratedGemm> split =
      GenerateGemm(cooperative, ScalarType::kF16);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(Planned(*split, "kRowsPerConsumer"), "64");
  EXPECT_EQ(Planned(*split, "kEmptyArrivals"), "16u");
}

// Staging C in passes shrinks its tile: half of each consumer's 256
// columns leaves room for a fourth 48 KiB stage.
TEST(GemmGeneratorTest, CStagedInPassesTakesAFractionOfTheCTile) {
  const GemmConfig config =
      Parse("ws 128x256x64 s4 c2 w1 m1 tma e2 g8 persistent");
  absl::StatusOr<GeneratedGemm> gemm = GenerateGemm(config, ScalarType::kF16);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  // Stages (4 x 48 KiB), the C tile (2 consumers x 64 rows x 128 columns
  // x 2 bytes), 8 barriers, the work schedule, the alignment slack.
  EXPECT_EQ(Planned(*gemm, "kCTileOffset"), "196608u");
  EXPECT_EQ(Planned(*gemm, "kConsumerCBytes"), "16384u");
  EXPECT_EQ(gemm->shared_bytes, 196608 + 32768 + 64 + 64 + 1024);
  EXPECT_EQ(Planned(*gemm, "kStorePasses"), "2");
  EXPECT_EQ(gemm->d_box.inner, 64);
  EXPECT_EQ(gemm->d_box.outer, 64);
}

// The helper kernels launched beside GEMMs assemble too.
TEST(GemmGeneratorTest, SplitKReduceAndRandomFillKernelsCompile) {
  for (ScalarType element : {ScalarType::kF16, ScalarType::kBF16}) {
    for (const auto& [name, source] :
         {std::make_pair(SplitKReduceKernelName(element),
                         SplitKReduceSource(element)),
          std::make_pair(RandomFillKernelName(element),
                         RandomFillSource(element))}) {
      ASSERT_TRUE(source.ok()) << source.status();
      absl::StatusOr<compile::CompiledModule> compiled =
          compile::CompileCuda(name, *source, {});
      ASSERT_TRUE(compiled.ok()) << compiled.status();
      EXPECT_TRUE(compiled->diagnostics.empty()) << name;
    }
  }
}

// Promotion runs a stage in column ranges, one after the other through one
// set of sums: the fewest ranges whose sums fit the consumer's registers
// beside the accumulators (PromotionRegisters).
TEST(GemmGeneratorTest, PromotionRunsAStageInColumnRangesThatFit) {
  const GemmForm fp8 = PlainForm(ScalarType::kE4M3);
  const std::pair<const char*, const char*> cases[] = {
      // 128 accumulators + 64 + 40 = 232 registers.
      {"ws 128x256x128 s3 c2 w0 m1 tma g16 persistent",
       "wgmma_m64n128_f32_e4m3"},
      // 96 + 96 + 40: the whole stage at once.
      {"ws 128x192x128 s4 c2 w0 m1 tma g16 persistent",
       "wgmma_m64n192_f32_e4m3"},
      // Two slices of 64 rows: 8 more registers, four ranges of 32.
      {"ws 256x128x128 s3 c2 w0 m1 tma g16 persistent",
       "wgmma_m64n32_f32_e4m3"},
  };
  for (const auto& [name, part] : cases) {
    absl::StatusOr<GeneratedGemm> gemm = GenerateGemm(Parse(name), fp8);
    ASSERT_TRUE(gemm.ok()) << name << ": " << gemm.status();
    EXPECT_TRUE(absl::StrContains(gemm->source, part)) << name;
    EXPECT_TRUE(absl::StrContains(gemm->source,
                                  "  wgmma_wait_group_0();\n  wgmma_pin_"))
        << name;
    EXPECT_FALSE(absl::StrContains(gemm->source, "void mma_stage(")) << name;
  }
  // Unpromoted kernels keep the whole stage in one wgmma per K step.
  absl::StatusOr<GeneratedGemm> fast =
      GenerateGemm(Parse("ws 128x256x128 s3 c2 w1 m1 tma g16 persistent"),
                   *ParseFormName("e4m3.kk->bf16+fast_accum"));
  ASSERT_TRUE(fast.ok()) << fast.status();
  EXPECT_TRUE(absl::StrContains(fast->source, "wgmma_m64n256_f32_e4m3"));
  EXPECT_FALSE(absl::StrContains(fast->source, "stage_sums"));
}

// An fp8 D stores directly, two values in 16 bits, times scale_d read once
// per tile; the amax of D is each warp's maximum raised into amax_d.
// GELU's tanh comes from the special-function unit where D's type rounds
// away its 2^-11 error (16- and 8-bit D), from tanhf into an f32 D.
TEST(GemmGeneratorTest, GeluTanhIsApproximateOnlyWhereDRoundsItAway) {
  const GemmConfig sixteen_bit =
      Parse("ws 128x128x64 s4 c2 w1 m1 direct g8 persistent");
  const GemmConfig fp8 =
      Parse("ws 128x128x128 s4 c2 w0 m1 direct g8 persistent");
  const std::pair<const char*, const GemmConfig*> narrow_d[] = {
      {"f16.kk->f16+gelu_tanh", &sixteen_bit},
      {"bf16.kk->bf16+gelu_tanh", &sixteen_bit},
      {"e4m3.kk->e4m3+gelu_tanh+tensor_scaled", &fp8}};
  for (const auto& [form, config] : narrow_d) {
    absl::StatusOr<GeneratedGemm> gemm =
        GenerateGemm(*config, *ParseFormName(form));
    ASSERT_TRUE(gemm.ok()) << form << ": " << gemm.status();
    EXPECT_TRUE(absl::StrContains(gemm->source, "tanh.approx.f32")) << form;
    EXPECT_FALSE(absl::StrContains(gemm->source, "tanhf(")) << form;
  }
  absl::StatusOr<GeneratedGemm> f32 =
      GenerateGemm(sixteen_bit, *ParseFormName("f16.kk->f32+gelu_tanh"));
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_TRUE(absl::StrContains(f32->source, "tanhf("));
  EXPECT_FALSE(absl::StrContains(f32->source, "tanh.approx.f32"));
}

TEST(GemmGeneratorTest, AnFp8DIsScaledPerTileAndTheAmaxRaisedPerWarp) {
  const GemmConfig direct =
      Parse("ws 128x256x128 s3 c2 w0 m1 direct g16 persistent");
  absl::StatusOr<GeneratedGemm> gemm =
      GenerateGemm(direct, *ParseFormName("e4m3.kk->e4m3+tensor_scaled+amax"));
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  for (const char* text :
       {"constexpr bool kScalesD = true;", "out.scale = *e.scale_d;",
        "low *= destination.scale;", "cvt_pack_e4m3x2(packed, high, low);",
        "*(unsigned short*)out = packed;",
        "record_amax(acc, tile_out, batch, m0, n0, thread);",
        "redux.sync.max.u32", "red.relaxed.gpu.global.max.u32"}) {
    EXPECT_TRUE(absl::StrContains(gemm->source, text)) << text;
  }
  // Unscaled, an fp8 D is the saturated rounding alone.
  absl::StatusOr<GeneratedGemm> unscaled =
      GenerateGemm(direct, *ParseFormName("e4m3.kk->e5m2"));
  ASSERT_TRUE(unscaled.ok()) << unscaled.status();
  EXPECT_TRUE(
      absl::StrContains(unscaled->source, "constexpr bool kScalesD = false;"));
  EXPECT_FALSE(absl::StrContains(unscaled->source, "record_amax"));
  // The TMA store stages 16-bit values; the reduce kernel computes the
  // plain form only.
  const GemmForm fp8_d = *ParseFormName("e4m3.kk->e4m3");
  EXPECT_TRUE(absl::StrContains(
      ValidateGemmConfigForForm(
          Parse("ws 128x256x128 s3 c2 w0 m1 tma g16 persistent"), fp8_d)
          .message(),
      "stores 16-bit D"));
  EXPECT_TRUE(absl::StrContains(
      ValidateGemmConfigForForm(
          Parse("ws 128x128x128 s4 c2 w0 m1 direct g16 k2 persistent"), fp8_d)
          .message(),
      "in a 16-bit input type"));
  EXPECT_TRUE(absl::StrContains(
      ValidateGemmConfigForForm(
          Parse("ws 128x128x64 s4 c2 w1 m1 direct g16 k2 persistent"),
          *ParseFormName("f16.kk->f16+amax"))
          .message(),
      "not f16.kk->f16+amax"));
}

// Block scaling: each stage's sums times their row's scale of A and their
// column block's of B (two blocks where a tile straddles them), the
// scales loaded a stage ahead; what the kernels cannot scale is refused.
TEST(GemmGeneratorTest, BlockScaledStagesAreScaledAsTheyArePromoted) {
  const GemmForm form = *ParseFormName("e4m3.kk->bf16+block_scaled");
  absl::StatusOr<GeneratedGemm> gemm = GenerateGemm(
      Parse("ws 128x192x128 s4 c2 w0 m1 tma g16 persistent"), form);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  for (const char* text :
       {"constexpr int kScaleBlock = 128;", "constexpr int kScaleRowStep = 8;",
        "const TileScales scales = tile_scales(out, w,",
        "StageScales next = stage_scales(scales, w.kt_begin);",
        "next = stage_scales(scales, kt + 1);",
        "kt != w.kt_begin, current, scales.b_split);",
        "acc[s][0] += stage_sums[s][0] * (0 < b_split ? first[0] : second[0]);",
        "acc[s][3] += stage_sums[s][3] * (1 < b_split ? first[1] : second[1]);",
        "* (184 < b_split ? first[1] : second[1]);"}) {
    EXPECT_TRUE(absl::StrContains(gemm->source, text)) << text;
  }
  EXPECT_FALSE(absl::StrContains(gemm->source, "add_stage_sums"));
  // Tiles of whole column blocks: each register's block is written in.
  absl::StatusOr<GeneratedGemm> aligned = GenerateGemm(
      Parse("ws 128x256x128 s3 c2 w0 m1 tma g16 persistent"), form);
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  for (const char* text : {"acc[s][0] += stage_sums[s][0] * first[0];",
                           "acc[s][66] += stage_sums[s][2] * second[1];"}) {
    EXPECT_TRUE(absl::StrContains(aligned->source, text)) << text;
  }
  EXPECT_FALSE(absl::StrContains(aligned->source, "b_split ?"));
  // Forms without block scales run the same main loop over stand-ins that
  // read nothing.
  absl::StatusOr<GeneratedGemm> unscaled =
      GenerateGemm(Parse("ws 128x256x128 s3 c2 w0 m1 tma g16 persistent"),
                   *ParseFormName("e4m3.kk->bf16+tensor_scaled"));
  ASSERT_TRUE(unscaled.ok()) << unscaled.status();
  for (const char* text :
       {"struct StageScales {};", "next = stage_scales(scales, kt + 1);",
        "kt != w.kt_begin, current, scales.b_split);"}) {
    EXPECT_TRUE(absl::StrContains(unscaled->source, text)) << text;
  }
  EXPECT_FALSE(absl::StrContains(unscaled->source, "__ldg"));
  const std::pair<const char*, const char*> refusals[] = {
      {"v1 64x128x128", "runs warp-specialized (ws, pp) kernels"},
      {"ws 64x16x128 s8 c1 w0 m1 direct g8 persistent swap",
       "does not swap A and B"},
      {"ws 128x128x64 s6 c2 w0 m1 tma g8 persistent", "block_k must be 128"},
      {"ws 64x224x128 s4 c1 w0 m1 direct g8 persistent",
       "block_n 224 may span three"},
      {"ws 256x128x128 s3 c2 w0 m1 tma g16 sk persistent", "takes no stream-K"},
  };
  for (const auto& [name, message] : refusals) {
    const absl::Status refused = ValidateGemmConfigForForm(Parse(name), form);
    EXPECT_TRUE(absl::StrContains(refused.message(), message))
        << name << ": " << refused;
  }
  EXPECT_TRUE(ValidateGemmConfigForForm(
                  Parse("ws 64x160x128 s4 c1 w0 m1 direct g8 persistent"), form)
                  .ok());
}

// s8/u8 inputs accumulate in s32 registers (wgmma's .s32 form, pinned as
// ints); an s32 D stores them as they are, two in 64 bits; an s8 D rounds
// alpha times them with saturation, two in 16 bits; stream-K and a split-K
// meeting move their bits through f32 words unchanged.
TEST(GemmGeneratorTest, IntegerInputsAccumulateExactlyInS32) {
  absl::StatusOr<GeneratedGemm> s32 =
      GenerateGemm(Parse("ws 128x256x128 s4 c2 w1 m1 direct g16 sk persistent"),
                   *ParseFormName("s8.kk->s32"));
  ASSERT_TRUE(s32.ok()) << s32.status();
  for (const char* text :
       {"typedef int Accumulator;", "wgmma_m64n256_s32_s8(acc[0]", ".s32.s8.s8",
        "int (&d)[128]", "*(int2*)out = make_int2(low, high);",
        "Accumulator low", "__int_as_float(value)",
        "acc[s][4 * q] += accumulator_of_word(part.x);"}) {
    EXPECT_TRUE(absl::StrContains(s32->source, text)) << text;
  }
  EXPECT_FALSE(absl::StrContains(s32->source, "epilogue_value"));
  EXPECT_FALSE(absl::StrContains(s32->source, "alpha *"));
  absl::StatusOr<GeneratedGemm> s8 = GenerateGemm(
      Parse("ws 128x128x128 s4 c2 w1 m1 direct g8 k2 dsmem persistent"),
      *ParseFormName("u8xs8.kk->s8+bias_n.f32"));
  ASSERT_TRUE(s8.ok()) << s8.status();
  for (const char* text :
       {".s32.u8.s8", "cvt.rni.sat.s8.f32", "cvt_pack_s8x2(packed, high, low);",
        "*(unsigned short*)out = packed;", "epilogue_value(e, low",
        "accumulator_of_word(part[0])"}) {
    EXPECT_TRUE(absl::StrContains(s8->source, text)) << text;
  }
  // A float D of integer inputs: the s32 sums convert where alpha scales
  // them, and the TMA store takes a 16-bit D.
  absl::StatusOr<GeneratedGemm> bf16 =
      GenerateGemm(Parse("ws 128x256x128 s2 c2 w1 m1 tma g16 persistent"),
                   *ParseFormName("s8.kk->bf16"));
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_TRUE(absl::StrContains(bf16->source, "typedef int Accumulator;"));
  EXPECT_TRUE(absl::StrContains(bf16->source, "e.alpha * acc[s]"));
  // wgmma's integer N ladder skips 40: the tile is refused by its rule.
  EXPECT_TRUE(absl::StrContains(
      ValidateGemmConfigForForm(
          Parse("ws 64x40x128 s4 c1 w1 m1 direct g8 persistent"),
          *ParseFormName("s8.kk->s32"))
          .message(),
      "8, 16, 24, 32, then 48..256 step 16"));
  // Split-K's reduce kernel rounds to 16-bit D only.
  EXPECT_TRUE(absl::StrContains(
      ValidateGemmConfigForForm(
          Parse("ws 128x128x128 s4 c2 w1 m1 direct g16 k2 persistent"),
          *ParseFormName("s8.kk->s32"))
          .message(),
      "in a 16-bit input type"));
}

}  // namespace
}  // namespace ptxgen::gen
