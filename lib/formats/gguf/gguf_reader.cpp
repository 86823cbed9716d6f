// GGUF header -> tensor table. Every count and length is checked against the bytes left
// before it is used, every size goes through core/checked.h, and each rule has its own
// status (docs/gguf.md lists them in the order they are checked).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "core/checked.h"
#include "formats/gguf/gguf.h"
#include "table/meta_index.h"
#include "table/name_index.h"

namespace tblob {
namespace gguf {

namespace {

using ull = unsigned long long;

// ggml_type ids, block sizes and bytes per block (ggml's type traits). Removed ids keep
// their name with block_elems 0.
constexpr uint32_t kBlk = TBLOB_DTYPE_U8;
constexpr TypeInfo kTypes[] = {
    {0, "f32", 1, 4, TBLOB_DTYPE_F32},
    {1, "f16", 1, 2, TBLOB_DTYPE_F16},
    {2, "q4_0", 32, 18, kBlk},
    {3, "q4_1", 32, 20, kBlk},
    {4, "q4_2", 0, 0, kBlk},
    {5, "q4_3", 0, 0, kBlk},
    {6, "q5_0", 32, 22, kBlk},
    {7, "q5_1", 32, 24, kBlk},
    {8, "q8_0", 32, 34, kBlk},
    {9, "q8_1", 32, 36, kBlk},
    {10, "q2_K", 256, 84, kBlk},
    {11, "q3_K", 256, 110, kBlk},
    {12, "q4_K", 256, 144, kBlk},
    {13, "q5_K", 256, 176, kBlk},
    {14, "q6_K", 256, 210, kBlk},
    {15, "q8_K", 256, 292, kBlk},
    {16, "iq2_xxs", 256, 66, kBlk},
    {17, "iq2_xs", 256, 74, kBlk},
    {18, "iq3_xxs", 256, 98, kBlk},
    {19, "iq1_s", 256, 50, kBlk},
    {20, "iq4_nl", 32, 18, kBlk},
    {21, "iq3_s", 256, 110, kBlk},
    {22, "iq2_s", 256, 82, kBlk},
    {23, "iq4_xs", 256, 136, kBlk},
    {24, "i8", 1, 1, TBLOB_DTYPE_I8},
    {25, "i16", 1, 2, TBLOB_DTYPE_I16},
    {26, "i32", 1, 4, TBLOB_DTYPE_I32},
    {27, "i64", 1, 8, TBLOB_DTYPE_I64},
    {28, "f64", 1, 8, TBLOB_DTYPE_F64},
    {29, "iq1_m", 256, 56, kBlk},
    {30, "bf16", 1, 2, TBLOB_DTYPE_BF16},
    {31, "q4_0_4_4", 0, 0, kBlk},
    {32, "q4_0_4_8", 0, 0, kBlk},
    {33, "q4_0_8_8", 0, 0, kBlk},
    {34, "tq1_0", 256, 54, kBlk},
    {35, "tq2_0", 256, 66, kBlk},
    {36, "iq4_nl_4_4", 0, 0, kBlk},
    {37, "iq4_nl_4_8", 0, 0, kBlk},
    {38, "iq4_nl_8_8", 0, 0, kBlk},
    {39, "mxfp4", 32, 17, kBlk},
    {40, "nvfp4", 64, 36, kBlk},
    {41, "q1_0", 128, 18, kBlk},
};
constexpr uint32_t kTypeCount = sizeof(kTypes) / sizeof(kTypes[0]);

inline uint32_t rd32(const uint8_t *p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}
inline uint64_t rd64(const uint8_t *p) { return rd32(p) | (static_cast<uint64_t>(rd32(p + 4)) << 32); }

const char *value_type_name(uint32_t t) {
  static const char *const kNames[kValueTypeCount] = {"u8",  "i8",   "u16", "i16", "u32", "i32", "f32",
                                                      "bool", "string", "array", "u64", "i64", "f64"};
  return t < kValueTypeCount ? kNames[t] : "unknown";
}

// The key of kvs[i], for the duplicate check (a MetaIndex over the typed table itself: no
// copy of the keys).
void key_name(const void *ctx, size_t i, const char **p, size_t *n) {
  *p = kv_key(static_cast<const KvRef *>(ctx)[i], n);
}

struct Span {
  uint64_t begin, end;
  size_t row;
};

bool push_scalar_row(tblob_model *m, const char *key, size_t key_len, uint32_t type, const uint8_t *v);

class Reader {
 public:
  // rows_now: the metadata rows are made while reading (else build_rows makes them later).
  Reader(tblob_model *m, uint32_t fi, const Limits &lim, const Diag &diag, bool rows_now)
      : m_(m), fi_(fi), lim_(lim), diag_(diag), rows_now_(rows_now), arrays_(&m->alloc) {
    p_ = m->files[fi].source.data;
    n_ = m->files[fi].source.len;
    // A byte source holds only a prefix in memory (n_): the data region is checked against
    // its declared size (all of the 64-bit range when unknown; the opener checks the end).
    total_ = m->files[fi].source.kind == Source::kCallback ? source_total(m->files[fi].source) : n_;
  }
  Status run();

 private:
  uint64_t left() const { return n_ - pos_; }
  Status truncated(const char *what, uint64_t need) {
    return diag_.fail(TBLOB_E_GGUF_TRUNCATED, pos_, -1, "the header ends inside %s at byte %llu (%llu bytes needed, %llu left)",
                      what, static_cast<ull>(pos_), static_cast<ull>(need), static_cast<ull>(left()));
  }
  Status u32(const char *what, uint32_t *v) {
    if (left() < 4) return truncated(what, 4);
    *v = rd32(p_ + pos_);
    pos_ += 4;
    return TBLOB_OK;
  }
  Status u64(const char *what, uint64_t *v) {
    if (left() < 8) return truncated(what, 8);
    *v = rd64(p_ + pos_);
    pos_ += 8;
    return TBLOB_OK;
  }
  // A length-prefixed string, its length checked before its bytes are touched.
  Status str(const char *what, const char **s, size_t *len) {
    const uint64_t at = pos_;
    uint64_t k = 0;
    Status st = u64(what, &k);
    if (st != TBLOB_OK) return st;
    if (k > kMaxStringBytes || k > left())
      return diag_.fail(TBLOB_E_GGUF_STRING, at, -1, "%s at byte %llu: length %llu %s", what, static_cast<ull>(at),
                        static_cast<ull>(k), k > left() ? "runs past the end of the file" : "is above 2^30");
    *s = reinterpret_cast<const char *>(p_ + pos_);
    *len = static_cast<size_t>(k);
    pos_ += k;
    return TBLOB_OK;
  }
  Status header_limit() {
    if (pos_ > lim_.max_header_bytes)
      return diag_.fail(TBLOB_E_LIMIT_HEADER_BYTES, pos_, -1, "the GGUF header runs past byte %llu (max_header_bytes %llu)",
                        static_cast<ull>(pos_), static_cast<ull>(lim_.max_header_bytes));
    return TBLOB_OK;
  }
  Status preamble();
  Status key_value(uint64_t i);
  Status array(const char *key, size_t key_len, uint64_t at, uint64_t i);
  Status push_meta(const char *key, size_t key_len, const char *v, size_t vn);
  Status render(const char *key, size_t key_len, uint32_t type, const uint8_t *v) {
    if (!rows_now_) return TBLOB_OK;
    return push_scalar_row(m_, key, key_len, type, v) ? TBLOB_OK : diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  Status tensor_info(uint64_t i, uint32_t *types);
  Status data_region();

  tblob_model *m_;
  uint32_t fi_;
  const Limits &lim_;
  const Diag &diag_;
  const bool rows_now_;
  const uint8_t *p_;
  uint64_t n_;
  uint64_t total_;
  uint64_t pos_ = 0;
  uint32_t version_ = 0;
  uint64_t n_tensors_ = 0, n_kv_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  size_t first_row_ = 0;
  uint64_t data_start_ = 0;
  KvRef *kvs_ = nullptr;   // arena, n_kv_ entries
  PodVec<ArrayBytes> arrays_;
  size_t rows_seen_ = 0;   // metadata rows this file has added
};

Status Reader::preamble() {
  if (n_ < 4 || std::memcmp(p_, "GGUF", 4) != 0)
    return diag_.fail(TBLOB_E_UNKNOWN_FORMAT, 0, -1, "no GGUF magic");
  pos_ = 4;
  Status st = u32("the version", &version_);
  if (st != TBLOB_OK) return st;
  if (version_ == 1)
    return diag_.fail(TBLOB_E_GGUF_V1, 4, -1,
                      "GGUF version 1 (32-bit counts and lengths) is not read; convert the model again with a current "
                      "llama.cpp or gguf package");
  if (version_ != 0 && (version_ & 0xFFFFu) == 0)
    return diag_.fail(TBLOB_E_GGUF_BIG_ENDIAN, 4, -1,
                      "version field 0x%08x is a byte-swapped %u: a big-endian GGUF file, which this library does "
                      "not read",
                      version_, (version_ >> 24) | ((version_ >> 8) & 0xFF00u));
  if (version_ == 0 || version_ > 3)
    return diag_.fail(TBLOB_E_GGUF_VERSION, 4, -1, "GGUF version %u (this reader knows 2 and 3)", version_);
  if ((st = u64("the tensor count", &n_tensors_)) != TBLOB_OK) return st;
  if ((st = u64("the key/value count", &n_kv_)) != TBLOB_OK) return st;
  // Lower bounds of a valid entry: a key/value holds a key of >= 1 byte (8 + 1), a type (4) and
  // >= 1 value byte; a tensor info a name length (8), n_dims (4), a type (4) and an offset (8).
  // Counts the rest of the file cannot hold are rejected before anything is reserved for them.
  constexpr uint64_t kMinKv = 14, kMinTensor = 24;
  const uint64_t rest = left();
  if (n_kv_ > rest / kMinKv)
    return diag_.fail(TBLOB_E_GGUF_COUNT, 16, -1, "%llu key/values cannot fit in the %llu bytes left (each takes >= %llu)",
                      static_cast<ull>(n_kv_), static_cast<ull>(rest), static_cast<ull>(kMinKv));
  if (n_tensors_ > (rest - n_kv_ * kMinKv) / kMinTensor)
    return diag_.fail(TBLOB_E_GGUF_COUNT, 8, -1,
                      "%llu tensor infos cannot fit in the %llu bytes left after %llu key/values (each takes >= %llu)",
                      static_cast<ull>(n_tensors_), static_cast<ull>(rest), static_cast<ull>(n_kv_),
                      static_cast<ull>(kMinTensor));
  if (n_tensors_ > lim_.max_tensors)
    return diag_.fail(TBLOB_E_LIMIT_TENSORS, 8, -1, "%llu tensors (max_tensors %llu)", static_cast<ull>(n_tensors_),
                      static_cast<ull>(lim_.max_tensors));
  return TBLOB_OK;
}

Status Reader::push_meta(const char *key, size_t key_len, const char *v, size_t vn) {
  if (!meta_len_ok(key_len, vn) || !m_->metadata.push(meta_desc(key, key_len, v, vn)))  // strings <= 2^30
    return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  return TBLOB_OK;
}

// Writes v in decimal, NUL-terminated (at most 5 bytes), at compile time too. A free function:
// clang does not evaluate a member template defined after the constexpr constructor.
constexpr void put_small_text(char *out, int v) {
  char d[4] = {};
  int n = 0, k = 0;
  unsigned u = static_cast<unsigned>(v < 0 ? -v : v);
  do {
    d[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) out[k++] = '-';
  while (n) out[k++] = d[--n];
  out[k] = '\0';
}

// The texts of every 8-bit value, u8 "0".."255" and i8 "-128".."127", built at compile
// time: a one-byte key/value (a million of them fit in 20 MB) then costs no text of its own.
struct SmallTexts {
  char u8[256][4];
  char i8[256][5];  // indexed by the byte
  constexpr SmallTexts() : u8(), i8() {
    for (int b = 0; b < 256; ++b) {
      put_small_text(u8[b], b);
      put_small_text(i8[b], b < 128 ? b : b - 256);
    }
  }
};
constexpr SmallTexts kSmallTexts;

// A scalar as text: integers in decimal, bool as true/false, floats as the shortest text
// that reads back to the same value (std::to_chars: independent of the C locale).
// False when out of memory.
bool push_scalar_row(tblob_model *m, const char *key, size_t key_len, uint32_t type, const uint8_t *v) {
  // 8-bit values and bools point at static text (nothing allocated per key/value).
  if (type == kU8 || type == kI8 || type == kBool) {
    const char *t = type == kU8 ? kSmallTexts.u8[v[0]] : type == kI8 ? kSmallTexts.i8[v[0]] : v[0] ? "true" : "false";
    return m->metadata.push(meta_desc(key, key_len, t, std::strlen(t)));
  }
  char buf[40];
  char *end = buf;
  using ll = long long;
  int k = -1;  // integers: snprintf (digits only, so the C locale cannot matter)
  switch (type) {
    case kU8: k = std::snprintf(buf, sizeof(buf), "%u", static_cast<unsigned>(v[0])); break;
    case kI8: k = std::snprintf(buf, sizeof(buf), "%d", static_cast<int>(static_cast<int8_t>(v[0]))); break;
    case kU16: k = std::snprintf(buf, sizeof(buf), "%u", static_cast<unsigned>(v[0] | (v[1] << 8))); break;
    case kI16: k = std::snprintf(buf, sizeof(buf), "%d", static_cast<int>(static_cast<int16_t>(v[0] | (v[1] << 8)))); break;
    case kU32: k = std::snprintf(buf, sizeof(buf), "%lu", static_cast<unsigned long>(rd32(v))); break;
    case kI32: k = std::snprintf(buf, sizeof(buf), "%ld", static_cast<long>(static_cast<int32_t>(rd32(v)))); break;
    case kU64: k = std::snprintf(buf, sizeof(buf), "%llu", static_cast<ull>(rd64(v))); break;
    case kI64: k = std::snprintf(buf, sizeof(buf), "%lld", static_cast<ll>(static_cast<int64_t>(rd64(v)))); break;
    case kBool: {
      const char *t = v[0] ? "true" : "false";  // ggml reads any non-zero byte as true
      const size_t n = std::strlen(t);
      std::memcpy(buf, t, n);
      end = buf + n;
      break;
    }
    case kF32: {
      float f;
      const uint32_t bits = rd32(v);
      std::memcpy(&f, &bits, 4);
      end = std::to_chars(buf, buf + sizeof(buf), f).ptr;
      break;
    }
    default: {  // kF64
      double f;
      const uint64_t bits = rd64(v);
      std::memcpy(&f, &bits, 8);
      end = std::to_chars(buf, buf + sizeof(buf), f).ptr;
      break;
    }
  }
  const size_t len = k >= 0 ? static_cast<size_t>(k) : static_cast<size_t>(end - buf);
  char *text = m->arena.copy(buf, len);
  return text && meta_len_ok(key_len, len) && m->metadata.push(meta_desc(key, key_len, text, len));
}

// The metadata rows of the file's key/values (strings in place, scalars as text), then the
// key index: what metadata_ready() runs the first time metadata is read, so an open for
// tensors alone keeps only the 8-byte references (e.g. a million key/values: 8 MB, not 42).
Status build_rows(tblob_model *m) {
  const GgufExt *e = ext_of(m);
  if (!e) return TBLOB_OK;
  if (!m->metadata.reserve(e->meta_prefix + e->meta_rows)) return TBLOB_E_OUT_OF_MEMORY;
  for (size_t i = 0; i < e->kv_count; ++i) {
    size_t key_len;
    const char *key = kv_key(e->kvs[i], &key_len);
    const uint8_t *p = e->kvs[i].start + 8 + key_len;
    const uint32_t type = rd32(p);
    if (type == kArray) continue;
    const bool ok = type == kString ? meta_len_ok(key_len, rd64(p + 4)) &&
                                          m->metadata.push(meta_desc(key, key_len, reinterpret_cast<const char *>(p + 12),
                                                                     static_cast<size_t>(rd64(p + 4))))
                                    : push_scalar_row(m, key, key_len, type, p + 4);
    if (!ok) {
      m->metadata.reset();  // no half table: every metadata call says out of memory
      return TBLOB_E_OUT_OF_MEMORY;
    }
  }
  m->files[0].metadata_end = m->metadata.size();
  Diag quiet;
  const Status s = m->index_metadata_first_wins(quiet);
  if (s != TBLOB_OK) m->metadata.reset();
  return s;
}

// Arrays are validated and skipped: never materialized (a 150,000-entry token list stays in
// the file).
Status Reader::array(const char *key, size_t key_len, uint64_t at, uint64_t i) {
  const int kn = static_cast<int>(key_len > 120 ? 120 : key_len);
  uint32_t et = 0;
  uint64_t count = 0;
  Status st = u32("an array's element type", &et);
  if (st != TBLOB_OK) return st;
  const uint64_t count_at = pos_;
  if ((st = u64("an array's length", &count)) != TBLOB_OK) return st;
  if (et == kArray)
    return diag_.fail(TBLOB_E_GGUF_ARRAY, at, -1, "key \"%.*s\" (byte %llu): nested arrays are not allowed", kn, key,
                      static_cast<ull>(at));
  if (et >= kValueTypeCount)
    return diag_.fail(TBLOB_E_GGUF_VALUE_TYPE, at, -1, "key \"%.*s\" (byte %llu): array element type %u is unknown", kn,
                      key, static_cast<ull>(at), et);
  const uint64_t each = et == kString ? 8 : scalar_bytes(et);
  if (count > kMaxArrayElems || count > left() / each)
    return diag_.fail(TBLOB_E_GGUF_ARRAY, count_at, -1, "key \"%.*s\" (byte %llu): %llu %s elements %s", kn, key,
                      static_cast<ull>(at), static_cast<ull>(count), value_type_name(et),
                      count > kMaxArrayElems ? "are more than 2^30" : "cannot fit in the bytes left");
  const uint64_t begin = pos_;
  if (et != kString) {
    pos_ += count * each;  // count * each <= left()
    return arrays_.push(ArrayBytes{static_cast<size_t>(i), count * each}) ? TBLOB_OK
                                                                          : diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  for (uint64_t j = 0; j < count; ++j) {
    const char *s = nullptr;
    size_t len = 0;
    if ((st = str("an array string", &s, &len)) != TBLOB_OK) return st;
  }
  return arrays_.push(ArrayBytes{static_cast<size_t>(i), pos_ - begin}) ? TBLOB_OK
                                                                        : diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
}

Status Reader::key_value(uint64_t i) {
  const uint64_t at = pos_;
  const char *key = nullptr;
  size_t key_len = 0;
  Status st = str("a metadata key", &key, &key_len);
  if (st != TBLOB_OK) return st;
  if (key_len == 0)
    return diag_.fail(TBLOB_E_GGUF_KEY, at, -1, "key/value %llu (byte %llu) has an empty key", static_cast<ull>(i),
                      static_cast<ull>(at));
  const int kn = static_cast<int>(key_len > 120 ? 120 : key_len);
  if (key_len > lim_.max_name_bytes)
    return diag_.fail(TBLOB_E_LIMIT_NAME_BYTES, at, -1, "key \"%.*s...\" is %zu bytes (max_name_bytes %llu)", kn, key,
                      key_len, static_cast<ull>(lim_.max_name_bytes));
  uint32_t type = 0;
  if ((st = u32("a value type", &type)) != TBLOB_OK) return st;
  kvs_[i] = KvRef{p_ + at};
  const bool is_alignment = key_len == 17 && std::memcmp(key, "general.alignment", 17) == 0;
  if (is_alignment && type != kU32)
    return diag_.fail(TBLOB_E_GGUF_ALIGNMENT, at, -1, "general.alignment (byte %llu) is of type %s; it must be u32",
                      static_cast<ull>(at), value_type_name(type));
  if (type == kArray) return array(key, key_len, at, i);
  ++rows_seen_;
  if (type == kString) {
    const char *v = nullptr;
    size_t vn = 0;
    if ((st = str("a string value", &v, &vn)) != TBLOB_OK) return st;
    return rows_now_ ? push_meta(key, key_len, v, vn) : TBLOB_OK;
  }
  const uint32_t size = scalar_bytes(type);
  if (size == 0)
    return diag_.fail(TBLOB_E_GGUF_VALUE_TYPE, at, -1, "key \"%.*s\" (byte %llu): value type %u is unknown", kn, key,
                      static_cast<ull>(at), type);
  if (left() < size) return truncated("a value", size);
  const uint8_t *v = p_ + pos_;
  pos_ += size;
  if (is_alignment) {
    const uint32_t a = rd32(v);
    if (a == 0 || (a & (a - 1)) != 0)
      return diag_.fail(TBLOB_E_GGUF_ALIGNMENT, at, -1, "general.alignment (byte %llu) is %u, not a power of two",
                        static_cast<ull>(at), a);
    alignment_ = a;
  }
  return render(key, key_len, type, v);
}

Status Reader::tensor_info(uint64_t i, uint32_t *types) {
  const uint64_t at = pos_;
  const int64_t ti = static_cast<int64_t>(i);
  const char *name = nullptr;
  size_t name_len = 0;
  Status st = str("a tensor name", &name, &name_len);
  if (st != TBLOB_OK) return st;
  const int nn = static_cast<int>(name_len > 120 ? 120 : name_len);
  if (name_len > kMaxNameBytes)
    return diag_.fail(TBLOB_E_GGUF_NAME, at, ti, "tensor %llu (byte %llu): name \"%.*s...\" is %zu bytes; ggml allows %u",
                      static_cast<ull>(i), static_cast<ull>(at), nn, name, name_len, kMaxNameBytes);
  if (name_len > lim_.max_name_bytes)
    return diag_.fail(TBLOB_E_LIMIT_NAME_BYTES, at, ti, "tensor \"%.*s\" name is %zu bytes (max_name_bytes %llu)", nn,
                      name, name_len, static_cast<ull>(lim_.max_name_bytes));
  uint32_t n_dims = 0;
  if ((st = u32("a tensor's n_dims", &n_dims)) != TBLOB_OK) return st;
  if (n_dims > kMaxDims)
    return diag_.fail(TBLOB_E_GGUF_DIMS, at, ti, "tensor \"%.*s\" (byte %llu) has %u dimensions; ggml allows %u", nn,
                      name, static_cast<ull>(at), n_dims, kMaxDims);
  if (n_dims > lim_.max_rank)
    return diag_.fail(TBLOB_E_LIMIT_RANK, at, ti, "tensor \"%.*s\" has %u dimensions (max_rank %u)", nn, name, n_dims,
                      lim_.max_rank);
  uint64_t ne[kMaxDims] = {1, 1, 1, 1};
  bool any_zero = false;
  for (uint32_t d = 0; d < n_dims; ++d) {
    if ((st = u64("a tensor dimension", &ne[d])) != TBLOB_OK) return st;
    if (ne[d] > static_cast<uint64_t>(INT64_MAX))
      return diag_.fail(TBLOB_E_GGUF_DIMS, pos_ - 8, ti, "tensor \"%.*s\": ne[%u] = %llu is negative as ggml's int64", nn,
                        name, d, static_cast<ull>(ne[d]));
    any_zero |= ne[d] == 0;
  }
  // The product of the non-zero dimensions stays below 2^63 even when a zero dimension empties
  // the tensor (ggml skips the check then): every row count taken from the shape is then
  // representable.
  uint64_t elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d)
    if (ne[d] != 0 && (!checked_mul(elements, ne[d], &elements) || elements >= static_cast<uint64_t>(INT64_MAX)))
      return diag_.fail(TBLOB_E_SHAPE_OVERFLOW, at, ti, "tensor \"%.*s\": the element count overflows int64", nn, name);
  if (any_zero) elements = 0;
  uint32_t type = 0;
  const uint64_t type_at = pos_;
  if ((st = u32("a tensor type", &type)) != TBLOB_OK) return st;
  const TypeInfo *t = type_info(type);
  if (!t || t->block_elems == 0)
    return diag_.fail(TBLOB_E_GGUF_TYPE, type_at, ti, "tensor \"%.*s\": ggml type %u %s%s", nn, name, type,
                      t ? t->name : "is unknown", t ? " was removed from ggml" : "");
  if (ne[0] % t->block_elems != 0)
    return diag_.fail(TBLOB_E_GGUF_ROW, type_at, ti, "tensor \"%.*s\" (%s): a row of %llu elements is not a whole number of %u-element blocks",
                      nn, name, t->name, static_cast<ull>(ne[0]), t->block_elems);
  uint64_t bytes;
  if (!checked_mul(elements / t->block_elems, t->block_bytes, &bytes))
    return diag_.fail(TBLOB_E_SHAPE_OVERFLOW, at, ti, "tensor \"%.*s\": the byte count overflows", nn, name);
  uint64_t offset = 0;
  if ((st = u64("a tensor offset", &offset)) != TBLOB_OK) return st;
  uint64_t *shape = static_cast<uint64_t *>(m_->arena.alloc(sizeof(uint64_t) * (n_dims ? n_dims : 1)));
  if (!shape) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  for (uint32_t d = 0; d < n_dims; ++d) shape[d] = ne[n_dims - 1 - d];  // outermost first
  TensorDesc row{};
  row.name = name;
  row.name_len = name_len;
  row.shape = shape;
  row.rank = n_dims;
  row.dtype = t->dtype;
  row.file_index = fi_;
  row.entry_status = TBLOB_OK;
  row.begin = offset;
  row.end = offset;  // + bytes once the offset is known to be in range
  row.file_offset = bytes;  // held here until data_region() places the row
  row.elements = elements;
  row.order = i;
  row.key_offset = at;
  types[i] = type;
  if (!m_->tensors.push(row)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  return TBLOB_OK;
}

// Offsets: aligned, inside the data region, no overlap, then ggml's layout (each tensor at the
// previous one's end padded to the alignment, in header order).
Status Reader::data_region() {
  uint64_t start;
  if (!checked_align_up(pos_, alignment_, &start)) start = UINT64_MAX;
  FileDesc &f = m_->files[fi_];
  const size_t rows = m_->tensors.size() - first_row_;
  if (rows > 0 && start > total_)
    return diag_.fail(TBLOB_E_GGUF_DATA_RANGE, pos_, -1,
                      "the data region would start at byte %llu (header end %llu aligned to %u), past the end of the "
                      "file (%llu bytes)",
                      static_cast<ull>(start), static_cast<ull>(pos_), alignment_, static_cast<ull>(total_));
  if (start > total_) start = total_;
  data_start_ = start;
  f.data_offset = start;
  f.data_bytes = total_ - start;
  const uint64_t region = total_ - start;
  for (size_t r = first_row_; r < m_->tensors.size(); ++r) {
    TensorDesc &t = m_->tensors[r];
    const uint64_t bytes = t.file_offset;
    const int nn = static_cast<int>(t.name_len > 120 ? 120 : t.name_len);
    const int64_t ti = static_cast<int64_t>(t.order);
    if (t.begin % alignment_ != 0)
      return diag_.fail(TBLOB_E_GGUF_OFFSET_ALIGN, t.key_offset, ti,
                        "tensor \"%.*s\" (byte %llu): offset %llu is not a multiple of the alignment %u", nn, t.name,
                        static_cast<ull>(t.key_offset), static_cast<ull>(t.begin), alignment_);
    if (!range_inside(t.begin, bytes, region))
      return diag_.fail(TBLOB_E_GGUF_DATA_RANGE, t.key_offset, ti,
                        "tensor \"%.*s\" (byte %llu): data [%llu, +%llu) runs past the data region of %llu bytes "
                        "(file byte %llu on)",
                        nn, t.name, static_cast<ull>(t.key_offset), static_cast<ull>(t.begin), static_cast<ull>(bytes),
                        static_cast<ull>(region), static_cast<ull>(start));
    t.end = t.begin + bytes;
    t.file_offset = start + t.begin;
  }
  // Overlap, whatever the order: sorted by begin, each non-empty range starts at or after
  // the furthest end so far.
  PodVec<Span> spans(&m_->alloc);
  if (!spans.reserve(rows)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  for (size_t r = first_row_; r < m_->tensors.size(); ++r)
    if (m_->tensors[r].end > m_->tensors[r].begin) spans.push(Span{m_->tensors[r].begin, m_->tensors[r].end, r});
  std::sort(spans.data(), spans.data() + spans.size(),
            [](const Span &a, const Span &b) { return a.begin != b.begin ? a.begin < b.begin : a.row < b.row; });
  size_t far = SIZE_MAX;
  for (size_t k = 0; k < spans.size(); ++k) {
    if (far != SIZE_MAX && spans[k].begin < spans[far].end) {
      const TensorDesc &a = m_->tensors[spans[far].row];
      const TensorDesc &b = m_->tensors[spans[k].row];
      const TensorDesc &later = a.order > b.order ? a : b;
      const TensorDesc &other = a.order > b.order ? b : a;
      return diag_.fail(TBLOB_E_GGUF_OVERLAP, later.key_offset, static_cast<int64_t>(later.order),
                        "tensor \"%.*s\" data [%llu, %llu) overlaps tensor \"%.*s\" [%llu, %llu)",
                        TBLOB_NAME_ARGS(later.name, later.name_len),
                        static_cast<ull>(later.begin), static_cast<ull>(later.end),
                        TBLOB_NAME_ARGS(other.name, other.name_len),
                        static_cast<ull>(other.begin), static_cast<ull>(other.end));
    }
    if (far == SIZE_MAX || spans[k].end > spans[far].end) far = k;
  }
  uint64_t expect = 0;
  for (size_t r = first_row_; r < m_->tensors.size(); ++r) {
    const TensorDesc &t = m_->tensors[r];
    if (t.begin != expect)
      return diag_.fail(TBLOB_E_GGUF_LAYOUT, t.key_offset, static_cast<int64_t>(t.order),
                        "tensor \"%.*s\" (byte %llu) is at data offset %llu; the previous tensor's end padded to %u "
                        "puts it at %llu (ggml reads tensors back to back, in header order)",
                        TBLOB_NAME_ARGS(t.name, t.name_len), static_cast<ull>(t.key_offset),
                        static_cast<ull>(t.begin), alignment_, static_cast<ull>(expect));
    if (!checked_align_up(t.end, alignment_, &expect)) expect = UINT64_MAX;  // end <= file size
  }
  return TBLOB_OK;
}

Status Reader::run() {
  Status st = preamble();
  if (st != TBLOB_OK) return st;
  FileDesc &f = m_->files[fi_];
  first_row_ = m_->tensors.size();
  f.metadata_begin = m_->metadata.size();
  // n_kv_ and n_tensors_ are bounded by the file's bytes (preamble), so these are too.
  if ((rows_now_ && !m_->metadata.reserve(m_->metadata.size() + static_cast<size_t>(n_kv_))) ||
      !m_->tensors.reserve(first_row_ + static_cast<size_t>(n_tensors_)))
    return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  kvs_ = static_cast<KvRef *>(m_->arena.alloc(sizeof(KvRef) * (n_kv_ ? n_kv_ : 1)));
  if (!kvs_) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  for (uint64_t i = 0; i < n_kv_; ++i) {
    if ((st = key_value(i)) != TBLOB_OK) return st;
    if ((st = header_limit()) != TBLOB_OK) return st;
  }
  {
    MetaIndex idx;
    if (!idx.build(&m_->alloc, static_cast<size_t>(n_kv_), key_name, kvs_)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    if (idx.has_duplicate()) {
      size_t first_len, later_len;
      const char *first = kv_key(kvs_[idx.dup_first()], &first_len);
      const char *later = kv_key(kvs_[idx.dup_second()], &later_len);
      // A key's length field is the 8 bytes before it.
      const uint64_t first_at = static_cast<uint64_t>(reinterpret_cast<const uint8_t *>(first) - p_) - 8;
      const uint64_t later_at = static_cast<uint64_t>(reinterpret_cast<const uint8_t *>(later) - p_) - 8;
      return diag_.fail(TBLOB_E_GGUF_KEY, later_at, -1, "key \"%.*s\" appears twice (bytes %llu and %llu)",
                        static_cast<int>(later_len > 120 ? 120 : later_len), later,
                        static_cast<ull>(first_at), static_cast<ull>(later_at));
    }
  }
  f.metadata_end = m_->metadata.size();
  uint32_t *types = static_cast<uint32_t *>(m_->arena.alloc(sizeof(uint32_t) * (n_tensors_ ? n_tensors_ : 1)));
  GgufExt *ext = static_cast<GgufExt *>(m_->arena.alloc(sizeof(GgufExt)));
  if (!types || !ext) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  for (uint64_t i = 0; i < n_tensors_; ++i) {
    if ((st = tensor_info(i, types)) != TBLOB_OK) return st;
    if ((st = header_limit()) != TBLOB_OK) return st;
  }
  if ((st = data_region()) != TBLOB_OK) return st;
  f.tensor_begin = first_row_;
  f.tensor_end = m_->tensors.size();
  f.rows_in_order = true;
  ext->magic = kExtMagic;
  ext->first_row = first_row_;
  ext->rows = m_->tensors.size() - first_row_;
  ext->types = types;
  ext->alignment = alignment_;
  ext->version = version_;
  ext->kvs = kvs_;
  ext->kv_count = static_cast<size_t>(n_kv_);
  ext->meta_prefix = f.metadata_begin;
  ext->meta_rows = rows_seen_;
  // The arrays' element bytes, moved into the arena (the vector is freed with the reader).
  ArrayBytes *arrays = static_cast<ArrayBytes *>(m_->arena.alloc(sizeof(ArrayBytes) * (arrays_.size() ? arrays_.size() : 1)));
  if (!arrays) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  if (arrays_.size()) std::memcpy(arrays, arrays_.data(), sizeof(ArrayBytes) * arrays_.size());
  ext->arrays = arrays;
  ext->array_count = arrays_.size();
  m_->ext = ext;
  m_->ops = &kFormat;  // dequantization and typed metadata: gguf_format.cpp
  return TBLOB_OK;
}

}  // namespace

const TypeInfo *type_info(uint32_t ggml_type) { return ggml_type < kTypeCount ? &kTypes[ggml_type] : nullptr; }

const GgufExt *ext_of(const tblob_model *m) {
  // The rows' operations say whose ext it is (a store model with a GGUF layer has GGUF's).
  const GgufExt *e = m && m->ops == &kFormat ? static_cast<const GgufExt *>(m->ext) : nullptr;
  return e && e->magic == kExtMagic ? e : nullptr;
}

bool looks_like(const uint8_t *p, size_t n) { return n >= 4 && std::memcmp(p, "GGUF", 4) == 0; }

Status read_file(tblob_model *m, uint32_t file_index, const Limits &limits, const Diag &diag) {
  Reader r(m, file_index, limits, diag, true);
  return r.run();
}

Status open_detected(tblob_model *m, const Limits &limits, const Diag &diag) {
  m->format = TBLOB_FORMAT_GGUF;
  // A file of its own: its metadata rows and index wait for the first metadata call.
  Reader r(m, 0, limits, diag, false);
  Status st = r.run();
  if (st != TBLOB_OK) return st;
  if ((st = m->index_names(diag)) != TBLOB_OK) return st;
  m->build_metadata = build_rows;
  return TBLOB_OK;
}

}  // namespace gguf

}  // namespace tblob
