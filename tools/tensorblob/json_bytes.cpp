#include "json_bytes.h"

#include <cstring>

namespace tbcli {

size_t utf8_run(const unsigned char *p, size_t n) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // the bounds of the second byte (RFC 3629 table)
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;       // no overlong forms
    else if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    else if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (n < len || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < len; ++i)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  if (len == 4 && c == 0xF4 && p[1] == 0x8F && p[2] >= 0xBE) return 0;  // U+10FF80-U+10FFFF: escaped
  return len;
}

std::string arg_bytes(const char *arg) {
  const auto *p = reinterpret_cast<const unsigned char *>(arg);
  const size_t n = std::strlen(arg);
  std::string out;
  out.reserve(n);
  for (size_t i = 0; i < n;) {
    if (n - i >= 4 && p[i] == 0xF4 && p[i + 1] == 0x8F && (p[i + 2] == 0xBE || p[i + 2] == 0xBF) &&
        p[i + 3] >= 0x80 && p[i + 3] <= 0xBF) {
      // U+10FFxx: xx = 0x80 + (low bit of the third byte) * 0x40 + (six bits of the fourth)
      out += static_cast<char>(0x80 | ((p[i + 2] & 1) << 6) | (p[i + 3] & 0x3F));
      i += 4;
    } else {
      out += static_cast<char>(p[i++]);
    }
  }
  return out;
}

}  // namespace tbcli
