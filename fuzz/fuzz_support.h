#ifndef PTXGEN_FUZZ_FUZZ_SUPPORT_H_
#define PTXGEN_FUZZ_FUZZ_SUPPORT_H_

// What every fuzz target shares: invariant checks that abort with a message
// (libFuzzer then reports the input as a crash and saves it), and splitting
// the text inputs the targets read.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace ptxgen::fuzz {

[[noreturn]] inline void Fail(const char* file, int line, const char* condition,
                              const std::string& message) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n  %s\n", file, line,
               condition, message.c_str());
  std::abort();
}

// The fuzzed input as text (it may hold any bytes, NULs too).
inline absl::string_view AsText(const uint8_t* data, size_t size) {
  return absl::string_view(reinterpret_cast<const char*>(data), size);
}

inline std::vector<absl::string_view> Lines(absl::string_view text) {
  return absl::StrSplit(text, '\n');
}

// Words separated by one or more spaces.
inline std::vector<absl::string_view> Words(absl::string_view line) {
  return absl::StrSplit(line, ' ', absl::SkipEmpty());
}

// Word `index` as an integer of type T, else `fallback`.
template <typename T>
T IntegerWord(const std::vector<absl::string_view>& words, size_t index,
              T fallback) {
  T value = fallback;
  if (index >= words.size() || !absl::SimpleAtoi(words[index], &value)) {
    return fallback;
  }
  return value;
}

}  // namespace ptxgen::fuzz

// Aborts with the condition, the place and a message (absl::StrCat's
// arguments, one or more) when `condition` is false.
#define FUZZ_CHECK(condition, ...)                         \
  do {                                                     \
    if (!(condition)) {                                    \
      ::ptxgen::fuzz::Fail(__FILE__, __LINE__, #condition, \
                           ::absl::StrCat(__VA_ARGS__));   \
    }                                                      \
  } while (0)

#endif  // PTXGEN_FUZZ_FUZZ_SUPPORT_H_
