#include "ptxgen/base/flat_json.h"

#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ptxgen::base {
namespace {

// A cursor over the text; every refusal names the offset it stopped at.
class Reader {
 public:
  explicit Reader(absl::string_view text) : text_(text) {}

  absl::Status Refuse(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON: ", what, " at byte ", at_,
                     " (one object of string "
                     "and number fields expected)"));
  }
  void SkipWhitespace() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' ||
                                  text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }
  bool AtEnd() const { return at_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[at_]; }
  bool Take(char c) {
    if (Peek() != c || AtEnd()) return false;
    ++at_;
    return true;
  }

  absl::StatusOr<std::string> String() {
    if (!Take('"')) return Refuse("a string must start with '\"'");
    std::string value;
    while (!AtEnd()) {
      const unsigned char c = static_cast<unsigned char>(text_[at_++]);
      if (c == '"') return value;
      if (c < 0x20) return Refuse("a control character inside a string");
      if (c != '\\') {
        value.push_back(static_cast<char>(c));
        continue;
      }
      if (absl::Status escape = Escape(value); !escape.ok()) return escape;
    }
    return Refuse("a string without its closing '\"'");
  }

  absl::StatusOr<std::string> Number() {
    const size_t start = at_;
    Take('-');
    if (!Digits()) return Refuse("a number without digits");
    if (Take('.') && !Digits())
      return Refuse("a number without digits after '.'");
    if (Take('e') || Take('E')) {
      if (!Take('+')) Take('-');
      if (!Digits()) return Refuse("a number without exponent digits");
    }
    return std::string(text_.substr(start, at_ - start));
  }

 private:
  bool Digits() {
    const size_t start = at_;
    while (absl::ascii_isdigit(static_cast<unsigned char>(Peek())) && !AtEnd())
      ++at_;
    return at_ > start;
  }

  absl::StatusOr<uint32_t> Hex4() {
    if (text_.size() - at_ < 4)
      return Refuse("a \\u escape without 4 hex digits");
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
        return Refuse("a \\u escape without 4 hex digits");
      }
      value = value * 16 +
              static_cast<uint32_t>(absl::ascii_isdigit(c)
                                        ? c - '0'
                                        : absl::ascii_tolower(c) - 'a' + 10);
    }
    return value;
  }

  absl::Status Escape(std::string& value) {
    if (AtEnd()) return Refuse("a string ending in '\\'");
    const char c = text_[at_++];
    constexpr std::pair<char, char> kSimple[] = {
        {'"', '"'},  {'\\', '\\'}, {'/', '/'},  {'b', '\b'},
        {'f', '\f'}, {'n', '\n'},  {'r', '\r'}, {'t', '\t'}};
    for (const auto& [escape, meaning] : kSimple) {
      if (c == escape) {
        value.push_back(meaning);
        return absl::OkStatus();
      }
    }
    if (c != 'u')
      return Refuse(
          absl::StrCat("an unknown escape '\\", std::string(1, c), "'"));
    absl::StatusOr<uint32_t> unit = Hex4();
    if (!unit.ok()) return unit.status();
    uint32_t code = *unit;
    if (code >= 0xDC00 && code <= 0xDFFF) return Refuse("a lone low surrogate");
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (!Take('\\') || !Take('u'))
        return Refuse("a high surrogate without its pair");
      absl::StatusOr<uint32_t> low = Hex4();
      if (!low.ok()) return low.status();
      if (*low < 0xDC00 || *low > 0xDFFF)
        return Refuse("a high surrogate without its pair");
      code = 0x10000 + ((code - 0xD800) << 10) + (*low - 0xDC00);
    }
    AppendUtf8(code, value);
    return absl::OkStatus();
  }

  static void AppendUtf8(uint32_t code, std::string& out) {
    if (code < 0x80) {
      out.push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (code >> 6)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (code >> 12)));
      out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (code >> 18)));
      out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  absl::string_view text_;
  size_t at_ = 0;
};

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseFlatJsonObject(
    absl::string_view text) {
  Reader reader(text);
  std::map<std::string, std::string> fields;
  reader.SkipWhitespace();
  if (!reader.Take('{')) return reader.Refuse("no '{'");
  reader.SkipWhitespace();
  if (!reader.Take('}')) {
    while (true) {
      reader.SkipWhitespace();
      absl::StatusOr<std::string> key = reader.String();
      if (!key.ok()) return key.status();
      reader.SkipWhitespace();
      if (!reader.Take(':')) return reader.Refuse("no ':' after a key");
      reader.SkipWhitespace();
      const char next = reader.Peek();
      if (next == '{' || next == '[')
        return reader.Refuse("a nested object or array");
      absl::StatusOr<std::string> value =
          next == '"' ? reader.String() : reader.Number();
      if (!value.ok()) return value.status();
      if (!fields.emplace(*std::move(key), *std::move(value)).second) {
        return reader.Refuse("a key given twice");
      }
      reader.SkipWhitespace();
      if (reader.Take('}')) break;
      if (!reader.Take(','))
        return reader.Refuse("no ',' or '}' after a field");
    }
  }
  reader.SkipWhitespace();
  if (!reader.AtEnd()) return reader.Refuse("text after the object");
  return fields;
}

}  // namespace ptxgen::base
