// Strict, zero-allocation JSON lexing over [p, end): the grammar as serde_json accepts it
// (RFC 8259: no comments, no trailing commas, no leading zeros, no NaN, only SP/TAB/LF/CR
// as whitespace, strings valid UTF-8 with no raw control bytes, lone surrogate escapes
// rejected). Every function advances a cursor and never reads at or past `end`.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace tblob {
namespace json {

enum class Err : uint8_t {
  kNone = 0,
  kGrammar,  // not JSON
  kUtf8,     // invalid UTF-8 inside a string
  kDepth,    // nesting limit
};

struct Cursor {
  const uint8_t *begin;  // start of the whole buffer (for offsets in messages)
  const uint8_t *p;
  const uint8_t *end;
  Err err = Err::kNone;
  const uint8_t *err_at = nullptr;
  const char *err_what = nullptr;

  bool fail(Err e, const uint8_t *at, const char *what) {
    if (err == Err::kNone) {
      err = e;
      err_at = at;
      err_what = what;
    }
    return false;
  }
  uint64_t offset(const uint8_t *at) const { return static_cast<uint64_t>(at - begin); }
};

inline bool is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline void skip_ws(Cursor &c) {
  while (c.p < c.end && is_ws(*c.p)) ++c.p;
}

// A decoded string slice: the raw contents between the quotes.
struct StringSlice {
  const char *ptr = nullptr;
  size_t len = 0;
  bool has_escapes = false;
  const uint8_t *at = nullptr;  // the opening quote
};

#if defined(__SSE2__)
// Bit i set when byte i at p is not a plain string byte: '"', '\\', or below 0x20 or at
// least 0x80. One signed compare takes three of them: xor 0x02 maps '"' to 0x20 and keeps
// the bytes below 0x20 below it and those at 0x80 or more negative, and moves no other byte
// below 0x21.
inline __attribute__((always_inline)) uint32_t special_mask16(const uint8_t *p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  const __m128i special = _mm_or_si128(_mm_cmplt_epi8(_mm_xor_si128(v, _mm_set1_epi8(0x02)), _mm_set1_epi8(0x21)),
                                       _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
  return static_cast<uint32_t>(_mm_movemask_epi8(special));
}
#endif

// Advances p over plain string bytes (not '"', '\\', < 0x20, >= 0x80). Inline: the
// scanner reads plain keys with it directly (scan_string handles everything else).
inline __attribute__((always_inline)) const uint8_t *skip_plain(const uint8_t *p, const uint8_t *end) {
#if defined(__SSE2__)
  while (end - p >= 16) {
    const uint32_t mask = special_mask16(p);
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#elif defined(__aarch64__) && defined(__ARM_NEON)
  const uint8x16_t quote = vdupq_n_u8('"');
  const uint8x16_t slash = vdupq_n_u8('\\');
  const uint8x16_t ctrl = vdupq_n_u8(0x20);
  const uint8x16_t high = vdupq_n_u8(0x80);
  while (end - p >= 16) {
    uint8x16_t v = vld1q_u8(p);
    uint8x16_t special = vorrq_u8(vceqq_u8(v, quote), vceqq_u8(v, slash));
    special = vorrq_u8(special, vcltq_u8(v, ctrl));
    special = vorrq_u8(special, vcgeq_u8(v, high));
    if (vmaxvq_u8(special) != 0) break;
    p += 16;
  }
#endif
  while (p < end) {
    uint8_t b = *p;
    if (b == '"' || b == '\\' || b < 0x20 || b >= 0x80) break;
    ++p;
  }
  return p;
}

// c.p at '"'. On success c.p is past the closing quote.
bool scan_string(Cursor &c, StringSlice *out);

// Number token. kind: kUnsigned (fits in u64, no sign/fraction/exponent),
// kOther (valid JSON number that is not a u64: negative, fraction, exponent, -0, too big).
enum class NumKind : uint8_t { kUnsigned, kOther };
bool scan_number(Cursor &c, NumKind *kind, uint64_t *value);

// Validates and skips any value. depth is the nesting level of the value's parent
// container; a container at level >= max_depth fails with kDepth (serde_json's rule
// with its default 128: 127 nested containers pass, 128 fail).
bool skip_value(Cursor &c, uint32_t depth, uint32_t max_depth);

// Expects a literal (true/false/null) starting at c.p.
bool scan_literal(Cursor &c, const char *lit, size_t n);

// Streams the decoded bytes of a string slice that is known to be valid (scanned).
// Used for comparisons and hashing without allocating.
class Decoder {
 public:
  Decoder(const char *p, size_t n) : p_(reinterpret_cast<const uint8_t *>(p)), end_(p_ + n) {}
  // Returns false at the end. Otherwise writes one decoded byte.
  bool next(uint8_t *out);

 private:
  const uint8_t *p_;
  const uint8_t *end_;
  uint8_t pending_[4];
  uint8_t npending_ = 0, ipending_ = 0;
};

// Decodes into dst (capacity cap). Returns the decoded length; writes at most cap bytes.
size_t decode_into(const StringSlice &s, char *dst, size_t cap);

// Decoded string equals the ASCII literal?
bool decoded_equals(const StringSlice &s, const char *lit, size_t n);

// Validates a complete UTF-8 buffer (for the error-ordering rule: invalid UTF-8 anywhere
// in the header beats a JSON error). Returns the offset of the first bad byte or -1.
int64_t first_invalid_utf8(const uint8_t *p, size_t n);

}  // namespace json
}  // namespace tblob
