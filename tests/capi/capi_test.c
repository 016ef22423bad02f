/*
 * The C API as a C program sees it, through libptxgen.so: the README's
 * problems and fp8 and tf32 ones planned without a GPU, their source and PTX
 * read back, every refusal as its status with the rule in the handle's message,
 * NULL arguments refused, and preparing without a device refused as
 * PTXGEN_STATUS_NO_DEVICE; attention problems initialized, spanned and
 * refused alike. The driver is hidden from this process, so it
 * proves the same on a GPU machine.
 *
 * Written in C (compiled as C11): a test case is a function, its checks
 * print what failed, and the results go to Bazel's XML_OUTPUT_FILE, one
 * <testcase> each, as tools/test_summary.py counts them.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath */

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxgen/ptxgen.h"

_Static_assert(sizeof(ptxgenActivation_t) == sizeof(int),
               "C enumerations have the size of int, as in C++ (enum : int)");

/* ---- A small test runner ---- */

static int current_failures = 0;

static void Check(int ok, const char* what, const char* file, int line) {
  if (ok) return;
  ++current_failures;
  printf("%s:%d: failed: %s\n", file, line, what);
}

#define EXPECT(condition) \
  Check((condition) != 0, #condition, __FILE__, __LINE__)

static void CheckStatus(ptxgenStatus_t expected, ptxgenStatus_t actual,
                        const char* call, const char* file, int line) {
  if (expected == actual) return;
  ++current_failures;
  printf("%s:%d: %s returned %s, expected %s\n", file, line, call,
         ptxgenGetStatusName(actual), ptxgenGetStatusName(expected));
}

#define EXPECT_STATUS(expected, call) \
  CheckStatus((expected), (call), #call, __FILE__, __LINE__)

static void CheckContains(const char* text, const char* part, const char* file,
                          int line) {
  if (text != NULL && strstr(text, part) != NULL) return;
  ++current_failures;
  printf("%s:%d: expected \"%s\" in \"%s\"\n", file, line, part,
         text != NULL ? text : "(NULL)");
}

#define EXPECT_CONTAINS(text, part) \
  CheckContains((text), (part), __FILE__, __LINE__)

/* ---- What the tests share ---- */

static ptxgenHandle_t handle = NULL;

/* The folder holding //tests/kernels:bundle's entries, the kernels the
   tests share, compiled once per build; "" without it. The runfile is a
   folder of links, which the kernel cache does not follow to an entry: the
   folder they lead to is the bundle. */
static char bundle[4096] = "";

/* This run's writable kernel cache folder: the kernels not in the bundle
   are compiled into it. */
static char cache_folder[4096] = "";

static void FindKernelBundle(void) {
  const char* runfile = "tests/kernels/bundle";
  DIR* dir = opendir(runfile);
  if (dir == NULL) return;
  for (struct dirent* file; (file = readdir(dir)) != NULL;) {
    if (file->d_name[0] == '.') continue;
    char link[4096];
    snprintf(link, sizeof link, "%s/%s", runfile, file->d_name);
    char* entry = realpath(link, NULL);
    if (entry != NULL && strrchr(entry, '/') != NULL) {
      *strrchr(entry, '/') = '\0';
      snprintf(bundle, sizeof bundle, "%s", entry);
    }
    free(entry);
    break;
  }
  closedir(dir);
}

/* Files in the writable folder: each a kernel this run compiled. */
static int CompiledKernels(void) {
  DIR* dir = opendir(cache_folder);
  if (dir == NULL) return 0; /* created by the first write */
  int files = 0;
  for (struct dirent* file; (file = readdir(dir)) != NULL;) {
    files += file->d_name[0] != '.';
  }
  closedir(dir);
  return files;
}

/* The README's problems at the size of its command-line examples. */
static ptxgenGemmProblem_t Plain(void) {
  ptxgenGemmProblem_t problem;
  ptxgenGemmProblemInit(&problem, 4096, 4096, 4096, PTXGEN_TYPE_F16);
  return problem;
}

/* D = gelu(A·B + bias): B stored [k,n], D in f32, the bias along n. */
static ptxgenGemmProblem_t Fused(void) {
  ptxgenGemmProblem_t problem;
  ptxgenGemmProblemInit(&problem, 4096, 4096, 4096, PTXGEN_TYPE_BF16);
  problem.b_major = PTXGEN_MAJOR_MN;
  problem.output_type = PTXGEN_TYPE_F32;
  problem.bias = PTXGEN_BIAS_N;
  problem.activation = PTXGEN_ACTIVATION_GELU;
  return problem;
}

/* Plans `problem` on `target` expecting a refusal with `status`, naming
   `rule` in the message; the plan stays NULL. */
static void ExpectPlanRefused(ptxgenGemmProblem_t problem,
                              const ptxgenTarget_t* target,
                              ptxgenStatus_t status, const char* rule) {
  ptxgenPlan_t plan = (ptxgenPlan_t)&handle; /* anything but NULL */
  EXPECT_STATUS(status, ptxgenPlanGemm(handle, &problem, target, &plan));
  EXPECT(plan == NULL);
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle), "ptxgenPlanGemm: ");
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle), rule);
}

/* ---- The tests ---- */

static void EveryStatusHasANameAndASentence(void) {
  EXPECT(strcmp(ptxgenGetStatusName(PTXGEN_STATUS_SUCCESS),
                "PTXGEN_STATUS_SUCCESS") == 0);
  EXPECT(strcmp(ptxgenGetStatusName(PTXGEN_STATUS_NO_DEVICE),
                "PTXGEN_STATUS_NO_DEVICE") == 0);
  for (int status = PTXGEN_STATUS_SUCCESS;
       status <= PTXGEN_STATUS_INTERNAL_ERROR; ++status) {
    EXPECT(strstr(ptxgenGetStatusName((ptxgenStatus_t)status),
                  "PTXGEN_STATUS_") != NULL);
    EXPECT(strcmp(ptxgenGetStatusName((ptxgenStatus_t)status),
                  "PTXGEN_STATUS_UNKNOWN") != 0);
    EXPECT(strlen(ptxgenGetStatusString((ptxgenStatus_t)status)) > 0);
  }
  EXPECT(strcmp(ptxgenGetStatusName((ptxgenStatus_t)99),
                "PTXGEN_STATUS_UNKNOWN") == 0);
  EXPECT_CONTAINS(ptxgenGetStatusString((ptxgenStatus_t)-1),
                  "not a ptxgenStatus_t");
  EXPECT(strcmp(ptxgenGetVersionString(), "0.1.0") == 0);
}

static void AnInitializedProblemIsThePlainPackedOne(void) {
  ptxgenGemmProblem_t problem;
  memset(&problem, 0x5a, sizeof problem);
  EXPECT_STATUS(
      PTXGEN_STATUS_SUCCESS,
      ptxgenGemmProblemInit(&problem, 128, 256, 64, PTXGEN_TYPE_BF16));
  EXPECT(problem.m == 128 && problem.n == 256 && problem.k == 64);
  EXPECT(problem.input_type == PTXGEN_TYPE_BF16 &&
         problem.output_type == PTXGEN_TYPE_BF16);
  EXPECT(problem.a_major == PTXGEN_MAJOR_K &&
         problem.b_major == PTXGEN_MAJOR_K);
  EXPECT(problem.lda == 0 && problem.ldb == 0 && problem.ldc == 0 &&
         problem.ldd == 0);
  EXPECT(problem.batch == 1 && problem.stride_a == 0 &&
         problem.stride_bias == 0);
  EXPECT(problem.alpha == 1.0f && problem.beta == 0.0f);
  EXPECT(problem.bias == PTXGEN_BIAS_NONE &&
         problem.bias_type == PTXGEN_TYPE_F32);
  EXPECT(problem.activation == PTXGEN_ACTIVATION_NONE);
  EXPECT(problem.b_input_type == PTXGEN_TYPE_BF16);
  EXPECT(problem.scaling == PTXGEN_SCALING_NONE);
  EXPECT(problem.fast_accumulation == 0 && problem.record_amax == 0);
  EXPECT(problem.grouping == PTXGEN_GROUPING_NONE && problem.expected_m == 0);
  ptxgenTarget_t h200;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS, ptxgenTargetH200(&h200));
  EXPECT(h200.sm_count == 132);
  EXPECT(h200.max_shared_bytes_per_block_optin == 227 * 1024);
}

/* Each input type's default output: its own for 16-bit inputs, bf16 for
   fp8, f32 for tf32 (f32 in memory). */
static void AnInitializedProblemHasItsInputTypesDefaultOutput(void) {
  const struct {
    ptxgenDataType_t input, output;
  } defaults[] = {{PTXGEN_TYPE_F16, PTXGEN_TYPE_F16},
                  {PTXGEN_TYPE_BF16, PTXGEN_TYPE_BF16},
                  {PTXGEN_TYPE_E4M3, PTXGEN_TYPE_BF16},
                  {PTXGEN_TYPE_E5M2, PTXGEN_TYPE_BF16},
                  {PTXGEN_TYPE_TF32, PTXGEN_TYPE_F32},
                  {PTXGEN_TYPE_S8, PTXGEN_TYPE_S32},
                  {PTXGEN_TYPE_U8, PTXGEN_TYPE_S32}};
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; ++i) {
    ptxgenGemmProblem_t problem;
    EXPECT_STATUS(
        PTXGEN_STATUS_SUCCESS,
        ptxgenGemmProblemInit(&problem, 64, 64, 64, defaults[i].input));
    EXPECT(problem.input_type == defaults[i].input &&
           problem.b_input_type == defaults[i].input);
    EXPECT(problem.output_type == defaults[i].output);
  }
}

/* Both README problems, on an H200 (NULL and by name) and on 66 SMs. */
static void PlansTheReadmesProblemsAndShowsWhatItGenerated(void) {
  const ptxgenGemmProblem_t problems[] = {Plain(), Fused()};
  ptxgenTarget_t targets[3];
  ptxgenTargetH200(&targets[1]);
  targets[2] = targets[1];
  targets[2].sm_count = 66;
  for (int p = 0; p < 2; ++p) {
    for (int t = 0; t < 3; ++t) {
      ptxgenPlan_t plan = NULL;
      EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                    ptxgenPlanGemm(handle, &problems[p],
                                   t == 0 ? NULL : &targets[t], &plan));
      EXPECT(strcmp(ptxgenGetLastErrorMessage(handle), "") == 0);
      ptxgenKernelInfo_t info;
      EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                    ptxgenPlanGetKernelInfo(plan, &info));
      if (plan == NULL) continue;
      char entry[512];
      snprintf(entry, sizeof entry, ".entry %s", info.kernel_name);
      EXPECT_CONTAINS(info.source, info.kernel_name);
      EXPECT_CONTAINS(info.source, "extern \"C\" __global__");
      EXPECT_CONTAINS(info.ptx, ".target sm_90a");
      EXPECT_CONTAINS(info.ptx, entry);
      EXPECT(strlen(info.config_name) > 0);
      EXPECT_CONTAINS(info.form_name,
                      p == 0 ? "f16.kk->f16" : "bf16.km->f32+bias_n.f32+gelu");
      EXPECT_CONTAINS(info.kernel_name, "gemm");
      EXPECT(info.cubin != NULL && info.cubin_size > 0);
      EXPECT(info.registers > 0 && info.registers <= 255);
      EXPECT(info.spill_store_bytes == 0 && info.spill_load_bytes == 0);
      EXPECT(info.shared_bytes > 0 && info.shared_bytes <= 227 * 1024);
      EXPECT(info.threads_per_block >= 128);
      const int sms = t == 2 ? 66 : 132;
      EXPECT(info.grid_x >= 1 && info.grid_x <= sms && info.grid_y == 1);
      EXPECT(info.cluster_x == 1 || info.cluster_x == 2);
      EXPECT_STATUS(PTXGEN_STATUS_SUCCESS, ptxgenPlanDestroy(plan));
    }
  }
}

/* The bundle holds what this program plans under the keys it looks up, or
   each run would compile them again without a word: a bundled problem
   planned here for the first time is read, nothing compiled. */
static void ABundledProblemIsReadFromTheSharedBundle(void) {
  EXPECT(strlen(bundle) > 0);
  ptxgenGemmProblem_t decode;
  ptxgenGemmProblemInit(&decode, 16, 4096, 4096, PTXGEN_TYPE_F16);
  const int compiled = CompiledKernels();
  ptxgenPlan_t plan = NULL;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                ptxgenPlanGemm(handle, &decode, NULL, &plan));
  EXPECT(CompiledKernels() == compiled);
  ptxgenPlanDestroy(plan);
}

/* Plans `problem` on an H200, expecting success and `form` as the kernel's
   form name. */
static void ExpectPlannedAs(ptxgenGemmProblem_t problem, const char* form) {
  ptxgenPlan_t plan = NULL;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                ptxgenPlanGemm(handle, &problem, NULL, &plan));
  if (plan == NULL) {
    printf("  refused: %s\n", ptxgenGetLastErrorMessage(handle));
    return;
  }
  ptxgenKernelInfo_t info;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS, ptxgenPlanGetKernelInfo(plan, &info));
  if (strcmp(info.form_name, form) != 0) {
    ++current_failures;
    printf("%s:%d: planned form \"%s\", expected \"%s\"\n", __FILE__, __LINE__,
           info.form_name, form);
  }
  EXPECT_CONTAINS(info.ptx, ".target sm_90a");
  EXPECT(info.cubin != NULL && info.cubin_size > 0);
  ptxgenPlanDestroy(plan);
}

/* fp8 (each type, mixed, scaled with fast accumulation) and tf32, each at
   its default output, and an fp8 GEMM into f32. */
static void PlansFp8Tf32AndIntegerProblems(void) {
  ptxgenGemmProblem_t e4m3;
  ptxgenGemmProblemInit(&e4m3, 4096, 4096, 4096, PTXGEN_TYPE_E4M3);
  ExpectPlannedAs(e4m3, "e4m3.kk->bf16");
  ptxgenGemmProblem_t e5m2;
  ptxgenGemmProblemInit(&e5m2, 4096, 4096, 4096, PTXGEN_TYPE_E5M2);
  ExpectPlannedAs(e5m2, "e5m2.kk->bf16");
  ptxgenGemmProblem_t mixed = e4m3;
  mixed.b_input_type = PTXGEN_TYPE_E5M2;
  ExpectPlannedAs(mixed, "e4m3xe5m2.kk->bf16");
  ptxgenGemmProblem_t scaled_fast = e4m3;
  scaled_fast.scaling = PTXGEN_SCALING_TENSOR;
  scaled_fast.fast_accumulation = 1;
  ExpectPlannedAs(scaled_fast, "e4m3.kk->bf16+tensor_scaled+fast_accum");
  ptxgenGemmProblem_t into_f32 = mixed;
  into_f32.output_type = PTXGEN_TYPE_F32;
  into_f32.scaling = PTXGEN_SCALING_TENSOR;
  ExpectPlannedAs(into_f32, "e4m3xe5m2.kk->f32+tensor_scaled");
  ptxgenGemmProblem_t tf32;
  ptxgenGemmProblemInit(&tf32, 4096, 4096, 4096, PTXGEN_TYPE_TF32);
  ExpectPlannedAs(tf32, "tf32.kk->f32");
  ptxgenGemmProblem_t s8;
  ptxgenGemmProblemInit(&s8, 4096, 4096, 4096, PTXGEN_TYPE_S8);
  ExpectPlannedAs(s8, "s8.kk->s32");
  ptxgenGemmProblem_t rounded = s8;
  rounded.b_input_type = PTXGEN_TYPE_U8;
  rounded.output_type = PTXGEN_TYPE_S8;
  rounded.alpha = 0.001f;
  ExpectPlannedAs(rounded, "s8xu8.kk->s8");
}

/* Block scaling plans DeepGEMM's recipe; its scale arrays hold one float
   per row of A and 128 of k, and one per 128 x 128 block of B, the last
   blocks ragged: 3 k-blocks and 2 n-blocks here, for each of 2 GEMMs. */
static void PlansBlockScaledFp8AndSpansItsScales(void) {
  ptxgenGemmProblem_t block;
  ptxgenGemmProblemInit(&block, 256, 200, 320, PTXGEN_TYPE_E4M3);
  block.scaling = PTXGEN_SCALING_BLOCK;
  block.batch = 2;
  ExpectPlannedAs(block, "e4m3.kk->bf16+batched+block_scaled");
  ptxgenGemmSpans_t spans;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                ptxgenGemmGetSpans(handle, &block, &spans));
  EXPECT(spans.a == 2 * 256 * 320 && spans.b == 2 * 200 * 320);
  EXPECT(spans.d == 2 * 256 * 200 && spans.bias == 0);
  EXPECT(spans.scale_a == 2 * 3 * 256);
  EXPECT(spans.scale_b == 2 * 2 * 3);
  ptxgenGemmProblem_t tensor = block;
  tensor.scaling = PTXGEN_SCALING_TENSOR;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                ptxgenGemmGetSpans(handle, &tensor, &spans));
  EXPECT(spans.scale_a == 1 && spans.scale_b == 1);
  ptxgenGemmProblem_t block_to_e4m3 = block;
  block_to_e4m3.output_type = PTXGEN_TYPE_E4M3;
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmGetSpans(handle, &block_to_e4m3, &spans));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle), "block");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmGetSpans(handle, &block, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle), "spans");
}

/* The library's rules for the types, in its own words. */
static void RefusesTypesTheLibraryDoesNotCompute(void) {
  ptxgenGemmProblem_t f16_with_e4m3 = Plain();
  f16_with_e4m3.b_input_type = PTXGEN_TYPE_E4M3;
  ExpectPlanRefused(f16_with_e4m3, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "GEMM: A and B differ in type only as e4m3 with e5m2 "
                    "(fp8) or s8 with u8, not f16 with e4m3");
  ptxgenGemmProblem_t scaled_f16 = Plain();
  scaled_f16.scaling = PTXGEN_SCALING_TENSOR;
  ExpectPlanRefused(
      scaled_f16, NULL, PTXGEN_STATUS_INVALID_VALUE,
      "per-tensor or block scales and fast accumulation are for fp8 "
      "inputs, not f16");
  ptxgenGemmProblem_t tf32_mn;
  ptxgenGemmProblemInit(&tf32_mn, 4096, 4096, 4096, PTXGEN_TYPE_TF32);
  tf32_mn.b_major = PTXGEN_MAJOR_MN;
  ExpectPlanRefused(tf32_mn, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "MN-major operands need f16 or bf16 inputs");
  ptxgenGemmProblem_t scaled_s32;
  ptxgenGemmProblemInit(&scaled_s32, 4096, 4096, 4096, PTXGEN_TYPE_S8);
  scaled_s32.alpha = 2;
  ExpectPlanRefused(scaled_s32, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "an s32 D is the exact sums: alpha must be 1, not 2");
  ptxgenGemmProblem_t f16_to_s8 = Plain();
  f16_to_s8.output_type = PTXGEN_TYPE_S8;
  ExpectPlanRefused(f16_to_s8, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "an s8 D comes from s8/u8 inputs, not f16");
}

/* Each of the GEMM layer's rules, as PTXGEN_STATUS_INVALID_VALUE. */
static void RefusesProblemsThatBreakARule(void) {
  ptxgenGemmProblem_t empty = Plain();
  empty.k = 0;
  ExpectPlanRefused(empty, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "GEMM: k=0 is outside 1..2147483647");
  ptxgenGemmProblem_t odd = Plain();
  odd.k = 4100;
  ExpectPlanRefused(odd, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "k must be a multiple of 8");
  ptxgenGemmProblem_t f32_inputs = Plain();
  f32_inputs.input_type = PTXGEN_TYPE_F32;
  ExpectPlanRefused(
      f32_inputs, NULL, PTXGEN_STATUS_INVALID_VALUE,
      "element type must be f16, bf16, e4m3, e5m2, tf32, s8 or u8, not f32");
  ptxgenGemmProblem_t no_batch = Plain();
  no_batch.batch = 0;
  ExpectPlanRefused(no_batch, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "batch=0 is outside 1..65535");
  ptxgenGemmProblem_t narrow = Plain();
  narrow.lda = 100;
  ExpectPlanRefused(narrow, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "lda=100 must be at least the stored row (4096 elements)");
  ptxgenGemmProblem_t zeroed;
  memset(&zeroed, 0, sizeof zeroed);
  ExpectPlanRefused(zeroed, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "m=0 is outside");
  /* Valid, but no kernel counts its tiles. */
  ptxgenGemmProblem_t huge;
  ptxgenGemmProblemInit(&huge, 2147483647, 2147483647, 8, PTXGEN_TYPE_F16);
  ExpectPlanRefused(huge, NULL, PTXGEN_STATUS_NOT_SUPPORTED,
                    "the kernel counts tiles in 32 bits");
}

/* A C caller may store any int in an enumeration field: each is checked. */
static void RefusesValuesOutsideAnEnumeration(void) {
  ptxgenGemmProblem_t activation = Plain();
  activation.activation = (ptxgenActivation_t)42;
  ExpectPlanRefused(
      activation, NULL, PTXGEN_STATUS_INVALID_VALUE,
      "ptxgenGemmProblem_t.activation: 42 is not a ptxgenActivation_t "
      "(PTXGEN_ACTIVATION_NONE=0, PTXGEN_ACTIVATION_RELU=1, "
      "PTXGEN_ACTIVATION_GELU=2, PTXGEN_ACTIVATION_GELU_TANH=3, "
      "PTXGEN_ACTIVATION_SILU=4)");
  ptxgenGemmProblem_t major = Plain();
  major.a_major = (ptxgenMajor_t)-1;
  ExpectPlanRefused(major, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "ptxgenGemmProblem_t.a_major: -1 is not a ptxgenMajor_t "
                    "(PTXGEN_MAJOR_K=0, PTXGEN_MAJOR_MN=1)");
  ptxgenGemmProblem_t type = Plain();
  type.output_type = (ptxgenDataType_t)9;
  ExpectPlanRefused(
      type, NULL, PTXGEN_STATUS_INVALID_VALUE,
      "ptxgenGemmProblem_t.output_type: 9 is not a ptxgenDataType_t "
      "(PTXGEN_TYPE_F16=0, PTXGEN_TYPE_BF16=1, PTXGEN_TYPE_F32=2, "
      "PTXGEN_TYPE_E4M3=3, PTXGEN_TYPE_E5M2=4, PTXGEN_TYPE_TF32=5, "
      "PTXGEN_TYPE_S8=6, PTXGEN_TYPE_U8=7, PTXGEN_TYPE_S32=8)");
  ptxgenGemmProblem_t b_type = Plain();
  b_type.b_input_type = (ptxgenDataType_t)-1;
  ExpectPlanRefused(
      b_type, NULL, PTXGEN_STATUS_INVALID_VALUE,
      "ptxgenGemmProblem_t.b_input_type: -1 is not a ptxgenDataType_t");
  ptxgenGemmProblem_t scaling = Plain();
  scaling.scaling = (ptxgenScaling_t)3;
  ExpectPlanRefused(scaling, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "ptxgenGemmProblem_t.scaling: 3 is not a ptxgenScaling_t "
                    "(PTXGEN_SCALING_NONE=0, PTXGEN_SCALING_TENSOR=1, "
                    "PTXGEN_SCALING_BLOCK=2)");
  /* The flags are 0 or 1: an uninitialized one is not read as true. */
  ptxgenGemmProblem_t fast = Plain();
  fast.fast_accumulation = 0x5a5a5a5a;
  ExpectPlanRefused(
      fast, NULL, PTXGEN_STATUS_INVALID_VALUE,
      "ptxgenGemmProblem_t.fast_accumulation: 1515870810 is not 0 or 1");
  ptxgenGemmProblem_t amax = Plain();
  amax.record_amax = -1;
  ExpectPlanRefused(amax, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "ptxgenGemmProblem_t.record_amax: -1 is not 0 or 1");
  ptxgenGemmProblem_t bias = Plain();
  bias.bias = (ptxgenBias_t)7;
  ExpectPlanRefused(bias, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "ptxgenGemmProblem_t.bias: 7 is not a ptxgenBias_t");
  ptxgenGemmProblem_t grouping = Plain();
  grouping.grouping = (ptxgenGrouping_t)3;
  ExpectPlanRefused(grouping, NULL, PTXGEN_STATUS_INVALID_VALUE,
                    "ptxgenGemmProblem_t.grouping: 3 is not a ptxgenGrouping_t "
                    "(PTXGEN_GROUPING_NONE=0, PTXGEN_GROUPING_CONTIGUOUS=1, "
                    "PTXGEN_GROUPING_MASKED=2)");
}

/* A target outside the rules is invalid; one whose shared memory is too
   small for the kernel is valid but not supported. */
static void RefusesTargetsByTheirRules(void) {
  ptxgenTarget_t target;
  ptxgenTargetH200(&target);
  target.sm_count = 0;
  ExpectPlanRefused(Plain(), &target, PTXGEN_STATUS_INVALID_VALUE,
                    "GEMM target: sm_count=0 is outside 1..1024");
  ptxgenTargetH200(&target);
  target.max_shared_bytes_per_block_optin = 16 * 1024;
  ExpectPlanRefused(Plain(), &target, PTXGEN_STATUS_INVALID_VALUE,
                    "is below the 49152 bytes every CUDA GPU gives a block");
}

/* A target with less shared memory than an H200 gets a kernel that fits. */
static void FitsTheKernelToTheTargetsSharedMemory(void) {
  ptxgenTarget_t target;
  ptxgenTargetH200(&target);
  target.max_shared_bytes_per_block_optin = 100 * 1024;
  const ptxgenGemmProblem_t problem = Plain();
  ptxgenPlan_t plan = NULL;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                ptxgenPlanGemm(handle, &problem, &target, &plan));
  if (plan == NULL) return;
  ptxgenKernelInfo_t info;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS, ptxgenPlanGetKernelInfo(plan, &info));
  EXPECT(info.shared_bytes > 0 && info.shared_bytes <= 100 * 1024);
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS, ptxgenPlanDestroy(plan));
}

static void RefusesNullArguments(void) {
  const ptxgenGemmProblem_t problem = Plain();
  ptxgenPlan_t plan = NULL;
  ptxgenGemm_t gemm = NULL;
  ptxgenKernelInfo_t info;
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE, ptxgenCreate(NULL));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmProblemInit(NULL, 1, 1, 8, PTXGEN_TYPE_F16));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE, ptxgenTargetH200(NULL));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanGemm(NULL, &problem, NULL, &plan));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanGemm(handle, NULL, NULL, &plan));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenPlanGemm: problem is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanGemm(handle, &problem, NULL, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenPlanGemm: plan is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanGetKernelInfo(NULL, &info));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmPrepare(NULL, &problem, &gemm));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmPrepare(handle, NULL, &gemm));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmPrepare: problem is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmPrepare(handle, &problem, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmPrepare: gemm is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmGetKernelInfo(NULL, &info));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmRun(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  EXPECT_STATUS(
      PTXGEN_STATUS_INVALID_VALUE,
      ptxgenGemmRun(handle, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmRun: gemm is NULL");
  const ptxgenGemmOperands_t operands = {0};
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmRunOperands(NULL, NULL, &operands, NULL));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmRunOperands(handle, NULL, &operands, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmRunOperands: gemm is NULL");
  /* Refused before the GEMM is looked at: anything but NULL will do. */
  EXPECT_STATUS(
      PTXGEN_STATUS_INVALID_VALUE,
      ptxgenGemmRunOperands(handle, (ptxgenGemm_t)&handle, NULL, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmRunOperands: operands is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmPrepareWithWorkspaceMode(
                    NULL, &problem, PTXGEN_WORKSPACE_CALLER, &gemm));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmPrepareWithWorkspaceMode(
                    handle, NULL, PTXGEN_WORKSPACE_CALLER, &gemm));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmPrepareWithWorkspaceMode: problem is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmPrepareWithWorkspaceMode(
                    handle, &problem, PTXGEN_WORKSPACE_CALLER, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmPrepareWithWorkspaceMode: gemm is NULL");
  size_t bytes = 7;
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmGetWorkspaceSize(NULL, &bytes));
  EXPECT(bytes == 7);
  /* Not a GEMM: refused, and nothing written through `bytes`. */
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmGetWorkspaceSize((ptxgenGemm_t)&handle, &bytes));
  EXPECT(bytes == 7);
  EXPECT_STATUS(
      PTXGEN_STATUS_INVALID_VALUE,
      ptxgenGemmRunWithWorkspace(NULL, NULL, &operands, NULL, 0, NULL));
  EXPECT_STATUS(
      PTXGEN_STATUS_INVALID_VALUE,
      ptxgenGemmRunWithWorkspace(handle, NULL, &operands, NULL, 0, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmRunWithWorkspace: gemm is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmRunWithWorkspace(handle, (ptxgenGemm_t)&handle, NULL,
                                           NULL, 0, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmRunWithWorkspace: operands is NULL");
  /* A pointer that is not a live GEMM is refused as one. */
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmRunWithWorkspace(handle, (ptxgenGemm_t)&handle,
                                           &operands, NULL, 0, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmRunWithWorkspace: gemm is not a live object");
  /* A capture's id needs somewhere to go. */
  unsigned long long capture = 5;
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenStreamGetCaptureId(NULL, NULL, &capture));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenStreamGetCaptureId(handle, NULL, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenStreamGetCaptureId: id is NULL");
  EXPECT(capture == 5);
  /* Without a driver there is no device to ask, as Prepare says too. */
  EXPECT_STATUS(PTXGEN_STATUS_NO_DEVICE,
                ptxgenStreamGetCaptureId(handle, NULL, &capture));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenStreamGetCaptureId: no CUDA driver found");
  EXPECT(capture == 5);
  /* The zeroed workspace's entry point: the same refusals, naming it. */
  EXPECT_STATUS(
      PTXGEN_STATUS_INVALID_VALUE,
      ptxgenGemmRunWithZeroedWorkspace(NULL, NULL, &operands, NULL, 0, NULL));
  EXPECT_STATUS(
      PTXGEN_STATUS_INVALID_VALUE,
      ptxgenGemmRunWithZeroedWorkspace(handle, NULL, &operands, NULL, 0, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmRunWithZeroedWorkspace: gemm is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmRunWithZeroedWorkspace(handle, (ptxgenGemm_t)&handle,
                                                 &operands, NULL, 0, NULL));
  EXPECT_CONTAINS(
      ptxgenGetLastErrorMessage(handle),
      "ptxgenGemmRunWithZeroedWorkspace: gemm is not a live object");
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(NULL), "the handle is NULL");
  /* Destroying nothing is nothing. */
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS, ptxgenDestroy(NULL));
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS, ptxgenPlanDestroy(NULL));
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS, ptxgenGemmDestroy(NULL));
}

/* A workspace mode outside its enumeration is refused naming it, before
   the problem is read or a device looked for; a GEMM prepared with a mode
   is a GEMM like any (here: none, there being no device). */
static void RefusesAWorkspaceModeOutsideItsEnumeration(void) {
  const ptxgenGemmProblem_t problem = Plain();
  const int modes[] = {2, -1};
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i) {
    ptxgenGemm_t gemm = (ptxgenGemm_t)&handle;
    EXPECT_STATUS(
        PTXGEN_STATUS_INVALID_VALUE,
        ptxgenGemmPrepareWithWorkspaceMode(
            handle, &problem, (ptxgenWorkspaceMode_t)modes[i], &gemm));
    EXPECT(gemm == NULL);
  }
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmPrepareWithWorkspaceMode: mode: -1 is not a "
                  "ptxgenWorkspaceMode_t (PTXGEN_WORKSPACE_OWNED=0, "
                  "PTXGEN_WORKSPACE_CALLER=1)");
  ptxgenGemm_t gemm = (ptxgenGemm_t)&handle;
  EXPECT_STATUS(PTXGEN_STATUS_NO_DEVICE,
                ptxgenGemmPrepareWithWorkspaceMode(
                    handle, &problem, PTXGEN_WORKSPACE_CALLER, &gemm));
  EXPECT(gemm == NULL);
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmPrepareWithWorkspaceMode: no CUDA driver found");
}

/* The problem's rules come first, then whether there is a device. */
static void PreparingWithoutADeviceIsNoDevice(void) {
  const ptxgenGemmProblem_t problem = Plain();
  ptxgenGemm_t gemm = (ptxgenGemm_t)&handle;
  EXPECT_STATUS(PTXGEN_STATUS_NO_DEVICE,
                ptxgenGemmPrepare(handle, &problem, &gemm));
  EXPECT(gemm == NULL);
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenGemmPrepare: no CUDA driver found");
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "/nonexistent/libcuda.so.1");
  ptxgenGemmProblem_t odd = Plain();
  odd.k = 4100;
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenGemmPrepare(handle, &odd, &gemm));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "k must be a multiple of 8");
}

static void* FailInAnotherThread(void* unused) {
  (void)unused;
  ptxgenGemmProblem_t empty = Plain();
  empty.k = 0;
  ptxgenPlan_t plan = NULL;
  ptxgenPlanGemm(handle, &empty, NULL, &plan);
  return strstr(ptxgenGetLastErrorMessage(handle), "k=0") != NULL ? handle
                                                                  : NULL;
}

/* Like errno: a thread's failure does not overwrite another's message. */
static void EachThreadReadsItsOwnLastMessage(void) {
  ptxgenGemmProblem_t odd = Plain();
  odd.k = 4100;
  ptxgenPlan_t plan = NULL;
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanGemm(handle, &odd, NULL, &plan));
  pthread_t thread;
  void* saw_its_own = NULL;
  EXPECT(pthread_create(&thread, NULL, FailInAnotherThread, NULL) == 0);
  EXPECT(pthread_join(thread, &saw_its_own) == 0);
  EXPECT(saw_its_own == handle);
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "k must be a multiple of 8");
}

/* ---- Attention ---- */

/* Llama 3 8B's attention: 32 query heads sharing 8 K/V heads, bf16. */
static ptxgenAttentionProblem_t Attention(void) {
  ptxgenAttentionProblem_t problem;
  ptxgenAttentionProblemInit(&problem, 2, 32, 8, 1024, 1024, 128,
                             PTXGEN_TYPE_BF16);
  return problem;
}

static void AnInitializedAttentionProblemIsThePackedOne(void) {
  ptxgenAttentionProblem_t problem;
  memset(&problem, 0x5a, sizeof problem);
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                ptxgenAttentionProblemInit(&problem, 2, 32, 8, 512, 1024, 128,
                                           PTXGEN_TYPE_F16));
  EXPECT(problem.batch == 2 && problem.heads_q == 32 && problem.heads_kv == 8);
  EXPECT(problem.seq_q == 512 && problem.seq_k == 1024);
  EXPECT(problem.head_dim == 128 && problem.element_type == PTXGEN_TYPE_F16);
  EXPECT(problem.causal == 0 && problem.scale == 0.0f);
  EXPECT(problem.layout == PTXGEN_ATTENTION_LAYOUT_BSHD);
  EXPECT(problem.q_stride.batch == 0 && problem.k_stride.seq == 0 &&
         problem.v_stride.head == 0 && problem.o_stride.seq == 0);
  EXPECT(problem.variable_lengths == 0 && problem.total_q == 0 &&
         problem.total_k == 0);
  const ptxgenAttentionProblem_t before = problem;
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionProblemInit(&problem, 2, 32, 8, 0, 1024, 128,
                                           PTXGEN_TYPE_F16));
  EXPECT(problem.seq_q == before.seq_q);
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionProblemInit(&problem, 2, 32, 8, 512, 1024, 128,
                                           (ptxgenDataType_t)42));
  EXPECT(problem.element_type == before.element_type);
}

/* Packed BSHD, SDPA's BHSD with padded rows, and variable lengths, whose
   LSE is [heads_q, total_q]. */
static void SpansAttentionProblems(void) {
  ptxgenAttentionProblem_t problem = Attention();
  ptxgenAttentionSpans_t spans;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                ptxgenAttentionGetSpans(handle, &problem, &spans));
  EXPECT(spans.q == 2LL * 1024 * 32 * 128 && spans.o == spans.q);
  EXPECT(spans.k == 2LL * 1024 * 8 * 128 && spans.v == spans.k);
  EXPECT(spans.lse == 2LL * 32 * 1024);
  problem.layout = PTXGEN_ATTENTION_LAYOUT_BHSD;
  problem.q_stride.seq = 192;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                ptxgenAttentionGetSpans(handle, &problem, &spans));
  EXPECT(spans.q == (2LL * 32 * 1024 - 1) * 192 + 128);
  ptxgenAttentionProblem_t varlen = Attention();
  varlen.variable_lengths = 1;
  varlen.total_q = 3000;
  varlen.total_k = 5000;
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                ptxgenAttentionGetSpans(handle, &varlen, &spans));
  EXPECT(spans.q == 3000LL * 32 * 128 && spans.k == 5000LL * 8 * 128);
  EXPECT(spans.lse == 32LL * 3000);
}

/* Prepares `problem`, expecting a refusal with `status` naming `rule`; the
   attention stays NULL. */
static void ExpectAttentionRefused(ptxgenAttentionProblem_t problem,
                                   ptxgenStatus_t status, const char* rule) {
  ptxgenAttention_t attention = (ptxgenAttention_t)&handle;
  EXPECT_STATUS(status, ptxgenAttentionPrepare(handle, &problem, &attention));
  EXPECT(attention == NULL);
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenAttentionPrepare: ");
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle), rule);
}

/* The attention layer's rules, and the C struct's enumerations and flags,
   as PTXGEN_STATUS_INVALID_VALUE before any device is looked for; a valid
   problem without a device, PTXGEN_STATUS_NO_DEVICE. */
static void RefusesAttentionProblemsByTheirRules(void) {
  ptxgenAttentionProblem_t f32 = Attention();
  f32.element_type = PTXGEN_TYPE_F32;
  ExpectAttentionRefused(f32, PTXGEN_STATUS_INVALID_VALUE,
                         "attention: element must be f16 or bf16, not f32");
  ptxgenAttentionProblem_t odd = Attention();
  odd.head_dim = 100;
  ExpectAttentionRefused(odd, PTXGEN_STATUS_INVALID_VALUE,
                         "head_dim=100 must be a multiple of 16");
  ptxgenAttentionProblem_t negative = Attention();
  negative.scale = -1.0f;
  ExpectAttentionRefused(negative, PTXGEN_STATUS_INVALID_VALUE,
                         "scale=-1 must be finite and positive");
  ptxgenAttentionProblem_t layout = Attention();
  layout.layout = (ptxgenAttentionLayout_t)7;
  ExpectAttentionRefused(
      layout, PTXGEN_STATUS_INVALID_VALUE,
      "ptxgenAttentionProblem_t.layout: 7 is not a ptxgenAttentionLayout_t "
      "(PTXGEN_ATTENTION_LAYOUT_BSHD=0, PTXGEN_ATTENTION_LAYOUT_BHSD=1)");
  ptxgenAttentionProblem_t causal = Attention();
  causal.causal = 2;
  ExpectAttentionRefused(causal, PTXGEN_STATUS_INVALID_VALUE,
                         "ptxgenAttentionProblem_t.causal: 2 is not 0 or 1");
  ptxgenAttentionProblem_t zeroed;
  memset(&zeroed, 0, sizeof zeroed);
  ExpectAttentionRefused(zeroed, PTXGEN_STATUS_INVALID_VALUE,
                         "batch=0 is outside");
  ExpectAttentionRefused(Attention(), PTXGEN_STATUS_NO_DEVICE,
                         "no CUDA driver found");
}

/* An attention planned without a GPU, on an H200 and on 8 SMs: the
   kernel's text, PTX, CUBIN and names, and its persistent grid (2 x 8
   heads x 2 blocks of 128 query rows, causal: 16 turns of two tiles). A
   problem or target breaking a rule is refused naming it, and the plan is
   NULL. */
static void PlansAnAttentionWithoutAGpu(void) {
  ptxgenAttentionProblem_t problem;
  ptxgenAttentionProblemInit(&problem, 2, 8, 2, 256, 384, 64, PTXGEN_TYPE_BF16);
  problem.causal = 1;
  ptxgenTarget_t small;
  ptxgenTargetH200(&small);
  small.sm_count = 8;
  const ptxgenTarget_t* targets[] = {NULL, &small};
  const int64_t grids[] = {16, 8};
  for (int t = 0; t < 2; ++t) {
    ptxgenPlan_t plan = NULL;
    EXPECT_STATUS(PTXGEN_STATUS_SUCCESS,
                  ptxgenPlanAttention(handle, &problem, targets[t], &plan));
    if (plan == NULL) {
      printf("  refused: %s\n", ptxgenGetLastErrorMessage(handle));
      continue;
    }
    ptxgenKernelInfo_t info;
    EXPECT_STATUS(PTXGEN_STATUS_SUCCESS, ptxgenPlanGetKernelInfo(plan, &info));
    EXPECT_CONTAINS(info.kernel_name, "attention_bf16_d64_causal");
    EXPECT_CONTAINS(info.source, info.kernel_name);
    EXPECT_CONTAINS(info.ptx, ".target sm_90a");
    EXPECT(info.cubin != NULL && info.cubin_size > 0);
    EXPECT(strcmp(info.form_name, "attention.bf16.d64+causal") == 0);
    EXPECT(strlen(info.config_name) > 0);
    EXPECT(info.grid_x == grids[t] && info.grid_y == 1 && info.grid_z == 1);
    EXPECT(info.cluster_x == 1 && info.shared_bytes > 0);
    EXPECT(info.spill_store_bytes == 0);
    ptxgenPlanDestroy(plan);
  }
  ptxgenPlan_t plan = (ptxgenPlan_t)&handle;
  ptxgenAttentionProblem_t odd = problem;
  odd.head_dim = 72;
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanAttention(handle, &odd, NULL, &plan));
  EXPECT(plan == NULL);
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle), "head_dim");
  small.sm_count = 0;
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanAttention(handle, &problem, &small, &plan));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenPlanAttention: attention target: sm_count=0 is "
                  "outside 1..1024");
  /* scale * log2(e) would be infinite in the kernel. */
  ptxgenAttentionProblem_t huge_scale = problem;
  huge_scale.scale = 3e38f;
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanAttention(handle, &huge_scale, NULL, &plan));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "attention: scale=3e+38 is too large");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanAttention(handle, NULL, NULL, &plan));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenPlanAttention: problem is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanAttention(handle, &problem, NULL, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenPlanAttention: plan is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenPlanAttention(NULL, &problem, NULL, &plan));
}

static void RefusesNullAttentionArguments(void) {
  const ptxgenAttentionProblem_t problem = Attention();
  ptxgenAttentionSpans_t spans;
  ptxgenAttention_t attention = NULL;
  ptxgenKernelInfo_t info;
  EXPECT_STATUS(
      PTXGEN_STATUS_INVALID_VALUE,
      ptxgenAttentionProblemInit(NULL, 1, 1, 1, 1, 1, 64, PTXGEN_TYPE_F16));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionGetSpans(NULL, &problem, &spans));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionGetSpans(handle, NULL, &spans));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenAttentionGetSpans: problem is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionGetSpans(handle, &problem, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenAttentionGetSpans: spans is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionPrepare(NULL, &problem, &attention));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionPrepare(handle, NULL, &attention));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenAttentionPrepare: problem is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionPrepare(handle, &problem, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenAttentionPrepare: attention is NULL");
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionGetKernelInfo(NULL, &info));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionRun(NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                   NULL, NULL, NULL));
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionRun(handle, NULL, NULL, NULL, NULL, NULL, NULL,
                                   NULL, NULL, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenAttentionRun: attention is NULL");
  /* Not an attention: refused as one, never used. */
  EXPECT_STATUS(PTXGEN_STATUS_INVALID_VALUE,
                ptxgenAttentionRun(handle, (ptxgenAttention_t)&handle, NULL,
                                   NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  EXPECT_CONTAINS(ptxgenGetLastErrorMessage(handle),
                  "ptxgenAttentionRun: attention is not a live object");
  EXPECT_STATUS(PTXGEN_STATUS_SUCCESS, ptxgenAttentionDestroy(NULL));
}

/* ---- main ---- */

struct TestCase {
  const char* name;
  void (*run)(void);
  int failures;
};

#define TEST_CASE(name) \
  { #name, name, 0 }

static struct TestCase tests[] = {
    TEST_CASE(EveryStatusHasANameAndASentence),
    TEST_CASE(AnInitializedProblemIsThePlainPackedOne),
    TEST_CASE(AnInitializedProblemHasItsInputTypesDefaultOutput),
    TEST_CASE(PlansTheReadmesProblemsAndShowsWhatItGenerated),
    TEST_CASE(PlansFp8Tf32AndIntegerProblems),
    TEST_CASE(PlansBlockScaledFp8AndSpansItsScales),
    TEST_CASE(ABundledProblemIsReadFromTheSharedBundle),
    TEST_CASE(RefusesTypesTheLibraryDoesNotCompute),
    TEST_CASE(RefusesProblemsThatBreakARule),
    TEST_CASE(RefusesValuesOutsideAnEnumeration),
    TEST_CASE(RefusesTargetsByTheirRules),
    TEST_CASE(FitsTheKernelToTheTargetsSharedMemory),
    TEST_CASE(RefusesNullArguments),
    TEST_CASE(PreparingWithoutADeviceIsNoDevice),
    TEST_CASE(RefusesAWorkspaceModeOutsideItsEnumeration),
    TEST_CASE(EachThreadReadsItsOwnLastMessage),
    TEST_CASE(AnInitializedAttentionProblemIsThePackedOne),
    TEST_CASE(SpansAttentionProblems),
    TEST_CASE(RefusesAttentionProblemsByTheirRules),
    TEST_CASE(RefusesNullAttentionArguments),
    TEST_CASE(PlansAnAttentionWithoutAGpu),
};

static void WriteXml(const char* path, int count, int failed) {
  FILE* xml = fopen(path, "w");
  if (xml == NULL) return;
  fprintf(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(xml, "<testsuites tests=\"%d\" failures=\"%d\">\n", count, failed);
  fprintf(xml, "  <testsuite name=\"CApi\" tests=\"%d\" failures=\"%d\">\n",
          count, failed);
  for (int i = 0; i < count; ++i) {
    fprintf(xml, "    <testcase name=\"%s\" classname=\"CApi\" status=\"run\">",
            tests[i].name);
    if (tests[i].failures > 0) {
      fprintf(xml, "<failure message=\"%d failed checks (see the test log)\"/>",
              tests[i].failures);
    }
    fprintf(xml, "</testcase>\n");
  }
  fprintf(xml, "  </testsuite>\n</testsuites>\n");
  fclose(xml);
}

int main(void) {
  /* Read at the driver's first load and the kernel cache's first use. */
  setenv("PTXGEN_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  FindKernelBundle();
  const char* tmp = getenv("TEST_TMPDIR");
  snprintf(cache_folder, sizeof cache_folder, "%s/kernel_cache",
           tmp != NULL ? tmp : "/tmp");
  setenv("PTXGEN_CACHE_DIR", cache_folder, 1);
  setenv("PTXGEN_CACHE_PATH", bundle, 1);
  if (ptxgenCreate(&handle) != PTXGEN_STATUS_SUCCESS) return 1;
  const int count = (int)(sizeof tests / sizeof tests[0]);
  int failed = 0;
  for (int i = 0; i < count; ++i) {
    printf("[ RUN      ] CApi.%s\n", tests[i].name);
    current_failures = 0;
    tests[i].run();
    tests[i].failures = current_failures;
    failed += current_failures > 0;
    printf("[ %s ] CApi.%s\n", current_failures > 0 ? " FAILED " : "      OK",
           tests[i].name);
  }
  ptxgenDestroy(handle);
  const char* xml = getenv("XML_OUTPUT_FILE");
  if (xml != NULL) WriteXml(xml, count, failed);
  printf("%d passed, %d failed\n", count - failed, failed);
  return failed == 0 ? 0 : 1;
}
