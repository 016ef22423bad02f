// The online softmax of a consumer thread's rows of S, one block of keys
// after another (FlashAttention's): scores are scaled to base 2 (scale
// times log2(e)) so that each weight is one ex2. A thread holds parts of
// two rows (kScoreRow says which of them each register is in), shared
// with the kRowLanes lanes of its quad.
struct OnlineSoftmax {
  float max[2];  // each row's largest scaled score so far (-inf: none)
  float sum[2];  // this thread's part of each row's sum of weights
};

__device__ __forceinline__ float positive_infinity() { return __int_as_float(0x7f800000); }

__device__ __forceinline__ void softmax_start(OnlineSoftmax& softmax) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    softmax.max[r] = -positive_infinity();
    softmax.sum[r] = 0.0f;
  }
}

// The largest, and the sum, of a row's values over the lanes that hold it.
__device__ __forceinline__ float row_max(float value) {
#pragma unroll
  for (int lanes = 1; lanes < plan::kRowLanes; lanes *= 2) {
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, lanes));
  }
  return value;
}

__device__ __forceinline__ float row_sum(float value) {
#pragma unroll
  for (int lanes = 1; lanes < plan::kRowLanes; lanes *= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, lanes);
  }
  return value;
}

// -inf for the scores of keys a row does not see: past its sequence's keys
// and, with a causal mask, past its diagonal (row i sees keys up to
// i + seq_k - seq_q). `row0` and `key0` are the sequence's indices of the
// consumer's first row and the block's first key.
__device__ __forceinline__ void mask_scores(float (&s)[plan::kScoreRegisters], int thread,
                                            int row0, int key0, const AttentionTile& t) {
#pragma unroll
  for (int i = 0; i < plan::kScoreRegisters; ++i) {
    const int key = key0 + accumulator_column(thread, i);
    const int row = row0 + accumulator_row(thread, i);
    const int last = plan::kCausal ? min(t.seq_k, row + t.seq_k - t.seq_q + 1) : t.seq_k;
    if (key >= last) s[i] = -positive_infinity();
  }
}

// Takes a block's scores into the running softmax: each row's new maximum,
// the factor its O and sum so far are rescaled by (`rescale`), and in place
// of each score its weight 2^(score * scale_log2 - max). A row that saw only
// masked keys so far keeps a maximum of -inf and weights of 0.
__device__ __forceinline__ void softmax_update(OnlineSoftmax& softmax,
                                               float (&s)[plan::kScoreRegisters],
                                               float scale_log2, float (&rescale)[2]) {
  float block_max[2] = {softmax.max[0], softmax.max[1]};
#pragma unroll
  for (int i = 0; i < plan::kScoreRegisters; ++i) {
    block_max[plan::kScoreRow[i]] = fmaxf(block_max[plan::kScoreRow[i]], s[i] * scale_log2);
  }
  float offset[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float max = row_max(block_max[r]);
    offset[r] = max == -positive_infinity() ? 0.0f : max;
    exp2_approx(rescale[r], softmax.max[r] - offset[r]);
    softmax.max[r] = max;
    softmax.sum[r] *= rescale[r];
  }
#pragma unroll
  for (int i = 0; i < plan::kScoreRegisters; ++i) {
    const int r = plan::kScoreRow[i];
    exp2_approx(s[i], fmaf(s[i], scale_log2, -offset[r]));
    softmax.sum[r] += s[i];
  }
}

// Each row's divisor of O (1 / its sum of weights) and its log-sum-exp in
// natural log. A row that saw no key has O 0 and LSE +inf, as
// FlashAttention stores them.
__device__ __forceinline__ void softmax_finish(const OnlineSoftmax& softmax, float (&inverse)[2],
                                               float (&lse)[2]) {
  constexpr float kLn2 = 0.693147180559945309f;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float sum = row_sum(softmax.sum[r]);
    const bool empty = sum == 0.0f || sum != sum;
    inverse[r] = empty ? 1.0f : 1.0f / sum;
    float log2_sum;
    log2_approx(log2_sum, sum);
    lse[r] = empty ? positive_infinity() : (softmax.max[r] + log2_sum) * kLn2;
  }
}
