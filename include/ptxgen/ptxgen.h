#ifndef PTXGEN_PTXGEN_H_
#define PTXGEN_PTXGEN_H_

/*
 * The C API of ptxgen, in libptxgen.so: Hopper (sm_90a) GEMMs generated at
 * run time, for each of `batch` problems
 *
 *   D = act(alpha * op(A) * op(B) + beta * C + bias)
 *
 * with A [m,k] (K-major) or [k,m] (MN-major), B [n,k] (K-major) or [k,n]
 * (MN-major), C and D [m,n] row-major. Inputs: f16 or bf16 (either
 * major); e4m3 or e5m2 (fp8, K-major; A and B may mix the two), optionally
 * with per-tensor scales read from device memory; tf32 (f32 in memory,
 * K-major, tf32 tensor cores). f32 accumulation. D in f16, bf16, f32, e4m3
 * or e5m2 (an fp8 D rounded with saturation, times *scale_d with
 * per-tensor scaling, and read with no C), optionally with the largest |D|
 * recorded. s8 or u8 (K-major; mixed allowed) summed exactly in s32, D in
 * s32 (the sums), s8 (alpha times them, saturated) or a float type. All of
 * it is row-major: the plain problem (both K-major) is
 * torch.nn.functional.linear(A, B). The batch may instead be the groups of
 * a grouped GEMM (ptxgenGrouping_t: mixture-of-experts layers, each
 * group's rows read from the device). And attention forward
 * (ptxgenAttentionProblem_t): for each sequence and query head
 *
 *   O = softmax(Q * K^T * scale + mask) * V
 *
 * and each query row's log-sum-exp, from f16 or bf16 Q, K and V with
 * grouped-query heads, a causal mask and variable lengths.
 *
 *   ptxgenHandle_t handle;
 *   ptxgenCreate(&handle);
 *   ptxgenGemmProblem_t problem;
 *   ptxgenGemmProblemInit(&problem, m, n, k, PTXGEN_TYPE_F16);
 *
 *   ptxgenPlan_t plan;                       // no GPU needed
 *   ptxgenPlanGemm(handle, &problem, NULL, &plan);   // NULL: an H200
 *   ptxgenKernelInfo_t info;
 *   ptxgenPlanGetKernelInfo(plan, &info);    // info.source, info.ptx, ...
 *   ptxgenPlanDestroy(plan);
 *
 *   ptxgenGemm_t gemm;                       // on the current device
 *   if (ptxgenGemmPrepare(handle, &problem, &gemm) == PTXGEN_STATUS_SUCCESS) {
 *     ptxgenGemmRun(handle, gemm, a, b, NULL, d, NULL, stream);
 *     // or, with scales: ptxgenGemmRunOperands(handle, gemm, &ops, stream)
 *     ptxgenGemmDestroy(gemm);
 *   } else {
 *     puts(ptxgenGetLastErrorMessage(handle));  // names the broken rule
 *   }
 *
 *   ptxgenAttentionProblem_t attn;           // Q [batch, seq, heads, dim]
 *   ptxgenAttentionProblemInit(&attn, batch, heads_q, heads_kv, seq_q, seq_k,
 *                              head_dim, PTXGEN_TYPE_BF16);
 *   attn.causal = 1;
 *   ptxgenPlanAttention(handle, &attn, NULL, &plan);  // no GPU needed
 *   ptxgenPlanDestroy(plan);
 *   ptxgenAttention_t attention;             // on the current device
 *   ptxgenAttentionPrepare(handle, &attn, &attention);
 *   ptxgenAttentionRun(handle, attention, q, k, v, o, lse, NULL, NULL, stream);
 *   ptxgenAttentionDestroy(attention);
 *   ptxgenDestroy(handle);
 *
 * Every function returns a status and never throws or aborts on bad input:
 * a null pointer, an enumeration value outside its enumeration, a flag
 * other than 0 or 1 and a problem breaking a rule are
 * PTXGEN_STATUS_INVALID_VALUE, with the rule in the handle's last error
 * message.
 *
 * Lifetime: a handle, plan, GEMM or attention used after it is destroyed
 * (a second destroy too) is undefined behaviour, as in cuBLAS. ptxgen
 * detects it where it can: each object's first word names its kind and is
 * cleared on destroy, and a pointer whose word is not its kind's (a
 * destroyed object whose memory was not reused, a pointer to another kind)
 * is PTXGEN_STATUS_INVALID_VALUE, never freed.
 *
 * Threads: a handle may be used by several threads at once; each thread
 * reads the message of its own last call (ptxgenGetLastErrorMessage). Plans,
 * GEMMs and attentions do not change once made: any thread may read them,
 * and run a GEMM (but see ptxgenGemmRun on split-K and stream-K
 * workspaces) or an attention.
 *
 * Streams and CUDA graphs: a run only enqueues work on its stream (no
 * allocation, synchronization or module load), so it may be captured into
 * a CUDA graph. A GEMM prepared with PTXGEN_WORKSPACE_CALLER owns no
 * workspace: each run is given one, as cuBLASLt's, and runs on several
 * streams may overlap.
 *
 *   ptxgenGemmPrepareWithWorkspaceMode(handle, &problem,
 *                                      PTXGEN_WORKSPACE_CALLER, &gemm);
 *   size_t bytes;
 *   ptxgenGemmGetWorkspaceSize(gemm, &bytes);   // 0: none needed
 *   ptxgenGemmRunWithWorkspace(handle, gemm, &ops, workspace, bytes, stream);
 *
 * A workspace kept for one stream and zeroed once when allocated may go to
 * ptxgenGemmRunWithZeroedWorkspace instead, which leaves out stream-K's
 * zeroing of its flags (a memset launch) from every run.
 *
 * ABI: before 1.0 a struct may grow at its end with the version string
 * unchanged (ptxgenGemmProblem_t grew by b_input_type, scaling,
 * fast_accumulation, record_amax, grouping and expected_m;
 * ptxgenGemmOperands_t by group_rows): a caller compiled against an older
 * header must be rebuilt, since the library reads, and
 * ptxgenGemmProblemInit writes, the whole struct.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * In C++ the enumerations have the fixed underlying type int, so every int
 * a C caller stores in one is a value of it that the library can check,
 * instead of undefined behaviour. Their size is that of int in C too.
 */
#ifdef __cplusplus
#define PTXGEN_ENUM(name) enum name : int
#else
#define PTXGEN_ENUM(name) enum name
#endif

/* What every call returns. */
typedef PTXGEN_ENUM(ptxgenStatus_t){
    PTXGEN_STATUS_SUCCESS = 0,
    /* A null pointer, an unknown enumeration value, or a problem or target
       that breaks a rule (the message names it). */
    PTXGEN_STATUS_INVALID_VALUE = 1,
    /* A valid problem no kernel computes on the target (e.g. one with more
       tiles than the kernel counts in 32 bits). */
    PTXGEN_STATUS_NOT_SUPPORTED = 2,
    /* No CUDA driver could be loaded ($PTXGEN_LIBCUDA or libcuda.so.1), it
       did not initialize, or it sees no device. Planning needs none. */
    PTXGEN_STATUS_NO_DEVICE = 3,
    /* The device cannot run sm_90a code: only compute capability 9.0 can. */
    PTXGEN_STATUS_ARCH_MISMATCH = 4,
    /* Host or device memory could not be allocated. */
    PTXGEN_STATUS_ALLOC_FAILED = 5,
    /* The driver refused to load the kernel or to launch it. */
    PTXGEN_STATUS_EXECUTION_FAILED = 6,
    /* A failure the library did not expect: please report the message. */
    PTXGEN_STATUS_INTERNAL_ERROR = 7,
} ptxgenStatus_t;

/* Element types of A, B, C, D and the bias. */
typedef PTXGEN_ENUM(ptxgenDataType_t){
    PTXGEN_TYPE_F16 = 0,  /* IEEE half */
    PTXGEN_TYPE_BF16 = 1, /* bfloat16 */
    PTXGEN_TYPE_F32 = 2,  /* D and the bias only (f32 inputs: TF32) */
    /* fp8: 4 exponent bits, no infinities, largest 448
       (torch.float8_e4m3fn). A, B, D. */
    PTXGEN_TYPE_E4M3 = 3,
    /* fp8: 5 exponent bits, IEEE-like, largest 57344 (torch.float8_e5m2).
       A, B, D. */
    PTXGEN_TYPE_E5M2 = 4,
    /* A and B only: f32 in memory, multiplied by tf32 tensor cores (10 of
       its 23 mantissa bits). */
    PTXGEN_TYPE_TF32 = 5,
    /* 8-bit integers, A and B (mixed allowed), K-major; summed exactly in
       s32. An s8 D is alpha times the sums, rounded to nearest with
       saturation (no C). */
    PTXGEN_TYPE_S8 = 6,
    PTXGEN_TYPE_U8 = 7,
    /* D only, from s8/u8 inputs, and their default: the exact sums (alpha 1;
       no C, bias, activation or amax). */
    PTXGEN_TYPE_S32 = 8,
} ptxgenDataType_t;

/* Which dimension of a stored operand is contiguous. */
typedef PTXGEN_ENUM(ptxgenMajor_t){
    /* A stored [m,k], B stored [n,k]: K is contiguous (torch.nn.functional
       .linear's weight). */
    PTXGEN_MAJOR_K = 0,
    /* A stored [k,m], B stored [k,n]: M (N) is contiguous (the right operand
       of torch.matmul). 16-bit inputs only. */
    PTXGEN_MAJOR_MN = 1,
} ptxgenMajor_t;

/* Where a bias vector runs. */
typedef PTXGEN_ENUM(ptxgenBias_t){
    PTXGEN_BIAS_NONE = 0,
    PTXGEN_BIAS_M = 1, /* one value per row of D: m values */
    PTXGEN_BIAS_N = 2, /* one value per column of D: n values (linear's) */
} ptxgenBias_t;

/* The activation applied in f32 before D is rounded. */
typedef PTXGEN_ENUM(ptxgenActivation_t){
    PTXGEN_ACTIVATION_NONE = 0,      PTXGEN_ACTIVATION_RELU = 1,
    PTXGEN_ACTIVATION_GELU = 2,      /* erf form: 0.5 v (1 + erf(v / sqrt 2)) */
    PTXGEN_ACTIVATION_GELU_TANH = 3, /* tanh form (cuBLASLt's GELU); tanh
                                        approximate (2^-11) into a 16- or
                                        8-bit D */
    PTXGEN_ACTIVATION_SILU = 4,      /* v / (1 + exp(-v)) */
} ptxgenActivation_t;

/* How fp8 inputs carry their range. */
typedef PTXGEN_ENUM(ptxgenScaling_t){
    PTXGEN_SCALING_NONE = 0,
    /* alpha is multiplied by the f32 scalars scale_a and scale_b point to
       (ptxgenGemmOperands_t), read by the kernel, as cuBLASLt's scale
       pointers; an e4m3/e5m2 D is multiplied by *scale_d before it is
       rounded. fp8 inputs only. */
    PTXGEN_SCALING_TENSOR = 1,
    /* DeepGEMM's block scaling: scale_a and scale_b point to f32 arrays,
       A's one scale per row and 128 of k, B's one per 128 x 128 block,
       multiplied into each 128-k stage's sums. A's of row i, k-block kb,
       batch g at scale_a[(g * k_blocks + kb) * m + i]; B's of column block
       jb at scale_b[(g * n_blocks + jb) * k_blocks + kb], the last blocks of
       k and n ragged (ptxgenGemmGetSpans gives each array's floats). E4M3
       and E5M2 inputs; D F16, BF16 or F32. */
    PTXGEN_SCALING_BLOCK = 2,
} ptxgenScaling_t;

/* Grouped GEMMs (mixture-of-experts layers): `batch` groups (experts) that
   share n and k, each with its own B, whose rows only the device knows:
   the kernel reads them from the int32 array
   ptxgenGemmOperands_t.group_rows points to, never the host, so a run may
   be captured in a CUDA graph once and replayed with new counts. */
typedef PTXGEN_ENUM(ptxgenGrouping_t){
    PTXGEN_GROUPING_NONE = 0, /* a GEMM, or a strided batch of them */
    /* A [m,k] and C, D [m,n] hold every group's rows, group after group (m:
       their total); B [batch,n,k] (or [batch,k,n] MN-major), stride_b
       apart. group_rows[g] is where group g's rows end, cumulative
       (torch._grouped_mm's offs). A, C and D are one matrix each:
       stride_a, stride_c and stride_d must be 0. */
    PTXGEN_GROUPING_CONTIGUOUS = 1,
    /* A [batch,m,k] and C, D [batch,m,n] (m: the rows each group has room
       for); group g uses its first group_rows[g] rows (DeepGEMM's
       masked_m). */
    PTXGEN_GROUPING_MASKED = 2,
} ptxgenGrouping_t;

/*
 * One GEMM problem. Start from ptxgenGemmProblemInit, then change fields:
 * a zeroed struct has alpha = 0 and batch = 0, which compute nothing useful
 * (batch = 0 is refused).
 */
typedef struct ptxgenGemmProblem_t {
  int64_t m, n, k; /* each 1..2^31-1 */
  /* A (and B, see b_input_type): F16, BF16, E4M3, E5M2, TF32, S8 or U8. */
  ptxgenDataType_t input_type;
  /* C and D: F16, BF16 or F32; D also E4M3 or E5M2, and from S8/U8 also S8
     or S32 (beta 0: no C). ptxgenGemmProblemInit sets the input type's
     default: itself for F16 and BF16, BF16 for fp8, F32 for TF32, S32 for
     S8 and U8. */
  ptxgenDataType_t output_type;
  ptxgenMajor_t a_major, b_major;
  /* Elements between consecutive rows of each matrix as stored; 0: packed
     (the stored row's length). A's and B's rows must start on 16 bytes
     (TMA): with packed K-major operands, k a multiple of 8 (16 for fp8,
     s8 and u8, 4 for tf32). */
  int64_t lda, ldb, ldc, ldd;
  int64_t batch; /* GEMMs of one call, 1..65535 */
  /* Elements between consecutive matrices of the batch; 0: packed. The
     bias's: 0 shares one vector among the batch. */
  int64_t stride_a, stride_b, stride_c, stride_d, stride_bias;
  float alpha; /* finite */
  float beta;  /* finite; 0 never reads C */
  ptxgenBias_t bias;
  ptxgenDataType_t bias_type; /* F16, BF16 or F32 */
  ptxgenActivation_t activation;
  /* B's type, as cuBLASLt takes it beside A's: input_type, or E5M2 with an
     E4M3 A (E4M3 with E5M2) for mixed fp8, U8 with S8 (S8 with U8) for
     mixed integers. ptxgenGemmProblemInit sets it
     to input_type: a caller changing input_type changes it too. */
  ptxgenDataType_t b_input_type;
  ptxgenScaling_t scaling; /* PTXGEN_SCALING_NONE unless fp8 */
  /* fp8, 0 or 1: 1 adds every k-step in wgmma's reduced-precision
     accumulator (faster, cuBLASLt's fast accumulation); 0 promotes the sums
     into f32 registers every stage of 128 k. */
  int fast_accumulation;
  /* 0 or 1: 1 writes the largest |D| before scale_d (cuBLASLt's amax of D)
     to the f32 ptxgenGemmOperands_t.amax_d points to. */
  int record_amax;
  /* A grouped GEMM (ptxgenGrouping_t), batch its groups (1..65535): a bias
     runs along n, one vector per group stride_bias apart (0 shares one),
     and D is stored as the grouping says. Rows group_rows puts outside
     0..m are clipped. */
  ptxgenGrouping_t grouping;
  /* Grouped: the rows per group the host plans tiles for (the routing is
     on the device), 0..m; 0: m / batch contiguous, m masked. 0 otherwise. */
  int64_t expected_m;
} ptxgenGemmProblem_t;

/*
 * What planning needs to know of a device; the architecture is sm_90a.
 */
typedef struct ptxgenTarget_t {
  int sm_count; /* 1..1024 */
  /* The most dynamic shared memory a block may opt in to: at least 49152. */
  int max_shared_bytes_per_block_optin;
} ptxgenTarget_t;

/*
 * What was generated for a plan, a GEMM or an attention. The strings and
 * the CUBIN belong to the object they were read from and stay valid until
 * it is destroyed.
 */
typedef struct ptxgenKernelInfo_t {
  const char* kernel_name; /* the extern "C" kernel in source and ptx */
  /* The configuration, as ptxgen's command line takes it:
     "ws 128x256x64 s4 c2 w1 m2 tma g8 persistent"; an attention's says
     what and how: "bf16 d128 causal: 2x64 rows, 128 keys, 2 stages,
     ping-pong". */
  const char* config_name;
  /* What it computes: "f16.kk->f16+bias_n.f32"; an attention's
     "attention.bf16.d128+causal+varlen". */
  const char* form_name;
  const char* source; /* the CUDA C++ given to NVRTC */
  const char* ptx;    /* NVRTC's PTX */
  const void* cubin;  /* ptxas's sm_90a binary, cubin_size bytes */
  size_t cubin_size;
  /* ptxas's resource usage of the kernel. */
  int registers;
  int spill_store_bytes;
  int spill_load_bytes;
  int stack_frame_bytes;
  /* The launch: dynamic shared memory per block (alignment slack
     included), threads per block; a plan's grid and cluster size along x
     (0 for a GEMM, which re-plans its grid with the driver's answer, and
     for an attention). */
  int shared_bytes;
  int threads_per_block;
  int64_t grid_x, grid_y, grid_z;
  int cluster_x;
} ptxgenKernelInfo_t;

/*
 * How many elements each operand of a problem spans as stored, from its
 * first to past its last, padding and batch gaps included: what its buffer
 * must hold. scale_a and scale_b in floats: 1 each with
 * PTXGEN_SCALING_TENSOR, the block scales' counts with PTXGEN_SCALING_BLOCK,
 * else 0; bias 0 without a bias; c 0 with beta = 0, which never reads C.
 */
typedef struct ptxgenGemmSpans_t {
  int64_t a, b, c, d, bias, scale_a, scale_b;
} ptxgenGemmSpans_t;

/*
 * The device pointers of one run (ptxgenGemmRunOperands), each 16-byte
 * aligned apart from the scales and amax_d, which are f32, 4-byte aligned.
 * Zero-initialize it, then set what the problem uses: c is read only when
 * beta != 0 (it may equal d), bias only with a bias; scale_a and scale_b
 * only with scaling: one f32 each with PTXGEN_SCALING_TENSOR (scale_d too
 * when D is E4M3 or E5M2), arrays with PTXGEN_SCALING_BLOCK
 * (ptxgenGemmSpans_t's counts); amax_d is written only with record_amax;
 * group_rows is read only by a grouped problem.
 */
typedef struct ptxgenGemmOperands_t {
  const void* a;
  const void* b;
  const void* c;
  void* d;
  const void* bias;
  const float* scale_a;
  const float* scale_b;
  const float* scale_d;
  float* amax_d;
  /* Grouped problems: `batch` int32 on the device (4-byte aligned), read
     by the kernel: each group's cumulative row end with
     PTXGEN_GROUPING_CONTIGUOUS, its row count with PTXGEN_GROUPING_MASKED. */
  const int* group_rows;
} ptxgenGemmOperands_t;

/* Opaque handles: the library's state, a plan, a prepared GEMM, a prepared
   attention. */
typedef struct ptxgenHandleImpl* ptxgenHandle_t;
typedef struct ptxgenPlanImpl* ptxgenPlan_t;
typedef struct ptxgenGemmImpl* ptxgenGemm_t;
typedef struct ptxgenAttentionImpl* ptxgenAttention_t;
/* A CUDA stream: CUstream and cudaStream_t are this type; NULL is the
   default stream. */
typedef struct CUstream_st* ptxgenStream_t;

/* Who gives a GEMM's workspace: the device memory of split-K's partial sums
   and stream-K's flags and partial sums (most GEMMs need none). */
typedef PTXGEN_ENUM(ptxgenWorkspaceMode_t){
    /* The GEMM allocates one at prepare (ptxgenGemmPrepare's): its runs on
       different streams must not overlap. */
    PTXGEN_WORKSPACE_OWNED = 0,
    /* The GEMM allocates none: every run of one that needs a workspace is
       given one (ptxgenGemmRunWithWorkspace), so its runs may overlap on
       any streams, captured into CUDA graphs or not. */
    PTXGEN_WORKSPACE_CALLER = 1,
} ptxgenWorkspaceMode_t;

/* How an attention's Q, K, V and O nest their dimensions in memory: what
   their 0 (packed) strides become, and which stride must step over which
   (no two rows or heads overlap). head_dim is innermost (stride 1) in
   both. */
typedef PTXGEN_ENUM(ptxgenAttentionLayout_t){
    /* [batch, seq, heads, head_dim]: FlashAttention's, and variable
       lengths' [total, heads, head_dim]. */
    PTXGEN_ATTENTION_LAYOUT_BSHD = 0,
    /* [batch, heads, seq, head_dim]: torch's scaled_dot_product_attention's. */
    PTXGEN_ATTENTION_LAYOUT_BHSD = 1,
} ptxgenAttentionLayout_t;

/* One attention tensor's strides in elements. 0: packed, as the layout
   nests the dimensions (the extent of the next dimension in times its
   stride, so an explicit inner stride's padding carries outward, as
   PyTorch allocates). Each a multiple of 16 bytes, below 2^40 bytes
   (TMA's rules). */
typedef struct ptxgenAttentionStrides_t {
  int64_t batch; /* between sequences; 0 with variable lengths */
  int64_t seq;   /* between rows (positions) of a sequence */
  int64_t head;  /* between heads */
} ptxgenAttentionStrides_t;

/*
 * One attention forward: for each sequence and query head
 * O = softmax(Q * K^T * scale + mask) * V, and each query row's
 * log-sum-exp (natural log, f32), as the caller stores Q, K, V and O.
 * Start from ptxgenAttentionProblemInit, then change fields: a zeroed
 * struct has batch = 0, which is refused.
 */
typedef struct ptxgenAttentionProblem_t {
  /* Fixed lengths: the sequences of the batch; variable: their number.
     This and every size below 1..2^31-1 (the kernel's int). */
  int64_t batch;
  int64_t heads_q;
  /* K's and V's heads, each serving heads_q / heads_kv query heads
     (grouped-query attention; 1: multi-query); 0: heads_q. */
  int64_t heads_kv;
  /* Fixed lengths: every sequence's rows of Q (and O), and of K (and V).
     Variable: the longest the host plans for (the real ones are on the
     device). */
  int64_t seq_q, seq_k;
  int64_t head_dim; /* of Q, K, V and O alike: a multiple of 16, <= 256 */
  ptxgenDataType_t element_type; /* Q, K, V and O: F16 or BF16 */
  /* 0 or 1: 1 masks the keys after each query row, aligned to the
     bottom-right corner when seq_q != seq_k (FlashAttention's): row i sees
     keys 0..i + seq_k - seq_q, so a row that sees none gets O 0 and LSE
     +inf. Variable lengths apply it per sequence. */
  int causal;
  /* Multiplies Q * K^T before the softmax: finite and positive. 0: the
     default, 1/sqrt(head_dim) (0 itself is never a scale: the online
     softmax needs a positive one). */
  float scale;
  ptxgenAttentionLayout_t layout;
  ptxgenAttentionStrides_t q_stride, k_stride, v_stride, o_stride;
  /* 0 or 1: 1 stores Q, K, V and O [total, heads, head_dim] (layout BSHD,
     batch strides 0), the sequences one after another: sequence b has
     rows cu[b]..cu[b+1] of the int32 cumulative offsets each run passes
     (cu_seqlens_q, cu_seqlens_k: batch + 1 each, FlashAttention's).
     Only the kernel reads them, so a run captured in a CUDA graph replays
     with new lengths. */
  int variable_lengths;
  /* Variable lengths: the rows of Q (and O) and of K (and V) as allocated,
     1..2^31-1, inside which every sequence must lie (TMA reads no row
     past them). 0 with fixed lengths. */
  int64_t total_q, total_k;
} ptxgenAttentionProblem_t;

/*
 * How many elements each tensor of an attention spans as stored, from its
 * first to past its last, gaps included: what its buffer must hold. The
 * LSE (f32) is packed: [batch, heads_q, seq_q], or with variable lengths
 * [heads_q, total_q] (FlashAttention's).
 */
typedef struct ptxgenAttentionSpans_t {
  int64_t q, k, v, o, lse;
} ptxgenAttentionSpans_t;

/* ---- Status ---- */

/* "PTXGEN_STATUS_INVALID_VALUE"; a static string, for any value. */
const char* ptxgenGetStatusName(ptxgenStatus_t status);
/* A sentence saying what the status means; a static string, for any value. */
const char* ptxgenGetStatusString(ptxgenStatus_t status);
/* The library's version, "0.1.0": a static string. */
const char* ptxgenGetVersionString(void);

/* ---- Handle ---- */

/* A new handle, owning nothing on the device yet. */
ptxgenStatus_t ptxgenCreate(ptxgenHandle_t* handle);
/* NULL is destroyed as nothing. Plans and GEMMs outlive their handle. */
ptxgenStatus_t ptxgenDestroy(ptxgenHandle_t handle);
/*
 * The full message of the calling thread's last call with `handle`: why it
 * failed, naming the rule, or "" when it succeeded. Valid until this
 * thread's next call with `handle`, or the handle's destruction. For a NULL
 * handle, a static message saying so.
 */
const char* ptxgenGetLastErrorMessage(ptxgenHandle_t handle);

/* ---- Problems and targets ---- */

/* A packed, plain problem: D = A * B^T with both K-major, A and B of
   `type`, D of its default type (see output_type), batch 1, alpha 1, beta
   0, no bias (bias_type F32), no activation, no scaling, no fast
   accumulation, no amax, no grouping (expected_m 0). m, n or k
   outside 1..2^31-1, or a type outside ptxgenDataType_t, is
   PTXGEN_STATUS_INVALID_VALUE, *problem unchanged; the problem's other rules
   are checked where it is used. */
ptxgenStatus_t ptxgenGemmProblemInit(ptxgenGemmProblem_t* problem, int64_t m,
                                     int64_t n, int64_t k,
                                     ptxgenDataType_t type);
/* The scaling named `name`: "none", "tensor" or "block", exactly (the
   command line's --scaling values); any other spelling ("NONE") and a NULL
   argument are PTXGEN_STATUS_INVALID_VALUE, leaving *scaling unchanged. */
ptxgenStatus_t ptxgenGetScalingByName(const char* name,
                                      ptxgenScaling_t* scaling);
/* An H100 SXM or an H200: 132 SMs, 227 KiB of shared memory per block. */
ptxgenStatus_t ptxgenTargetH200(ptxgenTarget_t* target);
/* The spans of a valid problem's operands (refused as ptxgenPlanGemm
   refuses an invalid one). */
ptxgenStatus_t ptxgenGemmGetSpans(ptxgenHandle_t handle,
                                  const ptxgenGemmProblem_t* problem,
                                  ptxgenGemmSpans_t* spans);

/* ---- Plans: no GPU needed ---- */

/*
 * What ptxgenGemmPrepare would do on `target` (NULL: an H200), without a
 * driver: the heuristic's configuration for its SMs, the kernel generated
 * and compiled by NVRTC (through the kernel cache), the launch grid.
 */
ptxgenStatus_t ptxgenPlanGemm(ptxgenHandle_t handle,
                              const ptxgenGemmProblem_t* problem,
                              const ptxgenTarget_t* target, ptxgenPlan_t* plan);
ptxgenStatus_t ptxgenPlanGetKernelInfo(ptxgenPlan_t plan,
                                       ptxgenKernelInfo_t* info);
/* NULL is destroyed as nothing. */
ptxgenStatus_t ptxgenPlanDestroy(ptxgenPlan_t plan);

/* ---- GEMMs: need a Hopper GPU ---- */

/*
 * Plans the problem for the current device and loads its kernel into the
 * current CUDA context (device 0's primary context when none is current):
 * the GEMM runs in that context only.
 */
ptxgenStatus_t ptxgenGemmPrepare(ptxgenHandle_t handle,
                                 const ptxgenGemmProblem_t* problem,
                                 ptxgenGemm_t* gemm);
/*
 * ptxgenGemmPrepare with the workspace's owner chosen: OWNED is
 * ptxgenGemmPrepare's; CALLER allocates none, and every run of a GEMM that
 * needs one (ptxgenGemmGetWorkspaceSize) gives it to
 * ptxgenGemmRunWithWorkspace (ptxgenGemmRun and ptxgenGemmRunOperands
 * refuse it). A mode outside ptxgenWorkspaceMode_t is
 * PTXGEN_STATUS_INVALID_VALUE.
 */
ptxgenStatus_t ptxgenGemmPrepareWithWorkspaceMode(
    ptxgenHandle_t handle, const ptxgenGemmProblem_t* problem,
    ptxgenWorkspaceMode_t mode, ptxgenGemm_t* gemm);
ptxgenStatus_t ptxgenGemmGetKernelInfo(ptxgenGemm_t gemm,
                                       ptxgenKernelInfo_t* info);
/*
 * Computes D on `stream` (asynchronously) from device pointers, each
 * 16-byte aligned: c is read only when beta != 0 (NULL otherwise; it may
 * equal d), bias only with a bias. A split-K or stream-K configuration
 * keeps partial sums in a workspace of this GEMM: runs on different
 * streams must not overlap (or prepare it with PTXGEN_WORKSPACE_CALLER and
 * give each run its own: ptxgenGemmRunWithWorkspace). It runs
 * in the context it was prepared in (made current on a thread with none):
 * another context current, or a stream of another context, gives
 * PTXGEN_STATUS_EXECUTION_FAILED; a pointer the kernel cannot reach from
 * there (another device's memory without peer access, another context's)
 * PTXGEN_STATUS_INVALID_VALUE, as is d (or amax_d, or a caller's
 * workspace) sharing memory with another operand the run uses, other than
 * c itself at the same strides (the kernel would race on it).
 */
ptxgenStatus_t ptxgenGemmRun(ptxgenHandle_t handle, ptxgenGemm_t gemm,
                             const void* a, const void* b, const void* c,
                             void* d, const void* bias, ptxgenStream_t stream);
/*
 * ptxgenGemmRun with every operand, the scale, amax and group_rows
 * pointers too: what a scaled fp8 GEMM, one recording amax or a grouped
 * one runs with (ptxgenGemmRun passes them as NULL; a scaled problem
 * refuses a NULL scale_a or scale_b, a grouped one a NULL group_rows).
 */
ptxgenStatus_t ptxgenGemmRunOperands(ptxgenHandle_t handle, ptxgenGemm_t gemm,
                                     const ptxgenGemmOperands_t* operands,
                                     ptxgenStream_t stream);
/*
 * The bytes of device workspace a run of `gemm` needs (0: none), whichever
 * its mode; the workspace must be 256-byte aligned.
 */
ptxgenStatus_t ptxgenGemmGetWorkspaceSize(ptxgenGemm_t gemm, size_t* bytes);
/*
 * ptxgenGemmRunOperands on the caller's workspace, whichever the GEMM's
 * mode: device memory of the GEMM's context, at least
 * ptxgenGemmGetWorkspaceSize bytes and 256-byte aligned, used only by this
 * run's work on `stream` (stream-K's flags are zeroed there first, so it
 * may differ, and hold anything, every call). Runs on other streams, each
 * given its own, may overlap. A GEMM that needs none ignores it (NULL with
 * 0 bytes will do); one that needs one refuses a NULL, smaller or
 * misaligned workspace, or one it cannot reach, with
 * PTXGEN_STATUS_INVALID_VALUE, naming the bytes it needs.
 */
ptxgenStatus_t ptxgenGemmRunWithWorkspace(ptxgenHandle_t handle,
                                          ptxgenGemm_t gemm,
                                          const ptxgenGemmOperands_t* operands,
                                          void* workspace,
                                          size_t workspace_bytes,
                                          ptxgenStream_t stream);
/*
 * ptxgenGemmRunWithWorkspace on a workspace as runs leave it: all zero
 * (cudaMemset) before its first run, and given since only to runs, of any
 * GEMMs, that completed one after another (a workspace kept for one
 * stream). Each run leaves zero what the next needs zero (stream-K's
 * flags), so this one zeroes nothing first: a launch fewer, and one graph
 * node fewer in a capture. The same refusals.
 */
ptxgenStatus_t ptxgenGemmRunWithZeroedWorkspace(
    ptxgenHandle_t handle, ptxgenGemm_t gemm,
    const ptxgenGemmOperands_t* operands, void* workspace,
    size_t workspace_bytes, ptxgenStream_t stream);
/*
 * The id of the CUDA graph capture underway on `stream` (unique in the
 * process), 0 when none is: a workspace kept for one capture, zeroed once
 * in it (its first run's memset is captured), may go to
 * ptxgenGemmRunWithZeroedWorkspace for the capture's later runs, while the
 * id stays the same. Without a CUDA driver, PTXGEN_STATUS_NO_DEVICE.
 */
ptxgenStatus_t ptxgenStreamGetCaptureId(ptxgenHandle_t handle,
                                        ptxgenStream_t stream,
                                        unsigned long long* id);
/* Frees its workspace, if it owns one; NULL is destroyed as nothing. Not
   while it runs. */
ptxgenStatus_t ptxgenGemmDestroy(ptxgenGemm_t gemm);

/* ---- Attention forward: planning needs no GPU, preparing and running a
   Hopper GPU ---- */

/* A packed problem of `type` (Q [batch, seq_q, heads_q, head_dim], K and V
   [batch, seq_k, heads_kv, head_dim], O as Q: layout BSHD, strides 0), no
   mask, the default scale (0), fixed lengths. A size outside 1..2^31-1, or
   a type outside ptxgenDataType_t, is PTXGEN_STATUS_INVALID_VALUE,
   *problem unchanged; the problem's other rules (F16 or BF16, head_dim,
   ...) are checked where it is used. */
ptxgenStatus_t ptxgenAttentionProblemInit(ptxgenAttentionProblem_t* problem,
                                          int64_t batch, int64_t heads_q,
                                          int64_t heads_kv, int64_t seq_q,
                                          int64_t seq_k, int64_t head_dim,
                                          ptxgenDataType_t type);
/* The spans of a valid problem's tensors (refused as ptxgenAttentionPrepare
   refuses an invalid one); no GPU needed. */
ptxgenStatus_t ptxgenAttentionGetSpans(ptxgenHandle_t handle,
                                       const ptxgenAttentionProblem_t* problem,
                                       ptxgenAttentionSpans_t* spans);
/*
 * What ptxgenAttentionPrepare would do on `target` (NULL: an H200),
 * without a driver: the heuristic's configuration, the kernel generated
 * and compiled by NVRTC (through the kernel cache), the launch grid
 * (grid_x CTAs). A plan as ptxgenPlanGemm's: ptxgenPlanGetKernelInfo reads
 * it, ptxgenPlanDestroy destroys it.
 */
ptxgenStatus_t ptxgenPlanAttention(ptxgenHandle_t handle,
                                   const ptxgenAttentionProblem_t* problem,
                                   const ptxgenTarget_t* target,
                                   ptxgenPlan_t* plan);
/*
 * Plans the problem for the current device (the heuristic's configuration,
 * the kernel generated and compiled through the kernel cache) and loads
 * its kernel into the current CUDA context (device 0's primary context
 * when none is current): the attention runs in that context only.
 */
ptxgenStatus_t ptxgenAttentionPrepare(ptxgenHandle_t handle,
                                      const ptxgenAttentionProblem_t* problem,
                                      ptxgenAttention_t* attention);
/* What was generated; the grid stays 0 (the attention keeps its own). */
ptxgenStatus_t ptxgenAttentionGetKernelInfo(ptxgenAttention_t attention,
                                            ptxgenKernelInfo_t* info);
/*
 * Computes O (and the LSE, when lse is not NULL: f32, packed as
 * ptxgenAttentionSpans_t's lse counts it) on `stream` (asynchronously)
 * from device pointers, q, k, v, o and lse each 16-byte aligned. With
 * variable lengths cu_seqlens_q and cu_seqlens_k are the int32 cumulative
 * offsets (batch + 1 each, from 0, non-decreasing), read only by the
 * kernel, which skips a sequence whose rows are out of order, outside
 * total_q or total_k, or more than seq_q: its rows of o and lse are left
 * as they were, and nothing outside the arrays is read or written; NULL
 * with fixed lengths. Nothing else is needed: no workspace,
 * so runs on any streams may overlap. Refused as ptxgenGemmRun refuses: a
 * NULL or misaligned pointer, one the kernel cannot reach, or o or lse
 * sharing memory with another array, PTXGEN_STATUS_INVALID_VALUE; another
 * context current, or a stream of another context,
 * PTXGEN_STATUS_EXECUTION_FAILED.
 */
ptxgenStatus_t ptxgenAttentionRun(ptxgenHandle_t handle,
                                  ptxgenAttention_t attention, const void* q,
                                  const void* k, const void* v, void* o,
                                  float* lse, const int* cu_seqlens_q,
                                  const int* cu_seqlens_k,
                                  ptxgenStream_t stream);
/* NULL is destroyed as nothing. Not while it runs. */
ptxgenStatus_t ptxgenAttentionDestroy(ptxgenAttention_t attention);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PTXGEN_PTXGEN_H_ */
