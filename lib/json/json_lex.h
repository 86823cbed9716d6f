// Strict, zero-allocation JSON lexing over [p, end): the grammar as serde_json accepts it
// (RFC 8259: no comments, no trailing commas, no leading zeros, no NaN, only SP/TAB/LF/CR
// as whitespace, strings valid UTF-8 with no raw control bytes, lone surrogate escapes
// rejected). Every function advances a cursor and never reads at or past `end`.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"

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
