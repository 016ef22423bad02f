#ifndef PTXGEN_COMPILE_SHA256_H_
#define PTXGEN_COMPILE_SHA256_H_

// SHA-256 (FIPS 180-4): the content hash behind kernel-cache keys and the
// checksum of each cache entry. Written here because no crypto library is
// available to the build; it is not used for anything secret.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace ptxgen::compile {

// SHA-256 (FIPS 180-4) of `data`: the kernel cache's keys and entry checks.
using Sha256Digest = std::array<uint8_t, 32>;
Sha256Digest Sha256(absl::string_view data);

// The digest as 64 lower-case hex characters.
std::string Sha256Hex(absl::string_view data);

// Whether `text` is exactly `digits` lower-case hex characters.
bool IsLowercaseHex(absl::string_view text, size_t digits);

// Whether `text` is a digest as Sha256Hex writes it: the names ptxgen gives
// its cache entries and autotuning records.
bool IsSha256Hex(absl::string_view text);

}  // namespace ptxgen::compile

#endif  // PTXGEN_COMPILE_SHA256_H_
