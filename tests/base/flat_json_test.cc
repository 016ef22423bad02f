// ParseFlatJsonObject: the one-level JSON objects ptxgen writes and reads
// back, and what it refuses of anything else.
#include "ptxgen/base/flat_json.h"

#include <map>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ptxgen::base {
namespace {

using Fields = std::map<std::string, std::string>;

TEST(FlatJsonTest, ReadsStringsAndNumbersAsWritten) {
  absl::StatusOr<Fields> fields = ParseFlatJsonObject(
      " {\"schema\": 1, \"config\":\"ws 64x16x64 s8\",\n \"ms\":-0.0137e+2 , "
      "\"empty\":\"\"}\n");
  ASSERT_TRUE(fields.ok()) << fields.status();
  EXPECT_EQ(*fields, (Fields{{"schema", "1"},
                             {"config", "ws 64x16x64 s8"},
                             {"ms", "-0.0137e+2"},
                             {"empty", ""}}));
  EXPECT_EQ(*ParseFlatJsonObject("{}"), Fields{});
}

TEST(FlatJsonTest, UnescapesEveryEscapeIncludingSurrogatePairs) {
  absl::StatusOr<Fields> fields = ParseFlatJsonObject(
      R"({"s":"q\" b\\ s\/ \b\f\n\r\t \u00e9 \u20ac \ud83d\ude00"})");
  ASSERT_TRUE(fields.ok()) << fields.status();
  EXPECT_EQ(fields->at("s"),
            "q\" b\\ s/ \b\f\n\r\t \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
}

TEST(FlatJsonTest, RefusesAnythingElseNamingWhatAndWhere) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "no '{' at byte 0"},
      {"[1]", "no '{'"},
      {"{\"a\":{}}", "a nested object or array at byte 5"},
      {"{\"a\":[1]}", "a nested object or array"},
      {"{\"a\":true}", "a number without digits"},
      {"{\"a\":null}", "a number without digits"},
      {"{\"a\":1,\"a\":2}", "a key given twice"},
      {"{\"a\":\"\\x\"}", "an unknown escape '\\x'"},
      {"{\"a\":\"\\u12\"}", "a \\u escape without 4 hex digits"},
      {"{\"a\":\"\\udc00\"}", "a lone low surrogate"},
      {"{\"a\":\"\\ud800x\"}", "a high surrogate without its pair"},
      {"{\"a\":\"line\nbreak\"}", "a control character inside a string"},
      {"{\"a\":\"open", "a string without its closing '\"'"},
      {"{\"a\":1.}", "a number without digits after '.'"},
      {"{\"a\":1e}", "a number without exponent digits"},
      {"{\"a\" 1}", "no ':' after a key"},
      {"{\"a\":1 \"b\":2}", "no ',' or '}' after a field"},
      {"{a:1}", "a string must start with '\"'"},
      {"{\"a\":1} x", "text after the object at byte 8"},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<Fields> fields = ParseFlatJsonObject(text);
    ASSERT_FALSE(fields.ok()) << text;
    EXPECT_TRUE(absl::StrContains(fields.status().message(), message))
        << text << ": " << fields.status();
  }
}

}  // namespace
}  // namespace ptxgen::base
