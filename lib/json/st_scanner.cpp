#include "json/st_scanner.h"

#include <atomic>

#include "core/cpu.h"
#include "json/st_scan_loop.h"

namespace tblob {
namespace st_scan {

Status ScanCore::grammar_error() {
  // Invalid UTF-8 anywhere in the header is the reference's earlier step.
  const int64_t bad = json::first_invalid_utf8(c_.begin + 8, static_cast<size_t>(c_.end - c_.begin - 8));
  if (bad >= 0)
    return diag_.fail(TBLOB_E_UTF8, 8 + static_cast<uint64_t>(bad), -1,
                      "header is not valid UTF-8 at byte %llu",
                      static_cast<unsigned long long>(8 + bad));
  const uint64_t off = c_.offset(c_.err_at ? c_.err_at : c_.p);
  if (c_.err == Err::kUtf8)
    return diag_.fail(TBLOB_E_UTF8, off, -1, "header is not valid UTF-8 at byte %llu",
                      static_cast<unsigned long long>(off));
  if (c_.err == Err::kDepth)
    return diag_.fail(TBLOB_E_LIMIT_JSON_DEPTH, off, -1,
                      "JSON nesting reaches the depth limit %u at byte %llu",
                      limits_.max_json_depth, static_cast<unsigned long long>(off));
  return diag_.fail(TBLOB_E_JSON, off, -1, "invalid JSON in header at byte %llu: %s",
                    static_cast<unsigned long long>(off), c_.err_what ? c_.err_what : "syntax");
}

Status ScanCore::limit_name(const StringSlice &k) {
  if (k.len <= limits_.max_name_bytes) return TBLOB_OK;
  const size_t decoded = k.has_escapes ? json::decode_into(k, nullptr, 0) : k.len;
  if (decoded <= limits_.max_name_bytes) return TBLOB_OK;
  return diag_.fail(TBLOB_E_LIMIT_NAME_BYTES, c_.offset(k.at), -1,
                    "key at byte %llu is %llu bytes, over the limit of %llu",
                    static_cast<unsigned long long>(c_.offset(k.at)),
                    static_cast<unsigned long long>(decoded),
                    static_cast<unsigned long long>(limits_.max_name_bytes));
}


// c_.p at '['. Reads shape (any length) or data_offsets (exactly 2) into e.
bool ScanCore::parse_u64_array(StTensorEntry *e, bool is_shape, uint64_t tensor,
                               const StringSlice &name, Status *immediate) {
  const uint8_t *open = c_.p;
  if (3 >= limits_.max_json_depth) return c_.fail(Err::kDepth, c_.p, "nesting too deep");
  ++c_.p;
  json::skip_ws(c_);
  uint64_t count = 0;
  uint64_t offsets[2] = {0, 0};
  if (c_.p < c_.end && *c_.p == ']') {
    ++c_.p;
  } else {
    for (;;) {
      if (c_.p >= c_.end) return c_.fail(Err::kGrammar, c_.p, "unexpected end of JSON");
      const uint8_t ch = *c_.p;
      if (ch == '-' || (ch >= '0' && ch <= '9')) {
        const uint8_t *at = c_.p;
        NumKind kind;
        uint64_t v;
        if (!json::scan_number(c_, &kind, &v)) return false;
        if (kind != NumKind::kUnsigned) {
          deferred_.set(TBLOB_E_SHAPE, c_.offset(at), tensor, name,
                        is_shape ? "shape value is not an integer in [0, 2^64)"
                                 : "data_offsets value is not an integer in [0, 2^64)");
        } else if (is_shape) {
          if (count < kInlineRank) dims_[count] = v;
        } else if (count < 2) {
          offsets[count] = v;
        }
      } else {
        deferred_.set(TBLOB_E_SHAPE, c_.offset(c_.p), tensor, name,
                      is_shape ? "shape value is not an integer"
                               : "data_offsets value is not an integer");
        if (!json::skip_value(c_, 3, limits_.max_json_depth)) return false;
      }
      ++count;
      if (is_shape && count > limits_.max_rank) {
        *immediate = diag_.fail(TBLOB_E_LIMIT_RANK, c_.offset(open), static_cast<int64_t>(tensor),
                                "shape at byte %llu has more than %u dimensions",
                                static_cast<unsigned long long>(c_.offset(open)),
                                limits_.max_rank);
        return false;
      }
      const Next next = next_in(']');
      if (next == Next::kMore) continue;
      if (next == Next::kBad) return false;
      break;
    }
  }
  if (is_shape) {
    e->ev.rank = static_cast<uint32_t>(count);
    e->ev.shape_json = reinterpret_cast<const char *>(open);
    e->ev.shape_json_len = static_cast<size_t>(c_.p - open);
  } else {
    if (count != 2)
      deferred_.set(TBLOB_E_SCHEMA, c_.offset(open), tensor, name,
                    "data_offsets must hold exactly two integers");
    e->ev.data_begin = offsets[0];
    e->ev.data_end = offsets[1];
  }
  return true;
}

// The generic (any spelling) parse of one tensor entry object; c_.p at '{'.
bool ScanCore::parse_entry(StTensorEntry *ep, uint64_t tensor, const StringSlice &name,
                           Status *immediate) {
  StTensorEntry &e = *ep;
  if (2 >= limits_.max_json_depth) return c_.fail(Err::kDepth, c_.p, "nesting too deep");
  const uint8_t *obj_at = c_.p;
  ++c_.p;
  json::skip_ws(c_);
  bool have_dtype = false, have_shape = false, have_offsets = false;
  if (c_.p < c_.end && *c_.p == '}') {
    ++c_.p;
  } else {
    for (;;) {
      if (c_.p >= c_.end || *c_.p != '"') return c_.fail(Err::kGrammar, c_.p, "expected key");
      StringSlice k;
      if (!json::scan_string(c_, &k)) return false;
      if (!expect_colon()) return false;
      if (c_.p >= c_.end) return c_.fail(Err::kGrammar, c_.p, "unexpected end of JSON");
      const uint8_t *vat = c_.p;
      if (key_is(k, "dtype", 5)) {
        if (have_dtype)
          deferred_.set(TBLOB_E_SCHEMA, c_.offset(k.at), tensor, name, "duplicate field dtype");
        have_dtype = true;
        if (*c_.p == '"') {
          StringSlice d;
          if (!json::scan_string(c_, &d)) return false;
          char buf[16];
          const size_t n = json::decode_into(d, buf, sizeof(buf));
          e.ev.dtype = n <= sizeof(buf) ? dtype_from_name(buf, n) : uint32_t{TBLOB_DTYPE_INVALID};
          if (e.ev.dtype == TBLOB_DTYPE_INVALID)
            deferred_.set(TBLOB_E_DTYPE, c_.offset(vat), tensor, name, "unknown dtype");
        } else {
          deferred_.set(TBLOB_E_SCHEMA, c_.offset(vat), tensor, name,
                        "dtype is not a string");
          if (!json::skip_value(c_, 2, limits_.max_json_depth)) return false;
        }
      } else if (key_is(k, "shape", 5) || key_is(k, "data_offsets", 12)) {
        const bool is_shape = k.len == 5 || (k.has_escapes && key_is(k, "shape", 5));
        bool &have = is_shape ? have_shape : have_offsets;
        if (have)
          deferred_.set(TBLOB_E_SCHEMA, c_.offset(k.at), tensor, name,
                        is_shape ? "duplicate field shape" : "duplicate field data_offsets");
        have = true;
        if (*c_.p == '[') {
          if (!parse_u64_array(&e, is_shape, tensor, name, immediate)) return false;
        } else {
          deferred_.set(is_shape ? TBLOB_E_SHAPE : TBLOB_E_SCHEMA, c_.offset(vat), tensor, name,
                        is_shape ? "shape is not an array" : "data_offsets is not an array");
          if (!json::skip_value(c_, 2, limits_.max_json_depth)) return false;
        }
      } else {
        // Unknown fields are ignored whatever their value, as the reference does.
        if (!json::skip_value(c_, 2, limits_.max_json_depth)) return false;
      }
      const Next next = next_in('}');
      if (next == Next::kMore) continue;
      if (next == Next::kBad) return false;
      break;
    }
  }
  if (!have_dtype || !have_shape || !have_offsets) {
    deferred_.set(TBLOB_E_SCHEMA, c_.offset(obj_at), tensor, name,
                  !have_dtype ? "missing field dtype"
                              : (!have_shape ? "missing field shape" : "missing field data_offsets"));
  }
  return true;
}

// The layout every known writer emits, {"dtype":"X","shape":[..],"data_offsets":[a,b]}
// with no whitespace, read without the generic machinery. Any deviation returns false
// having consumed nothing, and the generic parser takes over.
bool ScanCore::fast_entry(StTensorEntry *e) {
  if (limits_.max_json_depth <= 3) return false;
  const uint8_t *p = c_.p;
  const uint8_t *end = c_.end;
  static const char kDtype[] = "{\"dtype\":\"";
  static const char kShape[] = "\",\"shape\":[";
  static const char kOffsets[] = ",\"data_offsets\":[";
  if (end - p < 10 || !same_bytes(p, kDtype, 10)) return false;
  p += 10;
  uint32_t dtype;
  if (end - p < 8) return false;
  if (!common_dtype(p, load_le64(p), &dtype)) {
    const uint8_t *q = p;
    while (q < end && q - p <= 11 && *q != '"' && *q != '\\') ++q;
    if (q >= end || *q != '"') return false;
    dtype = dtype_from_name(reinterpret_cast<const char *>(p), static_cast<size_t>(q - p));
    if (dtype == TBLOB_DTYPE_INVALID) return false;
    p = q;
  }
  if (end - p < 11 || !same_bytes(p, kShape, 11)) return false;
  p += 11;
  const uint8_t *shape_open = p - 1;
  uint32_t rank = 0;
  if (p < end && *p == ']') {
    ++p;
  } else {
    for (;;) {
      uint64_t v;
      if (rank >= kInlineRank || rank >= limits_.max_rank || !read_uint(p, end, &v)) return false;
      dims_[rank++] = v;
      if (p >= end) return false;
      if (*p == ',') {
        ++p;
        continue;
      }
      if (*p != ']') return false;
      ++p;
      break;
    }
  }
  const uint8_t *shape_close = p;
  if (end - p < 17 || !same_bytes(p, kOffsets, 17)) return false;
  p += 17;
  uint64_t begin, stop;
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint8_t *prev_text = nullptr;
  uint32_t prev_len = 0;
  uint64_t prev = 0;
  if (end - p < 48 || !read_offset_pair(p, &begin, &stop, prev_text, prev_len, prev)) {
#else
  {
#endif
    if (!read_uint(p, end, &begin) || p >= end || *p != ',') return false;
    ++p;
    if (!read_uint(p, end, &stop) || end - p < 2 || p[0] != ']' || p[1] != '}') return false;
    p += 2;
  }
  e->ev.dtype = dtype;
  e->ev.rank = rank;
  e->ev.shape_json = reinterpret_cast<const char *>(shape_open);
  e->ev.shape_json_len = static_cast<size_t>(shape_close - shape_open);
  e->ev.data_begin = begin;
  e->ev.data_end = stop;
  c_.p = p;
  return true;
}

}  // namespace st_scan

Status st_scan_header(const uint8_t *buf, size_t len, const Limits &limits, StSink *sink,
                      StScanSummary *summary, const Diag &diag) {
  return st_scan_header_with(buf, len, limits, sink, summary, diag);
}

namespace {
std::atomic<bool> g_allow_avx2{true};
}  // namespace

bool st_scan_uses_avx2() {
#if TBLOB_SCAN_AVX2
  constexpr uint32_t kNeed = kCpuAvx2 | kCpuBmi2;
  return g_allow_avx2.load(std::memory_order_relaxed) && (cpu_features() & kNeed) == kNeed;
#else
  return false;
#endif
}

void st_scan_allow_avx2(bool allow) { g_allow_avx2.store(allow, std::memory_order_relaxed); }

void st_parse_dims(const char *shape_json, size_t len, uint64_t *dims, uint32_t rank) {
  const char *p = shape_json + 1;
  const char *end = shape_json + len;
  for (uint32_t i = 0; i < rank; ++i) {
    while (p < end && (*p < '0' || *p > '9')) ++p;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') v = v * 10 + static_cast<uint64_t>(*p++ - '0');
    dims[i] = v;
  }
}

Status st_entry_error(const Diag &diag, Status s, uint64_t index, const json::StringSlice &name,
                      uint64_t key_offset, uint64_t begin, uint64_t end, uint64_t expected) {
  const ShownName shown_name(name.ptr, name.len);
  const int shown = shown_name.len;
  const char *ell = shown_name.ell;
  const auto ull = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  switch (s) {
    case TBLOB_E_OFFSETS:
      return diag.fail(s, key_offset, static_cast<int64_t>(index),
                       "tensor \"%.*s%s\" (byte %llu): data_offsets [%llu, %llu] do not start "
                       "where the previous tensor ends (%llu)",
                       shown, shown_name.text, ell, ull(key_offset), ull(begin), ull(end), ull(expected));
    case TBLOB_E_SHAPE_OVERFLOW:
      return diag.fail(s, key_offset, static_cast<int64_t>(index),
                       "tensor \"%.*s%s\" (byte %llu): element or bit count overflows 64 bits",
                       shown, shown_name.text, ell, ull(key_offset));
    case TBLOB_E_MISALIGNED:
      return diag.fail(s, key_offset, static_cast<int64_t>(index),
                       "tensor \"%.*s%s\" (byte %llu): sub-byte dtype does not fill whole bytes",
                       shown, shown_name.text, ell, ull(key_offset));
    case TBLOB_E_TENSOR_SIZE:
      return diag.fail(s, key_offset, static_cast<int64_t>(index),
                       "tensor \"%.*s%s\" (byte %llu): data_offsets [%llu, %llu] hold %llu bytes; "
                       "dtype and shape need %llu",
                       shown, shown_name.text, ell, ull(key_offset), ull(begin), ull(end),
                       ull(end - begin), ull(expected));
    default:
      return diag.fail(s, key_offset, static_cast<int64_t>(index), "tensor \"%.*s%s\" (byte %llu): %s",
                       shown, shown_name.text, ell, ull(key_offset), ::tblob::status_message(s));
  }
}

Status st_length_error(const Diag &diag, Status s, uint64_t data_offset, uint64_t covered,
                       uint64_t available) {
  const auto ull = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  const uint64_t at = data_offset + (covered < available ? covered : available);
  if (s == TBLOB_E_TRAILING_BYTES)
    return diag.fail(s, at, -1, "%llu bytes follow the last tensor, which ends at data offset %llu",
                     ull(available - covered), ull(covered));
  return diag.fail(s, at, -1, "the data region is %llu bytes short: tensors cover %llu bytes, it has %llu",
                   ull(covered - available), ull(covered), ull(available));
}

}  // namespace tblob