#ifndef PTXGEN_BASE_EXTENT_H_
#define PTXGEN_BASE_EXTENT_H_

// The elements a strided tensor spans, checked: the problem models of every
// kernel family size their operands with it before any product can wrap.

#include <cstdint>
#include <optional>

namespace ptxgen::base {

// (count - 1) * step + last: the elements from the first of `count` runs
// `step` apart to past the last, each `last` long; nullopt past int64_t.
inline std::optional<int64_t> Extent(int64_t count, int64_t step,
                                     int64_t last) {
  int64_t gaps = 0;
  int64_t extent = 0;
  if (__builtin_mul_overflow(count - 1, step, &gaps) ||
      __builtin_add_overflow(gaps, last, &extent)) {
    return std::nullopt;
  }
  return extent;
}

}  // namespace ptxgen::base

#endif  // PTXGEN_BASE_EXTENT_H_
