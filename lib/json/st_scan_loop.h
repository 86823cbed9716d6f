// The safetensors header scanner (st_scanner.h) as a template over its sink's type: a final
// sink's per-tensor work is then inlined into the loop that reads the members, with no call and
// no reload of the entry's fields from memory (opening a 20,000-tensor header: 686-695 us through
// StSink's virtual call, 652-663 us inlined). st_scan_header is the instance for StSink.
#pragma once
#include <cstring>
#include <type_traits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/checked.h"
#include "core/dtype.h"
#include "json/st_scanner.h"

// The member loop's AVX2 + BMI2 build: x86-64 with GCC or Clang (their target attribute).
#if defined(__x86_64__) && defined(__GNUC__) && defined(__SSE2__)
#define TBLOB_SCAN_AVX2 1
#else
#define TBLOB_SCAN_AVX2 0
#endif

namespace tblob {
namespace st_scan {

using json::Cursor;
using json::Err;
using json::NumKind;
using json::StringSlice;

// The first schema error of a tensor entry, kept until the whole header has been
// checked as JSON (serde reports those only after the top-level map is complete).
struct DeferredError {
  Status status = TBLOB_OK;
  uint64_t offset = 0;
  uint64_t tensor = 0;
  StringSlice name;
  const char *what = nullptr;

  void set(Status s, uint64_t off, uint64_t idx, const StringSlice &n, const char *w) {
    if (status != TBLOB_OK) return;
    status = s;
    offset = off;
    tensor = idx;
    name = n;
    what = w;
  }
};

// Eight digit characters at once (SWAR). x holds eight bytes loaded little-endian and xor-ed
// with '0', so a digit byte holds its value and byte 0 is the first character.
// Leading digit bytes, 0..8. A non-digit byte has x >= 10: x + 0x76 or x itself has the top
// bit set; carries only run from a flagged byte upwards, past the first one counted.
inline __attribute__((always_inline)) uint32_t leading_digits(uint64_t x) {
  const uint64_t flagged = ((x + 0x7676767676767676ull) | x) & 0x8080808080808080ull;
  return flagged ? static_cast<uint32_t>(__builtin_ctzll(flagged)) >> 3 : 8u;
}
// The value of eight digit bytes, byte 0 most significant: pairs, then quads, then the whole
// (10*256+1 joins neighbouring bytes, 100*65536+1 neighbouring pairs, 10000*2^32+1 quads).
inline __attribute__((always_inline)) uint64_t digits8_value(uint64_t x) {
  x = (x * 2561u) >> 8 & 0x00FF00FF00FF00FFull;
  x = (x * 6553601u) >> 16 & 0x0000FFFF0000FFFFull;
  return (x * 42949672960001ull) >> 32;
}

#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
// The value of the n (1..16) digits at q, when 16 bytes are readable at q (the SSE2 readers'
// only: unused, it would be a warning elsewhere).
inline __attribute__((always_inline)) uint64_t digits_value(const uint8_t *q, uint32_t n) {
  constexpr uint64_t kZeros = 0x3030303030303030ull;
  static constexpr uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
  uint64_t a;
  std::memcpy(&a, q, 8);
  a ^= kZeros;
  if (n <= 8) return digits8_value(a << (64 - 8 * n));
  uint64_t b;
  std::memcpy(&b, q + 8, 8);
  b ^= kZeros;
  return digits8_value(a) * kPow10[n - 8] + digits8_value(b << (64 - 8 * (n - 8)));
}

// Bit i set when byte i is a digit: the bytes that 0x50 added turns into 0x80..0x89, the ten
// smallest signed bytes.
inline __attribute__((always_inline)) uint32_t digit_mask16(__m128i v) {
  return static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_cmpgt_epi8(_mm_set1_epi8(-118), _mm_add_epi8(v, _mm_set1_epi8(0x50)))));
}
inline __attribute__((always_inline)) uint32_t digit_mask16(const uint8_t *p) {
  return digit_mask16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}

// A shape's dims and closing ']' within the 16 bytes at p (just past '['), from one digit mask
// and one comma mask: each dim's start and length are bit operations, so the position of ']'
// (where the rest of the entry continues) waits for one load, not for every number in turn.
// False (nothing consumed) for anything else: a longer shape, a leading zero, more than
// max_rank dims; the scalar loop decides those. 32 bytes readable at p.
inline __attribute__((always_inline)) bool read_dims16(const uint8_t *&p, uint64_t *dims, uint32_t max_rank,
                                                       uint32_t *rank_out) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  const uint32_t digit = digit_mask16(v);
  const uint32_t comma = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(','))));
  const uint32_t other = ~(digit | comma);  // bits 16..31 set: ctz is at most 16
  const uint32_t close = static_cast<uint32_t>(__builtin_ctz(other));
  if (close >= 16 || p[close] != ']') return false;
  const uint32_t in = (1u << close) - 1;
  const uint32_t cs = comma & in;
  // Digit runs with single commas between: no comma first, last or next to another.
  if (close != 0 && ((cs & 1) | (cs >> (close - 1)) | (cs & (cs >> 1)))) return false;
  uint32_t starts = digit & ~(digit << 1) & in;
  uint32_t rank = 0;
  while (starts) {
    const uint32_t s = static_cast<uint32_t>(__builtin_ctz(starts));
    const uint32_t n = static_cast<uint32_t>(__builtin_ctz(~digit >> s));  // a comma or ']' ends it
    if (rank >= max_rank || (n > 1 && p[s] == '0')) return false;
    dims[rank++] = digits_value(p + s, n);
    starts &= starts - 1;
  }
  *rank_out = rank;
  p += close;
  return true;
}

// `A,B]}` (the data_offsets pair and the entry's end) from one 32-byte window: one digit mask
// gives both lengths at once, so the two values are computed side by side instead of the
// second number's loads waiting for the first number's length. False (nothing consumed) for
// anything else, including numbers of more than 16 digits and leading zeros: read_uint and the
// generic parser decide those. Needs 48 readable bytes at p.
// prev_text/prev_len/prev: the previous pair's second number (prev_len 0: none); a first
// number spelled with the same digits takes its value. On success they describe this pair's
// second number.
inline __attribute__((always_inline)) bool read_offset_pair(const uint8_t *&p, uint64_t *a, uint64_t *b,
                                                            const uint8_t *&prev_text, uint32_t &prev_len,
                                                            uint64_t &prev) {
  const uint32_t digit = digit_mask16(p) | digit_mask16(p + 16) << 16;
  const uint32_t other = ~digit;
  if (other == 0) return false;
  const uint32_t n1 = static_cast<uint32_t>(__builtin_ctz(other));
  if (n1 == 0 || n1 > 16 || p[n1] != ',') return false;
  const uint32_t rest = other >> (n1 + 1);
  if (rest == 0) return false;
  const uint32_t n2 = static_cast<uint32_t>(__builtin_ctz(rest));
  const uint8_t *q = p + n1 + 1;
  if (n2 == 0 || n2 > 16 || q[n2] != ']' || q[n2 + 1] != '}') return false;
  if ((n1 > 1 && p[0] == '0') || (n2 > 1 && q[0] == '0')) return false;
  // Equal lengths and equal first n1 bytes (both windows have 16 readable bytes).
  const uint32_t same = static_cast<uint32_t>(_mm_movemask_epi8(
      _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)),
                     _mm_loadu_si128(reinterpret_cast<const __m128i *>(prev_len ? prev_text : p)))));
  const uint32_t want = (1u << n1) - 1;  // n1 <= 16
  *a = n1 == prev_len && (same & want) == want ? prev : digits_value(p, n1);
  *b = digits_value(q, n2);
  prev_text = q;
  prev_len = n2;
  prev = *b;
  p = q + n2 + 2;
  return true;
}
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
enum class WordNum { kOk, kBad, kLong };
// Up to 15 digits from two word loads; 16 bytes readable at p. kBad: no digit or a leading
// zero; kLong: 16 digits or more (the caller's byte loop or the generic parser decides).
inline __attribute__((always_inline)) WordNum read_uint_words(const uint8_t *&p, uint64_t *v) {
  constexpr uint64_t kZeros = 0x3030303030303030ull;
  uint64_t a;
  std::memcpy(&a, p, 8);
  a ^= kZeros;
  const uint32_t n = leading_digits(a);
  if (n == 0 || (n > 1 && (a & 0xFF) == 0)) return WordNum::kBad;
  if (n < 8) {
    *v = digits8_value(a << (64 - 8 * n));
    p += n;
    return WordNum::kOk;
  }
  uint64_t b;
  std::memcpy(&b, p + 8, 8);
  b ^= kZeros;
  const uint32_t m = leading_digits(b);
  if (m == 8) return WordNum::kLong;
  static constexpr uint64_t kPow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
  const uint64_t hi = digits8_value(a);
  *v = m == 0 ? hi : hi * kPow10[m] + digits8_value(b << (64 - 8 * m));
  p += 8 + m;
  return WordNum::kOk;
}
#endif

inline __attribute__((always_inline)) bool read_uint(const uint8_t *&p, const uint8_t *end, uint64_t *v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // Up to 15 digits from two word loads, when 16 bytes remain (the header's closing '}'
  // follows any number, so only the last entries take the byte loop).
  if (end - p >= 16) {
    const WordNum r = read_uint_words(p, v);
    if (r != WordNum::kLong) return r == WordNum::kOk;
    // 16 or more digits: the byte loop below.
  }
#endif
  const uint8_t *s = p;
  if (p >= end || *p < '0' || *p > '9') return false;
  uint64_t x = 0;
  while (p < end && *p >= '0' && *p <= '9') x = x * 10 + static_cast<uint64_t>(*p++ - '0');
  const ptrdiff_t digits = p - s;
  if (digits > 19 || (digits > 1 && *s == '0')) return false;
  *v = x;
  return true;
}

// Compares n (a compile-time constant at every call) bytes; inlined to a few word loads.
inline __attribute__((always_inline)) bool same_bytes(const uint8_t *p, const char *lit, size_t n) {
  uint64_t diff = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t a, b;
    std::memcpy(&a, p + i, 8);
    std::memcpy(&b, lit + i, 8);
    diff |= a ^ b;
  }
  for (; i < n; ++i) diff |= static_cast<uint64_t>(p[i] ^ static_cast<uint8_t>(lit[i]));
  return diff == 0;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
inline __attribute__((always_inline)) uint64_t load_word(const void *p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
// n (8..16, a constant at every call) bytes at p equal lit: two overlapping word compares.
inline __attribute__((always_inline)) bool same_words(const uint8_t *p, const char *lit, size_t n) {
  return ((load_word(p) ^ load_word(lit)) | (load_word(p + n - 8) ^ load_word(lit + n - 8))) == 0;
}
// The same for n in 17..24: three overlapping word compares.
inline __attribute__((always_inline)) bool same_words24(const uint8_t *p, const char *lit, size_t n) {
  return ((load_word(p) ^ load_word(lit)) | (load_word(p + 8) ^ load_word(lit + 8)) |
          (load_word(p + n - 8) ^ load_word(lit + n - 8))) == 0;
}
#endif

// The dtypes most tensors have, told from w, the 8 bytes at p (the dtype's text after its
// opening quote) loaded as a little-endian word, closing quote included: true with *dtype set
// and p past the name (each case adds its own constant, so p does not wait on a merged
// length), false for any other (the callers' byte loop and dtype_from_name decide).
inline __attribute__((always_inline)) bool common_dtype(const uint8_t *&p, uint64_t w, uint32_t *dtype) {
  if ((w & 0xFFFFFFFFFFull) == 0x2236314642ull) {  // BF16"
    *dtype = TBLOB_DTYPE_BF16;
    p += 4;
    return true;
  }
  if ((w & 0xFFFFFFFFull) == 0x22323346ull) {  // F32"
    *dtype = TBLOB_DTYPE_F32;
    p += 3;
    return true;
  }
  if ((w & 0xFFFFFFFFull) == 0x22363146ull) {  // F16"
    *dtype = TBLOB_DTYPE_F16;
    p += 3;
    return true;
  }
  return false;
}

// The product of rank dims into *elements (1 for none); true when it overflows 64 bits, with
// *elements the wrapped product up to the dim that overflowed.
inline __attribute__((always_inline)) bool dims_elements(const uint64_t *dims, uint32_t rank,
                                                         uint64_t *elements) {
  uint64_t n = 1;
  bool overflow = false;
  for (uint32_t i = 0; i < rank && !overflow; ++i) overflow = !checked_mul(n, dims[i], &n);
  *elements = n;
  return overflow;
}

constexpr uint32_t kFastRank = 8;  // the fast loop's own rank limit

#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
// Shapes repeat (every layer of a model has the same few), so the fast path keeps the
// results of its last shapes by the 16 bytes that follow '[': a shape that closes within them
// is a function of those bytes alone (read_dims16), so equal bytes give the same dims, rank,
// length and element count without reading any number. Direct-mapped by a hash of the bytes,
// with room for four times the handful of shapes a model repeats: with 16 slots two of a
// model's shapes usually shared one and evicted each other every layer, each time a
// mispredicted branch (a quarter of the members of the benchmark header).
constexpr uint32_t kShapeMemoSlots = 64;
struct ShapeMemo {
  uint64_t lo, hi;     // the 16 bytes after '['
  uint32_t close;      // offset of ']' in them
  uint32_t rank;
  uint64_t elements;
  bool overflow;
  uint64_t dims[kFastRank];
};
inline __attribute__((always_inline)) uint32_t shape_memo_slot(uint64_t lo, uint64_t hi) {
  return static_cast<uint32_t>(((lo ^ (hi << 1)) * 0x9E3779B97F4A7C15ull) >> 58);
}

// Bit i set when byte i of the 64 at p is ']'.
inline __attribute__((always_inline)) uint64_t close_brackets64(const uint8_t *p) {
  const __m128i k = _mm_set1_epi8(']');
  const auto m = [&](int i) {
    return static_cast<uint64_t>(static_cast<uint32_t>(
        _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p + i)), k))));
  };
  return m(0) | m(16) << 16 | m(32) << 32 | m(48) << 48;
}
#endif

inline bool key_is(const StringSlice &k, const char *lit, size_t n) {
  return json::decoded_equals(k, lit, n);
}

// What the scanner is and does whatever its sink: its state, and the parts that never call
// the sink, compiled once (st_scanner.cpp).
class ScanCore {
 protected:
  ScanCore(const uint8_t *buf, size_t len, const Limits &limits, StScanSummary *summary, const Diag &diag)
      : limits_(limits), sum_(summary), diag_(diag) {
    entry_.set_kind();
    c_.begin = buf;
    c_.p = buf;
    c_.end = buf + len;
  }

  Status grammar_error();
  Status limit_name(const StringSlice &k);
  bool parse_entry(StTensorEntry *e, uint64_t tensor, const StringSlice &name, Status *immediate);
  bool fast_entry(StTensorEntry *e);
  bool parse_u64_array(StTensorEntry *e, bool is_shape, uint64_t tensor,
                       const StringSlice &name, Status *immediate);
  // A sink that stops the scan may have described why already; if not, say where.
  Status stopped_by_sink(Status s, uint64_t offset, int64_t tensor) {
    return diag_.fail(s, offset, tensor, "scan stopped at byte %llu: %s",
                      static_cast<unsigned long long>(offset), ::tblob::status_message(s));
  }
  bool expect_colon() {
    json::skip_ws(c_);
    if (c_.p >= c_.end || *c_.p != ':') return c_.fail(Err::kGrammar, c_.p, "expected ':'");
    ++c_.p;
    json::skip_ws(c_);
    return true;
  }
  // The step after a member or element of a container that `close` ends: ',' (consumed, with
  // the whitespace after it) is kMore, `close` (consumed) kEnd, anything else a grammar error
  // (kBad; at the end of the header with the message `at_end`).
  enum class Next { kMore, kEnd, kBad };
  Next next_in(uint8_t close, const char *at_end = "unexpected end of JSON") {
    json::skip_ws(c_);
    if (c_.p >= c_.end) {
      c_.fail(Err::kGrammar, c_.p, at_end);
      return Next::kBad;
    }
    if (*c_.p == ',') {
      ++c_.p;
      json::skip_ws(c_);
      return Next::kMore;
    }
    if (*c_.p == close) {
      ++c_.p;
      return Next::kEnd;
    }
    c_.fail(Err::kGrammar, c_.p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    return Next::kBad;
  }

  Cursor c_;
  const Limits &limits_;
  StScanSummary *sum_;
  const Diag &diag_;
  DeferredError deferred_;
  // Every tensor entry is built here: the event's fields that are the same for every tensor
  // are set once, at construction.
  StTensorEntry entry_;
  uint64_t dims_[kInlineRank];
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // Every slot starts as what read_dims16 gives for its bytes ("]" and zeros: rank 0), so a
  // lookup never needs a validity flag.
  ShapeMemo memo_[kShapeMemoSlots];
  bool memo_ready_ = false;
#endif
};

// The scanner for a sink of type Sink. StSink itself is called through its virtual functions,
// and may be light or name a tblob_scan_fn; a final sink named by its own type is called
// directly, so its on_tensor can be inlined into the loop that reads the members, and takes the
// loop for sinks that do work per entry.
template <class Sink>
class Scanner : ScanCore {
 public:
  Scanner(const uint8_t *buf, size_t len, const Limits &limits, Sink *sink, StScanSummary *summary,
          const Diag &diag)
      : ScanCore(buf, len, limits, summary, diag), sink_(sink) {
    if constexpr (kDynamic) {
      tensor_fn_ = sink ? sink->tensor_fn : nullptr;
      tensor_user_ = sink ? sink->tensor_user : nullptr;
    }
  }

  Status run(size_t len);

 private:
  static constexpr bool kDynamic = std::is_same<Sink, StSink>::value;

  bool parse_metadata(Status *immediate);
  inline __attribute__((always_inline)) bool parse_tensor(const StringSlice &name, uint64_t key_offset, Status *immediate);
  inline __attribute__((always_inline)) Status finish_tensor(StTensorEntry &e);
  inline __attribute__((always_inline)) Status finish_sized(StTensorEntry &e, uint64_t elements, bool overflow);
  // The member loop (fast_body) is compiled twice on x86-64: for the baseline and for AVX2 +
  // BMI2, which this host runs when st_scan_uses_avx2(). Every function the loop calls on its
  // way is always_inline, so each copy is compiled whole for its target and no out-of-line
  // helper built for AVX2 can be reached from baseline code. The results are the same; the
  // VEX encodings and BMI2 shifts take fewer instructions (a scan of 20,000 tensors: 549-570 us
  // against 586-601, alternated).
  template <bool kAhead>
  inline __attribute__((always_inline)) Status fast_body(bool *after_value);
  template <bool kAhead>
  Status fast_members(bool *after_value);
#if TBLOB_SCAN_AVX2
  template <bool kAhead>
  __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt"))) Status fast_members_avx2(bool *after_value);
#endif
  Status json_stage();

  Sink *sink_;
  tblob_scan_fn tensor_fn_ = nullptr;  // StSink's, read once
  void *tensor_user_ = nullptr;
};

// c_.p at the metadata value. Returns false on a grammar error (c_.err set) or with
// *immediate set to a status.
template <class Sink>
bool Scanner<Sink>::parse_metadata(Status *immediate) {
  const uint8_t *at = c_.p;
  if (c_.p < c_.end && *c_.p == 'n') return json::scan_literal(c_, "null", 4);  // absent
  if (c_.p >= c_.end || *c_.p != '{') {
    if (c_.p >= c_.end) return c_.fail(Err::kGrammar, c_.p, "unexpected end of JSON");
    *immediate = diag_.fail(TBLOB_E_METADATA, c_.offset(at), -1,
                            "__metadata__ at byte %llu must be an object of strings",
                            static_cast<unsigned long long>(c_.offset(at)));
    return false;
  }
  if (2 >= limits_.max_json_depth) return c_.fail(Err::kDepth, c_.p, "nesting too deep");
  ++c_.p;
  json::skip_ws(c_);
  if (c_.p < c_.end && *c_.p == '}') {
    ++c_.p;
    return true;
  }
  for (;;) {
    if (c_.p >= c_.end || *c_.p != '"') return c_.fail(Err::kGrammar, c_.p, "expected key");
    StMetaEntry m;
    m.key_offset = c_.offset(c_.p);
    if (!json::scan_string(c_, &m.key)) return false;
    if ((*immediate = limit_name(m.key)) != TBLOB_OK) return false;
    if (!expect_colon()) return false;
    if (c_.p >= c_.end) return c_.fail(Err::kGrammar, c_.p, "unexpected end of JSON");
    if (*c_.p != '"') {
      const uint64_t off = c_.offset(c_.p);
      char key[64];
      const size_t n = json::decode_into(m.key, key, sizeof(key));
      const ShownName shown_name(key, n < sizeof(key) ? n : sizeof(key));
      const int shown = shown_name.len;
      const char *ell = shown_name.ell;
      *immediate = diag_.fail(TBLOB_E_METADATA, off, -1,
                              "__metadata__ value of \"%.*s%s\" at byte %llu is not a string",
                              shown, shown_name.text, n > sizeof(key) ? "..." : ell,
                              static_cast<unsigned long long>(off));
      return false;
    }
    if (!json::scan_string(c_, &m.value)) return false;
    m.index = sum_->metadata_count++;
    if (sink_) {
      Status s = sink_->on_metadata(m);
      if (s != TBLOB_OK) {
        *immediate = stopped_by_sink(s, m.key_offset, -1);
        return false;
      }
    }
    const Next next = next_in('}');
    if (next == Next::kMore) continue;
    return next == Next::kEnd;
  }
}

template <class Sink>
inline bool Scanner<Sink>::parse_tensor(const StringSlice &name, uint64_t key_offset, Status *immediate) {
  const uint64_t tensor = sum_->tensor_count;
  if (tensor >= limits_.max_tensors) {
    *immediate = diag_.fail(TBLOB_E_LIMIT_TENSORS, key_offset, static_cast<int64_t>(tensor),
                            "more than %llu tensors (at byte %llu)",
                            static_cast<unsigned long long>(limits_.max_tensors),
                            static_cast<unsigned long long>(key_offset));
    return false;
  }
  sum_->tensor_count = tensor + 1;
  if (c_.p >= c_.end) return c_.fail(Err::kGrammar, c_.p, "unexpected end of JSON");
  if (*c_.p != '{') {
    // Our policy: only the object form of an entry (the reference's serde also takes an
    // array [dtype, shape, data_offsets]).
    deferred_.set(TBLOB_E_SCHEMA, c_.offset(c_.p), tensor, name,
                  "tensor entry is not an object with dtype, shape and data_offsets");
    return json::skip_value(c_, 1, limits_.max_json_depth);
  }
  // Field by field: zeroing the whole struct showed up as a fifth of the scan time.
  StTensorEntry &e = entry_;
  e.ev.index = tensor;
  e.ev.name = name.ptr;
  e.ev.name_len = name.len;
  e.ev.name_has_escapes = name.has_escapes;
  e.name_at = name.at;
  e.ev.dtype = TBLOB_DTYPE_INVALID;
  e.ev.rank = 0;
  e.ev.shape = nullptr;
  e.ev.shape_json = nullptr;
  e.ev.shape_json_len = 0;
  e.ev.data_begin = e.ev.data_end = e.elements = e.bytes = 0;
  e.entry_status = TBLOB_OK;
  e.ev.header_offset = key_offset;
  if (!fast_entry(&e) && !parse_entry(&e, tensor, name, immediate)) return false;
  if (deferred_.status != TBLOB_OK) {
    // This or an earlier entry has a schema error: the scan will fail; skip the sink.
    return true;
  }
  const Status s = finish_tensor(e);
  if (s != TBLOB_OK) {
    *immediate = s;
    return false;
  }
  return true;
}

// Per-tensor part of step 6, in the reference's order, then the sink. e is complete but for
// dims, elements, bytes and entry_status. Returns the sink's stop, described.
template <class Sink>
inline Status Scanner<Sink>::finish_tensor(StTensorEntry &e) {
  e.ev.shape = e.ev.rank <= kInlineRank ? dims_ : nullptr;
  if (e.ev.data_end < e.ev.data_begin) return finish_sized(e, 0, false);
  uint64_t elements = 1;
  bool overflow = false;
  if (e.ev.shape) {
    overflow = dims_elements(e.ev.shape, e.ev.rank, &elements);
  } else {
    // Rank above the inline capacity: multiply while re-reading the text.
    const char *p = e.ev.shape_json + 1;
    const char *end = e.ev.shape_json + e.ev.shape_json_len;
    while (p < end && !overflow) {
      while (p < end && (*p < '0' || *p > '9')) ++p;
      if (p >= end) break;
      uint64_t v = 0;
      while (p < end && *p >= '0' && *p <= '9') v = v * 10 + static_cast<uint64_t>(*p++ - '0');
      overflow = !checked_mul(elements, v, &elements);
    }
  }
  return finish_sized(e, elements, overflow);
}

// finish_tensor once the element count (and whether it overflowed) is known; e.ev.shape set.
template <class Sink>
inline Status Scanner<Sink>::finish_sized(StTensorEntry &e, uint64_t elements, bool overflow) {
  Status st = TBLOB_OK;
  const uint64_t begin = e.ev.data_begin, end = e.ev.data_end;
  if (end < begin) {
    st = TBLOB_E_OFFSETS;
  } else {
    bool misaligned = false;
    uint64_t bytes = 0;
    if (overflow) {
      st = TBLOB_E_SHAPE_OVERFLOW;
    } else if (!dtype_bytes(e.ev.dtype, elements, &bytes, &misaligned)) {
      st = misaligned ? TBLOB_E_MISALIGNED : TBLOB_E_SHAPE_OVERFLOW;
    } else if (end - begin != bytes) {
      st = TBLOB_E_TENSOR_SIZE;
    }
    e.elements = elements;
    e.bytes = bytes;
  }
  e.entry_status = st;
  if (st != TBLOB_OK && sum_->first_entry_status == TBLOB_OK) {
    sum_->first_entry_status = st;
    sum_->first_entry_index = e.ev.index;
    sum_->first_entry_name = e.name();
    sum_->first_entry_key_offset = e.ev.header_offset;
    sum_->first_entry_begin = begin;
    sum_->first_entry_end = end;
    sum_->first_entry_bytes = e.bytes;
  }
  if (end > sum_->max_end) sum_->max_end = end;
  if (sink_) {
    Status s;
    if constexpr (kDynamic)
      s = tensor_fn_ ? (tensor_fn_(tensor_user_, &e.ev) ? TBLOB_E_CANCELLED : TBLOB_OK) : sink_->on_tensor(e);
    else
      s = sink_->on_tensor(e);
    if (s != TBLOB_OK) return stopped_by_sink(s, e.ev.header_offset, static_cast<int64_t>(e.ev.index));
  }
  return TBLOB_OK;
}

// Members in the layout every known writer emits, `"name":{"dtype":"X","shape":[..],
// "data_offsets":[a,b]}` with a plain name and no whitespace, taken one after another while
// each is followed by `,"`: the key, the entry and the separator are read with the pointer in
// a register and without per-field bounds checks (the entry must end within kFastMargin bytes
// of the name's closing quote). c_.p at a key's '"'. Whatever this loop does not take it
// leaves where it stands for the general path: c_.p at that member's key (*after_value
// false), or just past an entry not followed by `,"` (*after_value true). Takes nothing
// while a schema error is pending (the general path skips the sink then). Returns the
// sink's stop, if any.
template <class Sink>
template <bool kAhead>
Status Scanner<Sink>::fast_members(bool *after_value) {
#if TBLOB_SCAN_AVX2
  if (st_scan_uses_avx2()) return fast_members_avx2<kAhead>(after_value);
#endif
  return fast_body<kAhead>(after_value);
}
#if TBLOB_SCAN_AVX2
template <class Sink>
template <bool kAhead>
__attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt"))) Status Scanner<Sink>::fast_members_avx2(bool *after_value) {
  return fast_body<kAhead>(after_value);
}
#endif

template <class Sink>
template <bool kAhead>
inline Status Scanner<Sink>::fast_body(bool *after_value) {
  *after_value = false;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (deferred_.status != TBLOB_OK || limits_.max_json_depth <= 3) return TBLOB_OK;
  // 12 + 12 (dtype) + 11 + kFastRank * 17 (dims) + 18 + 48 (the offset pair's window) < 256.
  constexpr ptrdiff_t kFastMargin = 256;
  static const char kOpen[] = "\":{\"dtype\":\"";
  static const char kShape[] = "\",\"shape\":[";
  static const char kOffsets[] = "],\"data_offsets\":[";
  const uint32_t max_rank = limits_.max_rank < kFastRank ? limits_.max_rank : kFastRank;
  const uint8_t *const end = c_.end;
  const uint8_t *p = c_.p;
  if (p >= end || *p != '"') return TBLOB_OK;
#if defined(__SSE2__)
  if (!memo_ready_) {
    for (ShapeMemo &m : memo_) {
      m.lo = ']';
      m.hi = 0;
      m.close = 0;
      m.rank = 0;
      m.elements = 1;
      m.overflow = false;
    }
    memo_ready_ = true;
  }
  // The previous entry's end offset and its text: the next begin is usually the same digits
  // (tensors are stored back to back), and equal digits need no conversion.
  const uint8_t *prev_end_text = nullptr;
  uint32_t prev_end_len = 0;
  uint64_t prev_end = 0;
#endif
  // The limits in locals: the sink's call could change any member as far as the compiler knows,
  // so members would be loaded again after every call.
  const size_t max_name = limits_.max_name_bytes;
  const uint64_t max_tensors = limits_.max_tensors;
  StScanSummary *const sum = sum_;
  for (;;) {
    const uint8_t *name = p + 1;
    const uint8_t *q = json::skip_plain(name, end);
    if (end - q < kFastMargin || *q != '"' || !same_words(q, kOpen, 12)) break;
    const size_t name_len = static_cast<size_t>(q - name);
    if (name_len > max_name || (name_len == 12 && std::memcmp(name, "__metadata__", 12) == 0)) break;
    const uint64_t tensor = sum->tensor_count;
    if (tensor >= max_tensors) break;
    const uint8_t *v = q + 12;
    uint32_t dtype;
    const uint64_t w = load_word(v);
    if (!common_dtype(v, w, &dtype)) {
      const uint8_t *t = v;
      while (t - v <= 11 && *t != '"' && *t != '\\') ++t;
      if (*t != '"') break;
      dtype = dtype_from_name(reinterpret_cast<const char *>(v), static_cast<size_t>(t - v));
      if (dtype == TBLOB_DTYPE_INVALID) break;
      v = t;
    }
    if (!same_words(v, kShape, 11)) break;
    v += 11;
    const uint8_t *shape_open = v - 1;
    uint32_t rank = 0;
    bool ok = true;
#if defined(__SSE2__)
    // With kAhead, where this member and its shape end, from where its shape starts: within
    // the 64 bytes after '[', the first ']' closes the shape and the second data_offsets when
    // the checks below pass (they admit no other ']' before them). The offsets and the next
    // member are read from there, so their loads wait for one mask, not for the shape, the
    // memo and both numbers in turn. A member that does not end within the window takes the
    // general path.
    const uint8_t *member_end = nullptr, *shape_end = nullptr;
    if (kAhead) {
      const uint64_t brackets = close_brackets64(v);
      const uint64_t second = brackets & (brackets - 1);
      if (second == 0) break;
      shape_end = v + __builtin_ctzll(brackets);
      member_end = v + __builtin_ctzll(second) + 2;
    }
    const uint64_t *dims = dims_;
    uint64_t elements = 0;
    bool overflow = false;
    bool sized = false;
    const uint64_t lo = load_word(v), hi = load_word(v + 8);
    ShapeMemo &memo = memo_[shape_memo_slot(lo, hi)];
    if (memo.lo == lo && memo.hi == hi) {
      rank = memo.rank;
      dims = memo.dims;
      elements = memo.elements;
      overflow = memo.overflow;
      sized = true;
      v += memo.close;
    } else if (read_dims16(v, dims_, max_rank, &rank)) {
      overflow = dims_elements(dims_, rank, &elements);
      sized = true;
      memo.lo = lo;
      memo.hi = hi;
      memo.close = static_cast<uint32_t>(v - shape_open - 1);
      memo.rank = rank;
      memo.elements = elements;
      memo.overflow = overflow;
      for (uint32_t i = 0; i < rank; ++i) memo.dims[i] = dims_[i];
    } else if (*v != ']') {
#else
    if (*v != ']') {
#endif
      rank = 0;
      for (;;) {
        uint64_t d;
        if (rank >= max_rank || read_uint_words(v, &d) != WordNum::kOk) {
          ok = false;
          break;
        }
        dims_[rank++] = d;
        if (*v != ',') break;
        ++v;
      }
    }
#if defined(__SSE2__)
    if (kAhead) {
      // A shape read to a byte other than its first ']' is no shape (the checks at v fail
      // there). Past this branch the mask's position is used: the compiler is not told the two
      // are equal, so it cannot go back to the later one.
      if (v != shape_end) break;
      __asm__("" : "+r"(shape_end));
      v = shape_end;
    }
#endif
    if (!ok || !same_words24(v, kOffsets, 18)) break;
    const uint8_t *shape_close = v + 1;
    v += 18;
    uint64_t begin, stop;
#if defined(__SSE2__)
    if (!read_offset_pair(v, &begin, &stop, prev_end_text, prev_end_len, prev_end)) {
      prev_end_len = 0;
#else
    {
#endif
      if (read_uint_words(v, &begin) != WordNum::kOk || *v != ',') break;
      ++v;
      if (read_uint_words(v, &stop) != WordNum::kOk || v[0] != ']' || v[1] != '}') break;
      v += 2;
    }
    // The whole member is read: commit it.
    sum->tensor_count = tensor + 1;
    StTensorEntry &e = entry_;
    e.ev.index = tensor;
    e.ev.name = reinterpret_cast<const char *>(name);
    e.ev.name_len = name_len;
    e.ev.name_has_escapes = 0;
    e.name_at = p;
    e.ev.dtype = dtype;
    e.ev.rank = rank;
    e.ev.shape_json = reinterpret_cast<const char *>(shape_open);
    e.ev.shape_json_len = static_cast<size_t>(shape_close - shape_open);
    e.ev.data_begin = begin;
    e.ev.data_end = stop;
    e.elements = e.bytes = 0;
    e.ev.header_offset = c_.offset(p);
    c_.p = v;
#if defined(__SSE2__)
    Status s;
    if (sized) {
      e.ev.shape = dims;
      s = finish_sized(e, elements, overflow);
    } else {
      s = finish_tensor(e);
    }
#else
    const Status s = finish_tensor(e);
#endif
    if (s != TBLOB_OK) return s;
#if defined(__SSE2__)
    if (kAhead) v = member_end;  // the same byte (the checks above passed), known sooner
#endif
    if (v[0] != ',' || v[1] != '"') {
      *after_value = true;
      return TBLOB_OK;
    }
    p = v + 1;
  }
  c_.p = p;
#endif
  return TBLOB_OK;
}

template <class Sink>
Status Scanner<Sink>::run(size_t len) {
  // Step 1.
  if (len < 8)
    return diag_.fail(TBLOB_E_HEADER_TOO_SMALL, 0, -1,
                      "buffer has %zu bytes; a safetensors file needs at least 8", len);
  // Step 2.
  uint64_t n = 0;
  st_header_length(c_.begin, len, &n);
  if (n > TBLOB_SAFETENSORS_MAX_HEADER)
    return diag_.fail(TBLOB_E_HEADER_TOO_LARGE, 0, -1,
                      "header length %llu exceeds the format limit of 100,000,000 bytes",
                      static_cast<unsigned long long>(n));
  if (n > limits_.max_header_bytes)
    return diag_.fail(TBLOB_E_LIMIT_HEADER_BYTES, 0, -1,
                      "header length %llu exceeds the configured limit of %llu bytes",
                      static_cast<unsigned long long>(n),
                      static_cast<unsigned long long>(limits_.max_header_bytes));
  // Step 3 (n <= 1e8, so 8 + n cannot overflow).
  if (8 + n > len)
    return diag_.fail(TBLOB_E_HEADER_LENGTH, 0, -1,
                      "header length %llu needs %llu bytes; the buffer has %zu",
                      static_cast<unsigned long long>(n),
                      static_cast<unsigned long long>(8 + n), len);
  sum_->header_bytes = n;
  sum_->data_offset = 8 + n;
  sum_->data_available = len - 8 - n;
  c_.end = c_.begin + 8 + n;
  c_.p = c_.begin + 8;

  const Status s = json_stage();
  if (s == TBLOB_OK || s == TBLOB_E_UTF8 || s == TBLOB_E_CANCELLED || s == TBLOB_E_OUT_OF_MEMORY)
    return s;
  // Step 4 of the reference checks the whole header as UTF-8 before any JSON is read, so an
  // invalid byte anywhere beats every JSON-stage error found earlier in the header.
  const int64_t bad = json::first_invalid_utf8(c_.begin + 8, static_cast<size_t>(n));
  if (bad < 0) return s;
  diag_.reset();
  return diag_.fail(TBLOB_E_UTF8, 8 + static_cast<uint64_t>(bad), -1,
                    "header is not valid UTF-8 at byte %llu",
                    static_cast<unsigned long long>(8 + bad));
}

// Steps 4-5: everything after the header length checks.
template <class Sink>
Status Scanner<Sink>::json_stage() {
  // Steps 4-5 in one pass: UTF-8 is validated inside strings; any other non-ASCII byte
  // is a grammar error, which grammar_error() re-classifies as UTF-8 where it applies.
  Status immediate = TBLOB_OK;
  json::skip_ws(c_);
  if (c_.p >= c_.end) {
    c_.fail(Err::kGrammar, c_.p, "EOF while parsing the header");
    return grammar_error();
  }
  if (*c_.p != '{') {
    const uint8_t *at = c_.p;
    if (!json::skip_value(c_, 0, limits_.max_json_depth)) return grammar_error();
    return diag_.fail(TBLOB_E_SCHEMA, c_.offset(at), -1,
                      "header at byte %llu is not a JSON object",
                      static_cast<unsigned long long>(c_.offset(at)));
  }
  if (limits_.max_json_depth <= 1) {
    c_.fail(Err::kDepth, c_.p, "nesting too deep");
    return grammar_error();
  }
  ++c_.p;
  json::skip_ws(c_);
  bool seen_metadata = false;
  bool ok = true;
  if (c_.p < c_.end && *c_.p == '}') {
    ++c_.p;
  } else {
    for (;;) {
      bool after_value = false;
      if constexpr (kDynamic)
        immediate = !sink_ || sink_->light ? fast_members<true>(&after_value) : fast_members<false>(&after_value);
      else
        immediate = fast_members<false>(&after_value);
      if (immediate != TBLOB_OK) return immediate;
      if (!after_value) {
        if (c_.p >= c_.end || *c_.p != '"') {
          ok = c_.fail(Err::kGrammar, c_.p, "expected key");
          break;
        }
        const uint64_t key_offset = c_.offset(c_.p);
        StringSlice k;
        // A key of plain bytes followed directly by ':' (every writer's output) is read here;
        // escapes, non-ASCII bytes and whitespace take the general path.
        const uint8_t *close = json::skip_plain(c_.p + 1, c_.end);
        if (c_.end - close >= 2 && close[0] == '"' && close[1] == ':') {
          k.ptr = reinterpret_cast<const char *>(c_.p + 1);
          k.len = static_cast<size_t>(close - c_.p - 1);
          k.has_escapes = false;
          k.at = c_.p;
          c_.p = close + 2;
          json::skip_ws(c_);
        } else {
          StringSlice general;  // k itself never has its address taken, so it stays in registers
          if (!json::scan_string(c_, &general)) {
            ok = false;
            break;
          }
          if (!expect_colon()) {
            ok = false;
            break;
          }
          k = general;
        }
        // Plain keys compare inline; only an escaped key takes the decoding compare.
        const bool is_metadata = !k.has_escapes ? k.len == 12 && std::memcmp(k.ptr, "__metadata__", 12) == 0
                                                : key_is(StringSlice(k), "__metadata__", 12);
        // The reserved key is neither a tensor name nor a metadata key: no name limit.
        if (!is_metadata && (k.has_escapes || k.len > limits_.max_name_bytes) &&
            (immediate = limit_name(StringSlice(k))) != TBLOB_OK)
          return immediate;
        if (is_metadata) {
          if (seen_metadata)
            return diag_.fail(TBLOB_E_METADATA, key_offset, -1,
                              "duplicate __metadata__ at byte %llu",
                              static_cast<unsigned long long>(key_offset));
          seen_metadata = true;
          if (!parse_metadata(&immediate)) {
            if (immediate != TBLOB_OK) return immediate;
            ok = false;
            break;
          }
        } else if (!parse_tensor(k, key_offset, &immediate)) {
          if (immediate != TBLOB_OK) return immediate;
          ok = false;
          break;
        }
      }
      const Next next = next_in('}', "EOF while parsing the header object");
      if (next == Next::kMore) continue;
      ok = next == Next::kEnd;
      break;
    }
  }
  if (ok) {
    json::skip_ws(c_);
    if (c_.p != c_.end) ok = c_.fail(Err::kGrammar, c_.p, "trailing characters after the header object");
  }
  if (!ok) return grammar_error();

  if (deferred_.status != TBLOB_OK) {
    const ShownName shown_name(deferred_.name.ptr, deferred_.name.len);
    const int shown = shown_name.len;
    const char *ell = shown_name.ell;
    return diag_.fail(deferred_.status, deferred_.offset, static_cast<int64_t>(deferred_.tensor),
                      "tensor \"%.*s%s\" (byte %llu): %s", shown, shown_name.text, ell,
                      static_cast<unsigned long long>(deferred_.offset), deferred_.what);
  }
  return TBLOB_OK;
}

}  // namespace st_scan

// Steps 1-5 and per-entry step 6 for a sink of type Sink (st_scan_header: StSink).
template <class Sink>
Status st_scan_header_with(const uint8_t *buf, size_t len, const Limits &limits, Sink *sink,
                           StScanSummary *summary, const Diag &diag) {
  *summary = StScanSummary{};
  st_scan::Scanner<Sink> s(buf, len, limits, sink, summary, diag);
  return s.run(len);
}

}  // namespace tblob
