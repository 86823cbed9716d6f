// fuzz_st_scan: the zero-allocation safetensors header scanner (tblob_st_scan) and
// tblob_json_unescape. Input format: fuzz_common.h (file + 3-byte trailer).
//
// Per input:
//   1. scan without scratch, recording every event (each field read and checked);
//   1b. on a host that runs the member loop's AVX2 + BMI2 build, scan 1 again with the baseline
//      build: the same status, diagnostic and events;
//   2. scan again with scratch (layout chosen by the trailer: exact size, one byte short,
//      misaligned, generous) and check that the events are identical and that the two
//      statuses agree (same header error; whole-table checks only ever add errors);
//   3. if there were events, scan again cancelling at one of them: TBLOB_E_CANCELLED;
//   4. tblob_json_unescape on the raw file bytes (arbitrary input to its validator).
// Every name and metadata value is decoded with tblob_json_unescape (length query, exact
// buffer, one byte short) and must be valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "fuzz_common.h"
#include "json/st_scanner.h"
#include "tensorblob.h"

namespace {

bool valid_utf8(const uint8_t *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    const uint8_t b = p[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t k;
    uint32_t lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      k = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      k = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      k = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (n - i < k) return false;
    if (p[i + 1] < lo || p[i + 1] > hi) return false;
    for (size_t j = 2; j < k; ++j)
      if ((p[i + j] & 0xC0) != 0x80) return false;
    i += k;
  }
  return true;
}

// Decodes a slice the scanner reported; it must be a valid JSON string body.
uint64_t check_unescape(const char *s, size_t n, uint32_t has_escapes, size_t *decoded) {
  size_t need = 0;
  tblob_status st = tblob_json_unescape(s, n, nullptr, 0, &need, nullptr);
  FUZZ_ASSERT_MSG(st == TBLOB_OK || st == TBLOB_E_BUFFER_TOO_SMALL,
                  "tblob_json_unescape rejected a slice the scanner accepted: %s",
                  tblob_status_name(st));
  FUZZ_ASSERT_MSG((st == TBLOB_OK) == (need == 0), "length query: status %s, length %zu",
                  tblob_status_name(st), need);
  FUZZ_ASSERT_MSG(need <= n, "decoded length %zu exceeds the raw length %zu", need, n);
  if (!has_escapes) FUZZ_ASSERT_MSG(need == n, "no escapes but decoded %zu of %zu bytes", need, n);
  char *dst = static_cast<char *>(std::malloc(need ? need : 1));
  FUZZ_ASSERT(dst != nullptr);
  size_t got = 0;
  st = tblob_json_unescape(s, n, dst, need, &got, nullptr);
  FUZZ_ASSERT_MSG(st == TBLOB_OK && got == need, "decode into exact buffer: %s, %zu of %zu",
                  tblob_status_name(st), got, need);
  FUZZ_ASSERT_MSG(valid_utf8(reinterpret_cast<const uint8_t *>(dst), got),
                  "decoded text is not valid UTF-8");
  if (!has_escapes) FUZZ_ASSERT(std::memcmp(dst, s, n) == 0);
  const uint64_t h = fuzz::touch(dst, got);
  *decoded = got;
  if (need > 0) {
    // One byte short: TBLOB_E_BUFFER_TOO_SMALL, the full length reported, and the bytes
    // that fit are the decoded prefix (ASan checks nothing is written past the end).
    char *shortb = static_cast<char *>(std::malloc(need - 1 ? need - 1 : 1));
    FUZZ_ASSERT(shortb != nullptr);
    size_t got2 = 0;
    st = tblob_json_unescape(s, n, need - 1 ? shortb : nullptr, need - 1, &got2, nullptr);
    FUZZ_ASSERT_MSG(st == TBLOB_E_BUFFER_TOO_SMALL && got2 == need,
                    "decode into short buffer: %s, %zu (want %zu)", tblob_status_name(st), got2,
                    need);
    FUZZ_ASSERT(need - 1 == 0 || std::memcmp(shortb, dst, need - 1) == 0);
    std::free(shortb);
  }
  std::free(dst);
  return h;
}

// Parses the unsigned integers of a shape array's JSON text (already validated).
bool shape_json_dims_match(const char *p, size_t n, const uint64_t *dims, uint32_t rank) {
  const char *end = p + n;
  uint32_t k = 0;
  ++p;  // '['
  while (p < end) {
    while (p < end && (*p < '0' || *p > '9')) ++p;
    if (p >= end) break;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') v = v * 10 + static_cast<uint64_t>(*p++ - '0');
    if (k >= rank) return false;
    if (dims && dims[k] != v) return false;
    ++k;
  }
  return k == rank;
}

// Deepest container nesting of a valid JSON text (the top-level object counts 1).
uint32_t json_depth(const uint8_t *p, const uint8_t *end) {
  uint32_t depth = 0, deepest = 0;
  bool in_string = false;
  for (; p < end; ++p) {
    const uint8_t c = *p;
    if (in_string) {
      if (c == '\\') ++p;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > deepest) deepest = depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

struct ScanState {
  const uint8_t *buf = nullptr;
  size_t len = 0;
  uint64_t header_end = 0;  // 8 + N
  uint64_t tensors = 0, metadata = 0, events = 0;
  uint64_t digest = 1469598103934665603ull;  // over every event field
  int64_t cancel_at = -1;
  const tblob_open_options *opts = nullptr;

  ScanState(const uint8_t *b, size_t n, uint64_t end, const tblob_open_options *o)
      : buf(b), len(n), header_end(end), opts(o) {}
  void mix(uint64_t v) { digest = (digest ^ v) * 1099511628211ull; }
  bool inside(const char *p, size_t n) const {
    const uint8_t *q = reinterpret_cast<const uint8_t *>(p);
    return q >= buf + 8 && q <= buf + header_end && n <= static_cast<size_t>(buf + header_end - q);
  }
  // p..p+n is a JSON string body: quoted on both sides, inside the header.
  size_t check_string(const char *p, size_t n, uint32_t has_escapes, const char *what) {
    FUZZ_ASSERT_MSG(p != nullptr && inside(p - 1, n + 2), "%s slice outside the header", what);
    FUZZ_ASSERT_MSG(p[-1] == '"' && p[n] == '"', "%s slice is not between quotes", what);
    FUZZ_ASSERT_MSG((std::memchr(p, '\\', n) != nullptr) == (has_escapes != 0),
                    "%s has_escapes flag is wrong", what);
    mix(fuzz::touch(p, n));
    mix(n);
    size_t decoded = 0;
    mix(check_unescape(p, n, has_escapes, &decoded));
    return decoded;
  }
};

int on_event_checked(ScanState &s, const tblob_scan_event *e);

int on_event(void *user, const tblob_scan_event *e) {
  const bool was = fuzz::MallocWatch::armed();
  fuzz::MallocWatch::armed() = false;
  const int r = on_event_checked(*static_cast<ScanState *>(user), e);
  fuzz::MallocWatch::armed() = was;
  return r;
}

int on_event_checked(ScanState &s, const tblob_scan_event *e) {
  FUZZ_ASSERT(e != nullptr);
  FUZZ_ASSERT(e->struct_size == sizeof(tblob_scan_event));
  s.mix(e->kind);
  s.mix(e->index);
  s.mix(e->header_offset);
  FUZZ_ASSERT_MSG(e->name != nullptr && e->header_offset ==
                      static_cast<uint64_t>(reinterpret_cast<const uint8_t *>(e->name) - 1 - s.buf),
                  "header_offset %llu is not the key's opening quote",
                  static_cast<unsigned long long>(e->header_offset));
  const size_t name_bytes = s.check_string(e->name, e->name_len, e->name_has_escapes, "name");
  // The limits hold for everything reported.
  FUZZ_ASSERT_MSG(name_bytes <= s.opts->max_name_bytes, "a %zu-byte name passed max_name_bytes %llu",
                  name_bytes, static_cast<unsigned long long>(s.opts->max_name_bytes));
  if (e->kind == TBLOB_SCAN_TENSOR) {
    FUZZ_ASSERT_MSG(e->index == s.tensors, "tensor index %llu, expected %llu",
                    static_cast<unsigned long long>(e->index), static_cast<unsigned long long>(s.tensors));
    ++s.tensors;
    FUZZ_ASSERT_MSG(tblob_dtype_name(e->dtype) != nullptr, "tensor event with dtype %u", e->dtype);
    FUZZ_ASSERT(e->value == nullptr && e->value_len == 0 && e->value_has_escapes == 0);
    s.mix(e->dtype);
    s.mix(e->rank);
    FUZZ_ASSERT_MSG(e->rank <= s.opts->max_rank, "rank %u passed max_rank %u", e->rank, s.opts->max_rank);
    FUZZ_ASSERT_MSG(e->index < s.opts->max_tensors, "tensor %llu passed max_tensors %llu",
                    static_cast<unsigned long long>(e->index),
                    static_cast<unsigned long long>(s.opts->max_tensors));
    FUZZ_ASSERT(e->shape_json != nullptr && e->shape_json_len >= 2);
    FUZZ_ASSERT(s.inside(e->shape_json, e->shape_json_len));
    FUZZ_ASSERT(e->shape_json[0] == '[' && e->shape_json[e->shape_json_len - 1] == ']');
    s.mix(fuzz::touch(e->shape_json, e->shape_json_len));
    if (e->rank <= TBLOB_SCAN_INLINE_RANK) {
      FUZZ_ASSERT_MSG(e->rank == 0 || e->shape != nullptr, "rank %u without inline dims", e->rank);
      if (e->rank) s.mix(fuzz::touch(e->shape, sizeof(uint64_t) * e->rank));
    } else {
      FUZZ_ASSERT_MSG(e->shape == nullptr, "rank %u above the inline rank has dims", e->rank);
    }
    FUZZ_ASSERT_MSG(shape_json_dims_match(e->shape_json, e->shape_json_len,
                                          e->rank <= TBLOB_SCAN_INLINE_RANK ? e->shape : nullptr,
                                          e->rank),
                    "dims differ from the shape text");
    s.mix(e->data_begin);
    s.mix(e->data_end);
  } else {
    FUZZ_ASSERT_MSG(e->kind == TBLOB_SCAN_METADATA, "event kind %u", e->kind);
    FUZZ_ASSERT_MSG(e->index == s.metadata, "metadata index %llu, expected %llu",
                    static_cast<unsigned long long>(e->index), static_cast<unsigned long long>(s.metadata));
    ++s.metadata;
    FUZZ_ASSERT(e->shape == nullptr && e->shape_json == nullptr && e->rank == 0);
    s.check_string(e->value, e->value_len, e->value_has_escapes, "value");
  }
  const int64_t k = static_cast<int64_t>(s.events++);
  return k == s.cancel_at ? 1 : 0;
}

// Statuses that only the checks after the header scan produce.
bool is_post_scan(tblob_status s) {
  switch (s) {
    case TBLOB_E_OFFSETS:
    case TBLOB_E_SHAPE_OVERFLOW:
    case TBLOB_E_MISALIGNED:
    case TBLOB_E_TENSOR_SIZE:
    case TBLOB_E_TRAILING_BYTES:
    case TBLOB_E_TRUNCATED:
      return true;
    default:
      return false;
  }
}

void check_diag(const tblob_diag &d, tblob_status s) {
  // Finding F1: TBLOB_E_CANCELLED came back with the diag left empty.
  if (s == TBLOB_E_CANCELLED && d.status == TBLOB_OK && fuzz::allowed("F1")) return;
  fuzz::check_diag(d, s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fuzz::Params p = fuzz::split_input(data, size);
  const fuzz::ExactCopy file(p.file, p.file_len);
  const tblob_open_options opts = fuzz::make_options(p);

  uint64_t n_hdr = 0;
  if (file.len >= 8)
    for (int i = 7; i >= 0; --i) n_hdr = (n_hdr << 8) | file.ptr[i];
  const uint64_t header_end = file.len >= 8 && n_hdr <= file.len - 8 ? 8 + n_hdr : 0;

  // The scanner allocates nothing (counted in sanitizer builds, callback excluded).
  const bool watch = fuzz::MallocWatch::available();
  fuzz::MallocWatch::count() = 0;
  struct Arm {
    Arm() { fuzz::MallocWatch::armed() = true; }
    ~Arm() { fuzz::MallocWatch::armed() = false; }
  };

  // 1. No scratch.
  ScanState a(file.ptr, file.len, header_end, &opts);
  tblob_scan_result ra = TBLOB_SCAN_RESULT_INIT;
  tblob_diag da = TBLOB_DIAG_INIT;
  tblob_status sa;
  {
    Arm arm;
    sa = tblob_st_scan(file.ptr, file.len, &opts, on_event, &a, nullptr, 0, &ra, &da);
  }
  FUZZ_ASSERT_MSG(fuzz::is_known_status(sa), "unknown status %d", sa);
  FUZZ_ASSERT(sa != TBLOB_E_BUFFER_TOO_SMALL && sa != TBLOB_E_CANCELLED &&
              sa != TBLOB_E_OUT_OF_MEMORY && sa != TBLOB_E_INVALID_ARGUMENT &&
              sa != TBLOB_E_DUPLICATE_NAME);
  check_diag(da, sa);
  FUZZ_ASSERT(ra.whole_table_checked == 0);
  if (sa == TBLOB_OK) {
    FUZZ_ASSERT(header_end != 0);
    FUZZ_ASSERT(ra.header_bytes == n_hdr && ra.data_offset == 8 + n_hdr);
    FUZZ_ASSERT_MSG(ra.data_bytes == file.len - 8 - n_hdr, "data_bytes %llu of %llu",
                    static_cast<unsigned long long>(ra.data_bytes),
                    static_cast<unsigned long long>(file.len - 8 - n_hdr));
    FUZZ_ASSERT(ra.tensor_count == a.tensors && ra.metadata_count == a.metadata);
    FUZZ_ASSERT(n_hdr <= opts.max_header_bytes);
    const uint32_t depth = json_depth(file.ptr + 8, file.ptr + header_end);
    FUZZ_ASSERT_MSG(depth < opts.max_json_depth, "nesting depth %u accepted with max_json_depth %u",
                    depth, opts.max_json_depth);
  }

  // 1b. The member loop's baseline build, where this host runs the AVX2 one.
  if (tblob::st_scan_uses_avx2()) {
    ScanState o(file.ptr, file.len, header_end, &opts);
    tblob_scan_result ro = TBLOB_SCAN_RESULT_INIT;
    tblob_diag dd = TBLOB_DIAG_INIT;
    tblob::st_scan_allow_avx2(false);
    const tblob_status so = tblob_st_scan(file.ptr, file.len, &opts, on_event, &o, nullptr, 0, &ro, &dd);
    tblob::st_scan_allow_avx2(true);
    FUZZ_ASSERT_MSG(so == sa, "the loop's builds disagree: %s (AVX2) and %s (baseline)", tblob_status_name(sa),
                    tblob_status_name(so));
    FUZZ_ASSERT_MSG(o.digest == a.digest && o.events == a.events, "the loop's builds report different events");
    FUZZ_ASSERT(dd.offset == da.offset && dd.tensor_index == da.tensor_index &&
                std::strcmp(dd.message, da.message) == 0);
    FUZZ_ASSERT(ro.tensor_count == ra.tensor_count && ro.metadata_count == ra.metadata_count &&
                ro.data_bytes == ra.data_bytes);
  }

  // 2. With scratch.
  size_t need = tblob_st_scan_scratch_bytes(ra.tensor_count, ra.metadata_count);
  FUZZ_ASSERT(need >= 16 && need != SIZE_MAX);
  size_t bytes = need, shift = 0;
  switch (p.variant) {
    case 1: bytes = need - 1; break;              // one byte short: TBLOB_E_BUFFER_TOO_SMALL
    case 2: shift = 1 + (p.lim % 7); break;       // misaligned start, exact size
    case 3: bytes = need * 2 + 64; break;         // generous
    default: break;
  }
  uint8_t *block = static_cast<uint8_t *>(std::malloc(bytes + shift));
  FUZZ_ASSERT(block != nullptr);
  std::memset(block, 0xA5, bytes + shift);  // the scratch is not expected to be zeroed
  ScanState b(file.ptr, file.len, header_end, &opts);
  tblob_scan_result rb = TBLOB_SCAN_RESULT_INIT;
  tblob_diag db = TBLOB_DIAG_INIT;
  tblob_status sb;
  {
    Arm arm;
    sb = tblob_st_scan(file.ptr, file.len, &opts, on_event, &b, block + shift, bytes, &rb, &db);
  }
  std::free(block);
  check_diag(db, sb);
  FUZZ_ASSERT_MSG(a.digest == b.digest && a.events == b.events,
                  "events differ between the scans without and with scratch");
  FUZZ_ASSERT(rb.tensor_count == ra.tensor_count && rb.metadata_count == ra.metadata_count);
  // Any non-NULL scratch asks for the whole-table checks; too little is an error.
  if (sa != TBLOB_OK && !is_post_scan(sa)) {
    FUZZ_ASSERT_MSG(sb == sa, "header error %s without scratch but %s with it",
                    tblob_status_name(sa), tblob_status_name(sb));
  } else if (p.variant == 1) {
    FUZZ_ASSERT_MSG(sb == TBLOB_E_BUFFER_TOO_SMALL, "scratch one byte short gave %s",
                    tblob_status_name(sb));
  } else {
    FUZZ_ASSERT_MSG(sb == TBLOB_OK || sb == TBLOB_E_DUPLICATE_NAME || sb == TBLOB_E_METADATA ||
                        is_post_scan(sb),
                    "with scratch: %s", tblob_status_name(sb));
    if (sb == TBLOB_OK) {
      FUZZ_ASSERT_MSG(sa == TBLOB_OK, "whole-table checks pass but the plain scan gave %s",
                      tblob_status_name(sa));
      FUZZ_ASSERT(rb.whole_table_checked == 1);
      FUZZ_ASSERT(rb.data_bytes == ra.data_bytes);
    }
  }
  if (sb != TBLOB_OK) FUZZ_ASSERT(rb.whole_table_checked == 0);

  // 3. Cancel at one of the events.
  if (a.events > 0) {
    ScanState c(file.ptr, file.len, header_end, &opts);
    c.cancel_at = static_cast<int64_t>(p.fail_at % a.events);
    tblob_diag dc = TBLOB_DIAG_INIT;
    const tblob_status sc =
        tblob_st_scan(file.ptr, file.len, &opts, on_event, &c, nullptr, 0, nullptr, &dc);
    FUZZ_ASSERT_MSG(sc == TBLOB_E_CANCELLED, "cancelled at event %lld of %llu: %s",
                    static_cast<long long>(c.cancel_at), static_cast<unsigned long long>(a.events),
                    tblob_status_name(sc));
    FUZZ_ASSERT(c.events == static_cast<uint64_t>(c.cancel_at) + 1);
    check_diag(dc, sc);
  }

  if (watch)
    FUZZ_ASSERT_MSG(fuzz::MallocWatch::count() == 0, "tblob_st_scan called malloc %llu times",
                    static_cast<unsigned long long>(fuzz::MallocWatch::count()));

  // 4. The unescaper's own validation on arbitrary bytes.
  {
    const size_t n = file.len < 4096 ? file.len : 4096;
    size_t out = 0;
    tblob_status su = tblob_json_unescape(reinterpret_cast<const char *>(file.ptr), n, nullptr, 0, &out, nullptr);
    FUZZ_ASSERT_MSG(su == TBLOB_OK || su == TBLOB_E_BUFFER_TOO_SMALL || su == TBLOB_E_JSON ||
                        su == TBLOB_E_UTF8,
                    "tblob_json_unescape on raw bytes: %s", tblob_status_name(su));
    if (su == TBLOB_OK || su == TBLOB_E_BUFFER_TOO_SMALL) {
      FUZZ_ASSERT_MSG(valid_utf8(file.ptr, n), "tblob_json_unescape accepted invalid UTF-8");
      FUZZ_ASSERT(out <= n);
      char *dst = static_cast<char *>(std::malloc(out ? out : 1));
      FUZZ_ASSERT(dst != nullptr);
      size_t out2 = 0;
      su = tblob_json_unescape(reinterpret_cast<const char *>(file.ptr), n, dst, out, &out2, nullptr);
      FUZZ_ASSERT(su == TBLOB_OK && out2 == out);
      fuzz::consume(fuzz::touch(dst, out));
      std::free(dst);
    }
  }
  return 0;
}
