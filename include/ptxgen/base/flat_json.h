#ifndef PTXGEN_BASE_FLAT_JSON_H_
#define PTXGEN_BASE_FLAT_JSON_H_

// The JSON ptxgen reads back from files it wrote, which may have been
// edited or damaged since: one object whose values are strings or numbers,
// nothing nested. Small records (the autotuner's choices) are written this
// way so that people can read, diff and merge them.

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxgen::base {

// The fields of `text`, one JSON object of string and number values: each
// string unescaped (\uXXXX, surrogate pairs included, as UTF-8), each number
// as written. Refuses, naming what and where (a byte offset): anything
// else at the top level, nesting, arrays, true/false/null, a duplicate
// key, a malformed escape or number, a raw control character in a string,
// text after the object.
absl::StatusOr<std::map<std::string, std::string>> ParseFlatJsonObject(
    absl::string_view text);

}  // namespace ptxgen::base

#endif  // PTXGEN_BASE_FLAT_JSON_H_
