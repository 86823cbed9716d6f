#include "json_writer.h"

#include <cstring>

namespace tbcli {

namespace {
// Bytes that JSON strings must escape: '"', '\\' and controls below 0x20.
inline bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

// Length of the prefix of p[0..n) that needs no escaping, eight bytes at a time.
size_t plain_prefix(const char *p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    // Bytes < 0x20, == '"' (0x22), == '\\' (0x5C): SWAR "has byte" tests.
    const uint64_t lt20 = (w - ones * 0x20) & ~w & high;
    const uint64_t q = w ^ (ones * 0x22), b = w ^ (ones * 0x5C);
    const uint64_t eq = ((q - ones) & ~q & high) | ((b - ones) & ~b & high);
    if (lt20 | eq) break;
  }
  while (i < n && !needs_escape(static_cast<unsigned char>(p[i]))) ++i;
  return i;
}
}  // namespace

void JsonWriter::str(const char *p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  buf_ += '"';
  size_t i = 0;
  while (i < n) {
    const size_t k = plain_prefix(p + i, n - i);
    buf_.append(p + i, k);
    i += k;
    if (i >= n) break;
    const unsigned char c = static_cast<unsigned char>(p[i++]);
    switch (c) {
      case '"': buf_ += "\\\""; break;
      case '\\': buf_ += "\\\\"; break;
      case '\n': buf_ += "\\n"; break;
      case '\r': buf_ += "\\r"; break;
      case '\t': buf_ += "\\t"; break;
      case '\b': buf_ += "\\b"; break;
      case '\f': buf_ += "\\f"; break;
      default: {
        const char e[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        buf_.append(e, 6);
      }
    }
  }
  buf_ += '"';
}

void JsonWriter::u64(uint64_t v) {
  char tmp[24];
  int i = 24;
  do {
    tmp[--i] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  buf_.append(tmp + i, static_cast<size_t>(24 - i));
}

}  // namespace tbcli
