#include "util/text.h"

namespace nnbench::util {
namespace {

// The length of the well-formed UTF-8 sequence at text[i] that encodes a
// character other than a C1 control (U+0080 to U+009F, which terminals
// read as escapes), else 0.
size_t utf8_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) {
    return static_cast<unsigned char>(text[k]);
  };
  const unsigned char c = byte(i);
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (c >= 0xF5) n = 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  if (n == 2 && c == 0xC2 && byte(i + 1) < 0xA0) return 0;   // C1 controls
  if (n == 3 && c == 0xE0 && byte(i + 1) < 0xA0) return 0;   // overlong
  if (n == 3 && c == 0xED && byte(i + 1) >= 0xA0) return 0;  // surrogates
  if (n == 4 && c == 0xF0 && byte(i + 1) < 0x90) return 0;   // overlong
  if (n == 4 && c == 0xF4 && byte(i + 1) >= 0x90) return 0;  // > U+10FFFF
  return n;
}

}  // namespace

std::string printable(const std::string& text, bool one_line) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += text[i++];
    } else if ((c == '\n' || c == '\t') && !one_line) {
      out += text[i++];
    } else if (const size_t n = c >= 0x80 ? utf8_length(text, i) : 0; n > 0) {
      out.append(text, i, n);
      i += n;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    }
  }
  return out;
}

}  // namespace nnbench::util
