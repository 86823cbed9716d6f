#include "json_writer.h"

#include <cstring>

#include "json_bytes.h"

namespace tbcli {

namespace {
// Bytes that take the slow path: what JSON strings must escape ('"', '\\', controls below
// 0x20) and every byte of 0x80 and above (checked as UTF-8 there, json_bytes.h).
inline bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }

// Length of the prefix of p[0..n) that is plain ASCII needing no escaping, eight bytes at a time.
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
    if (lt20 | eq | (w & high)) break;
  }
  while (i < n && !needs_escape(static_cast<unsigned char>(p[i]))) ++i;
  return i;
}

// "00".."99": two digits per division.
constexpr char kPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
}  // namespace

void JsonWriter::str(const char *p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  raw('"');
  size_t i = 0;
  while (i < n) {
    const size_t k = plain_prefix(p + i, n - i);
    bytes(p + i, k);
    i += k;
    if (i >= n) break;
    const unsigned char c = static_cast<unsigned char>(p[i]);
    if (c >= 0x80) {
      const size_t k8 = utf8_run(reinterpret_cast<const unsigned char *>(p + i), n - i);
      if (k8) {  // valid UTF-8: as it is
        bytes(p + i, k8);
        i += k8;
      } else {  // a byte that is not UTF-8: U+10FFXX (json_bytes.h)
        const char e[12] = {'\\', 'u', 'd', 'b', 'f', 'f', '\\', 'u', 'd', 'f', kHex[c >> 4], kHex[c & 15]};
        bytes(e, 12);
        ++i;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"': lit("\\\""); break;
      case '\\': lit("\\\\"); break;
      case '\n': lit("\\n"); break;
      case '\r': lit("\\r"); break;
      case '\t': lit("\\t"); break;
      case '\b': lit("\\b"); break;
      case '\f': lit("\\f"); break;
      default: {
        const char e[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        bytes(e, 6);
      }
    }
  }
  raw('"');
}

void JsonWriter::u64(uint64_t v) {
  static constexpr uint64_t kPow10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull,
                                          1000000ull, 10000000ull, 100000000ull, 1000000000ull,
                                          10000000000ull, 100000000000ull, 1000000000000ull,
                                          10000000000000ull, 100000000000000ull,
                                          1000000000000000ull, 10000000000000000ull,
                                          100000000000000000ull, 1000000000000000000ull,
                                          10000000000000000000ull};
  // Digit count from the bit length (1233/4096 ~ log10 2), corrected by one comparison.
  const unsigned t = static_cast<unsigned>((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
  const unsigned n = v == 0 ? 1u : t + (v >= kPow10[t] ? 1u : 0u);
  room(20);
  char *s = p_ + n;
  p_ = s;
  while (v >= 100) {
    const unsigned r = static_cast<unsigned>(v % 100);
    v /= 100;
    s -= 2;
    std::memcpy(s, kPairs + 2 * r, 2);
  }
  if (v >= 10) {
    std::memcpy(s - 2, kPairs + 2 * v, 2);
  } else {
    s[-1] = static_cast<char>('0' + v);
  }
}

}  // namespace tbcli
