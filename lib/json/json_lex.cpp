#include "json/json_lex.h"

#include "core/limits.h"

#include <cstring>

namespace tblob {
namespace json {

namespace {

// Containers nest at most this deep whatever the caller's limit: skip_value keeps its
// container stack in a fixed bitset on the stack.
constexpr uint32_t kHardDepth = kMaxJsonDepth;

inline bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

inline int hex_value(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads 4 hex digits at p (caller checked 4 bytes are present). -1 if not hex.
inline int32_t read_hex4(const uint8_t *p) {
  int32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    int h = hex_value(p[i]);
    if (h < 0) return -1;
    v = (v << 4) | h;
  }
  return v;
}

// Length of the valid UTF-8 sequence starting at p (lead byte >= 0x80), 0 if invalid.
inline size_t utf8_sequence(const uint8_t *p, const uint8_t *end) {
  const uint8_t b0 = p[0];
  const size_t avail = static_cast<size_t>(end - p);
  auto cont = [](uint8_t b) { return (b & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    return (avail >= 2 && cont(p[1])) ? 2 : 0;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (avail < 3) return 0;
    const uint8_t b1 = p[1];
    if (b0 == 0xE0 && (b1 < 0xA0 || b1 > 0xBF)) return 0;
    if (b0 == 0xED && (b1 < 0x80 || b1 > 0x9F)) return 0;  // UTF-16 surrogates
    if (!cont(b1) || !cont(p[2])) return 0;
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (avail < 4) return 0;
    const uint8_t b1 = p[1];
    if (b0 == 0xF0 && (b1 < 0x90 || b1 > 0xBF)) return 0;
    if (b0 == 0xF4 && (b1 < 0x80 || b1 > 0x8F)) return 0;
    if (!cont(b1) || !cont(p[2]) || !cont(p[3])) return 0;
    return 4;
  }
  return 0;
}

}  // namespace

bool scan_string(Cursor &c, StringSlice *out) {
  const uint8_t *open = c.p;
  const uint8_t *p = c.p + 1;  // past '"'
  const uint8_t *end = c.end;
  bool escapes = false;
  for (;;) {
    p = skip_plain(p, end);
    if (p >= end) return c.fail(Err::kGrammar, open, "unterminated string");
    const uint8_t b = *p;
    if (b == '"') break;
    if (b == '\\') {
      escapes = true;
      if (end - p < 2) return c.fail(Err::kGrammar, p, "unterminated escape");
      const uint8_t e = p[1];
      if (e == 'u') {
        if (end - p < 6) return c.fail(Err::kGrammar, p, "truncated \\u escape");
        int32_t cp = read_hex4(p + 2);
        if (cp < 0) return c.fail(Err::kGrammar, p, "bad hex digit in \\u escape");
        p += 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          return c.fail(Err::kGrammar, p - 6, "lone low surrogate escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
            return c.fail(Err::kGrammar, p - 6, "lone high surrogate escape");
          int32_t lo = read_hex4(p + 2);
          if (lo < 0xDC00 || lo > 0xDFFF)
            return c.fail(Err::kGrammar, p - 6, "high surrogate not followed by low surrogate");
          p += 6;
        }
        continue;
      }
      switch (e) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
          p += 2;
          continue;
        default:
          return c.fail(Err::kGrammar, p, "invalid escape");
      }
    }
    if (b < 0x20) return c.fail(Err::kGrammar, p, "control character in string");
    size_t n = utf8_sequence(p, end);
    if (n == 0) return c.fail(Err::kUtf8, p, "invalid UTF-8 in string");
    p += n;
  }
  out->ptr = reinterpret_cast<const char *>(open + 1);
  out->len = static_cast<size_t>(p - open - 1);
  out->has_escapes = escapes;
  out->at = open;
  c.p = p + 1;
  return true;
}

bool scan_number(Cursor &c, NumKind *kind, uint64_t *value) {
  const uint8_t *p = c.p;
  const uint8_t *end = c.end;
  const uint8_t *start = p;
  bool other = false;
  if (p < end && *p == '-') {
    other = true;
    ++p;
  }
  if (p >= end || !is_digit(*p)) return c.fail(Err::kGrammar, start, "invalid number");
  uint64_t v = 0;
  if (*p == '0') {
    ++p;
    if (p < end && is_digit(*p)) return c.fail(Err::kGrammar, start, "leading zero in number");
  } else {
    // Up to 19 digits cannot overflow; check the rest.
    const uint8_t *digits = p;
    while (p < end && is_digit(*p)) {
      uint64_t d = static_cast<uint64_t>(*p - '0');
      if (p - digits < 19) {
        v = v * 10 + d;
      } else if (!other) {
        if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v)) other = true;
      }
      ++p;
    }
  }
  if (p < end && *p == '.') {
    other = true;
    ++p;
    if (p >= end || !is_digit(*p)) return c.fail(Err::kGrammar, start, "invalid fraction");
    while (p < end && is_digit(*p)) ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    other = true;
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (p >= end || !is_digit(*p)) return c.fail(Err::kGrammar, start, "invalid exponent");
    while (p < end && is_digit(*p)) ++p;
  }
  c.p = p;
  *kind = other ? NumKind::kOther : NumKind::kUnsigned;
  *value = v;
  return true;
}

bool scan_literal(Cursor &c, const char *lit, size_t n) {
  if (static_cast<size_t>(c.end - c.p) < n || std::memcmp(c.p, lit, n) != 0)
    return c.fail(Err::kGrammar, c.p, "invalid literal");
  c.p += n;
  return true;
}

bool skip_value(Cursor &c, uint32_t depth, uint32_t max_depth) {
  if (max_depth > kHardDepth) max_depth = kHardDepth;
  // Bit i set: container at relative level i is an object.
  uint64_t kinds[kHardDepth / 64] = {};
  uint32_t level = 0;  // open containers started by this call
  StringSlice s;
  for (;;) {
    // Parse one value.
    skip_ws(c);
    if (c.p >= c.end) return c.fail(Err::kGrammar, c.p, "unexpected end of JSON");
    const uint8_t ch = *c.p;
    bool opened = false;
    if (ch == '{' || ch == '[') {
      if (depth + level + 1 >= max_depth) return c.fail(Err::kDepth, c.p, "nesting too deep");
      const bool obj = ch == '{';
      if (obj)
        kinds[level / 64] |= (uint64_t{1} << (level % 64));
      else
        kinds[level / 64] &= ~(uint64_t{1} << (level % 64));
      ++level;
      ++c.p;
      skip_ws(c);
      if (c.p < c.end && *c.p == (obj ? '}' : ']')) {
        ++c.p;
        --level;
      } else {
        opened = true;
        if (obj) {
          if (c.p >= c.end || *c.p != '"') return c.fail(Err::kGrammar, c.p, "expected key");
          if (!scan_string(c, &s)) return false;
          skip_ws(c);
          if (c.p >= c.end || *c.p != ':') return c.fail(Err::kGrammar, c.p, "expected ':'");
          ++c.p;
        }
      }
    } else if (ch == '"') {
      if (!scan_string(c, &s)) return false;
    } else if (ch == '-' || is_digit(ch)) {
      NumKind k;
      uint64_t v;
      if (!scan_number(c, &k, &v)) return false;
    } else if (ch == 't') {
      if (!scan_literal(c, "true", 4)) return false;
    } else if (ch == 'f') {
      if (!scan_literal(c, "false", 5)) return false;
    } else if (ch == 'n') {
      if (!scan_literal(c, "null", 4)) return false;
    } else {
      return c.fail(Err::kGrammar, c.p, "expected a value");
    }
    if (opened) continue;  // parse the first element / member value
    // After a value: close containers or move to the next element.
    for (;;) {
      if (level == 0) return true;
      const bool obj = (kinds[(level - 1) / 64] >> ((level - 1) % 64)) & 1;
      skip_ws(c);
      if (c.p >= c.end) return c.fail(Err::kGrammar, c.p, "unexpected end of JSON");
      if (*c.p == ',') {
        ++c.p;
        if (obj) {
          skip_ws(c);
          if (c.p >= c.end || *c.p != '"') return c.fail(Err::kGrammar, c.p, "expected key");
          if (!scan_string(c, &s)) return false;
          skip_ws(c);
          if (c.p >= c.end || *c.p != ':') return c.fail(Err::kGrammar, c.p, "expected ':'");
          ++c.p;
        }
        break;  // next value
      }
      if (*c.p == (obj ? '}' : ']')) {
        ++c.p;
        --level;
        continue;
      }
      return c.fail(Err::kGrammar, c.p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
}

bool Decoder::next(uint8_t *out) {
  if (ipending_ < npending_) {
    *out = pending_[ipending_++];
    return true;
  }
  if (p_ >= end_) return false;
  if (*p_ != '\\') {
    *out = *p_++;
    return true;
  }
  const uint8_t e = p_[1];
  p_ += 2;
  uint32_t cp;
  switch (e) {
    case 'b': *out = '\b'; return true;
    case 'f': *out = '\f'; return true;
    case 'n': *out = '\n'; return true;
    case 'r': *out = '\r'; return true;
    case 't': *out = '\t'; return true;
    case 'u': break;
    default: *out = e; return true;  // '"', '\\', '/'
  }
  cp = static_cast<uint32_t>(read_hex4(p_));
  p_ += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    uint32_t lo = static_cast<uint32_t>(read_hex4(p_ + 2));
    p_ += 6;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  }
  npending_ = 0;
  ipending_ = 0;
  if (cp < 0x80) {
    *out = static_cast<uint8_t>(cp);
    return true;
  }
  if (cp < 0x800) {
    *out = static_cast<uint8_t>(0xC0 | (cp >> 6));
    pending_[npending_++] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out = static_cast<uint8_t>(0xE0 | (cp >> 12));
    pending_[npending_++] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    pending_[npending_++] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  } else {
    *out = static_cast<uint8_t>(0xF0 | (cp >> 18));
    pending_[npending_++] = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F));
    pending_[npending_++] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    pending_[npending_++] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  }
  return true;
}

size_t decode_into(const StringSlice &s, char *dst, size_t cap) {
  if (!s.has_escapes) {
    if (cap > 0) std::memcpy(dst, s.ptr, s.len < cap ? s.len : cap);
    return s.len;
  }
  Decoder d(s.ptr, s.len);
  size_t n = 0;
  uint8_t b;
  while (d.next(&b)) {
    if (n < cap) dst[n] = static_cast<char>(b);
    ++n;
  }
  return n;
}

bool decoded_equals(const StringSlice &s, const char *lit, size_t n) {
  if (!s.has_escapes) return s.len == n && std::memcmp(s.ptr, lit, n) == 0;
  if (s.len < n) return false;  // escapes only lengthen the raw form
  Decoder d(s.ptr, s.len);
  size_t i = 0;
  uint8_t b;
  while (d.next(&b)) {
    if (i >= n || static_cast<char>(b) != lit[i]) return false;
    ++i;
  }
  return i == n;
}

int64_t first_invalid_utf8(const uint8_t *p, size_t n) {
  const uint8_t *start = p;
  const uint8_t *end = p + n;
  while (p < end) {
    if (*p < 0x80) {
      ++p;
      continue;
    }
    size_t k = utf8_sequence(p, end);
    if (k == 0) return static_cast<int64_t>(p - start);
    p += k;
  }
  return -1;
}

}  // namespace json
}  // namespace tblob
