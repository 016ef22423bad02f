#ifndef PTXGEN_LIB_COMPILE_ELAPSED_H_
#define PTXGEN_LIB_COMPILE_ELAPSED_H_

// Wall time of compilations and cache lookups (private to lib/compile).

#include <chrono>

namespace ptxgen::compile {

inline double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace ptxgen::compile

#endif  // PTXGEN_LIB_COMPILE_ELAPSED_H_
