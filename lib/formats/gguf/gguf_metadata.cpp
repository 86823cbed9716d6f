// The typed metadata table of a GGUF model: key/values read where they lie in the file.
// Arrays are walked, never copied, and nothing here allocates.
#include <algorithm>
#include <cstring>

#include "formats/gguf/gguf.h"

namespace tblob {
namespace gguf {

namespace {

using ull = unsigned long long;

inline uint64_t rd(const uint8_t *p, uint32_t n) {
  uint64_t v = 0;
  for (uint32_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(p[k]) << (8 * k);
  return v;
}

// splitmix64's finalizer: spreads every input bit over the result.
inline uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Resolves [first, first + count) against n elements (count UINT64_MAX: to the end).
bool span(uint64_t n, uint64_t first, uint64_t *count) {
  if (first > n) return false;
  if (*count == UINT64_MAX) *count = n - first;
  return *count <= n - first;
}

}  // namespace

MetaKv decode_kv(const tblob_model *m, const GgufExt &e, size_t i) {
  const KvRef &r = e.kvs[i];
  MetaKv kv;
  kv.key = kv_key(r, &kv.key_len);
  const uint8_t *p = r.start + 8 + kv.key_len;
  kv.type = load_le32(p);
  p += 4;
  kv.element_type = 0;
  kv.count = 1;
  kv.meta_row = SIZE_MAX;
  if (kv.type == kArray) {
    kv.element_type = load_le32(p);
    kv.count = load_le64(p + 4);
    kv.data = p + 12;
    const ArrayBytes *end = e.arrays + e.array_count;
    const ArrayBytes *a = std::lower_bound(e.arrays, end, i, [](const ArrayBytes &x, size_t k) { return x.kv < k; });
    kv.bytes = a != end && a->kv == i ? a->bytes : 0;
    return kv;
  }
  if (kv.type == kString) {
    kv.bytes = load_le64(p);
    kv.data = p + 8;
  } else {
    kv.data = p;
    kv.bytes = scalar_bytes(kv.type);
  }
  // The file's rows are in kv order and name the key in place: the row whose name is this key.
  if (m->metadata.size() < e.meta_prefix + e.meta_rows) return kv;  // rows not made yet (metadata_ready)
  const MetaDesc *rows = m->metadata.data() + e.meta_prefix;
  const MetaDesc *row = std::lower_bound(rows, rows + e.meta_rows, kv.key,
                                         [](const MetaDesc &d, const char *k) { return d.name < k; });
  if (row != rows + e.meta_rows && row->name == kv.key) kv.meta_row = e.meta_prefix + static_cast<size_t>(row - rows);
  return kv;
}

uint64_t typed_find(const tblob_model *m, const GgufExt &e, const char *key, size_t key_len) {
  // Strings and scalars are in the metadata index: its first hit is the first in typed order,
  // since the typed table lists the metadata rows in their order with the arrays in between.
  const size_t row = m->metadata_index.find(key, key_len);
  if (row != SIZE_MAX) {
    if (row < e.meta_prefix) return row;
    // The key/value whose key is the row's name (kvs are in file order): found by address.
    const uint8_t *start = reinterpret_cast<const uint8_t *>(m->metadata[row].name) - 8;
    const KvRef *k = std::lower_bound(e.kvs, e.kvs + e.kv_count, start,
                                      [](const KvRef &x, const uint8_t *s) { return x.start < s; });
    if (k != e.kvs + e.kv_count && k->start == start) return e.meta_prefix + static_cast<uint64_t>(k - e.kvs);
  }
  for (size_t a = 0; a < e.array_count; ++a) {
    size_t n;
    const char *k = kv_key(e.kvs[e.arrays[a].kv], &n);
    if (n == key_len && std::memcmp(k, key, key_len) == 0) return e.meta_prefix + e.arrays[a].kv;
  }
  return UINT64_MAX;
}

void scalar_value(const MetaKv &kv, uint64_t *u, int64_t *i, double *f) {
  *u = 0;
  *i = 0;
  *f = 0.0;
  const uint8_t *p = kv.data;
  switch (kv.type) {
    case kU8: case kU16: case kU32: case kU64: *u = rd(p, scalar_bytes(kv.type)); break;
    case kBool: *u = p[0] != 0; break;
    case kI8: *i = static_cast<int8_t>(p[0]); break;
    case kI16: *i = static_cast<int16_t>(rd(p, 2)); break;
    case kI32: *i = static_cast<int32_t>(rd(p, 4)); break;
    case kI64: *i = static_cast<int64_t>(rd(p, 8)); break;
    case kF32: {
      const uint32_t b = static_cast<uint32_t>(rd(p, 4));
      float v;
      std::memcpy(&v, &b, 4);
      *f = v;
      break;
    }
    case kF64: {
      const uint64_t b = rd(p, 8);
      std::memcpy(f, &b, 8);
      break;
    }
    default: break;
  }
}

Status array_get(const MetaKv &kv, uint64_t first, uint64_t count, void *buf, size_t cap, const Diag &diag) {
  const uint32_t each = scalar_bytes(kv.element_type);
  const int kn = static_cast<int>(kv.key_len > 120 ? 120 : kv.key_len);
  if (kv.type != kArray || each == 0)
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "invalid argument: \"%.*s\" is %s; tblob_metadata_array_get reads numeric and bool arrays", kn,
                     kv.key, kv.type != kArray ? "not an array" : "a string array (tblob_metadata_array_strings)");
  if (!span(kv.count, first, &count))
    return diag.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "elements [%llu, +%llu) of \"%.*s\" past its %llu elements",
                     static_cast<ull>(first), static_cast<ull>(count), kn, kv.key, static_cast<ull>(kv.count));
  const uint64_t need = count * each;  // <= the array's bytes, which fit in memory
  if (need > cap)
    return diag.fail(TBLOB_E_BUFFER_TOO_SMALL, TBLOB_NO_OFFSET, -1, "%llu elements of \"%.*s\" take %llu bytes; buf holds %zu",
                     static_cast<ull>(count), kn, kv.key, static_cast<ull>(need), cap);
  const uint8_t *src = kv.data + first * each;
  uint8_t *dst = static_cast<uint8_t *>(buf);
  for (uint64_t k = 0; k < count; ++k, src += each, dst += each) {
    if (kv.element_type == kBool) {
      *dst = src[0] != 0;
      continue;
    }
    const uint64_t v = rd(src, each);  // little-endian in the file, host order out
    switch (each) {
      case 1: *dst = static_cast<uint8_t>(v); break;
      case 2: { const uint16_t x = static_cast<uint16_t>(v); std::memcpy(dst, &x, 2); break; }
      case 4: { const uint32_t x = static_cast<uint32_t>(v); std::memcpy(dst, &x, 4); break; }
      default: std::memcpy(dst, &v, 8); break;
    }
  }
  return TBLOB_OK;
}

Status array_strings(const MetaKv &kv, uint64_t first, uint64_t count, bool resume, uint64_t *element,
                     uint64_t *position, StringFn fn, void *user, const Diag &diag) {
  const int kn = static_cast<int>(kv.key_len > 120 ? 120 : kv.key_len);
  if (kv.type != kArray || kv.element_type != kString)
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "invalid argument: \"%.*s\" is %s; string arrays only", kn, kv.key,
                     kv.type != kArray ? "not an array" : "a numeric array (tblob_metadata_array_get)");
  if (!span(kv.count, first, &count))
    return diag.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "elements [%llu, +%llu) of \"%.*s\" past its %llu elements",
                     static_cast<ull>(first), static_cast<ull>(count), kn, kv.key, static_cast<ull>(kv.count));
  uint64_t e = 0, pos = 0;
  if (resume && *element <= first && *element <= kv.count && *position <= kv.bytes) {
    e = *element;
    pos = *position;
  }
  // Every length was checked at open; a resumed position is re-checked as it goes, so even a
  // position that is not an element start reads nothing outside the array.
  const uint64_t end = first + count;
  for (; e < end; ++e) {
    if (kv.bytes - pos < 8) break;
    const uint64_t len = rd(kv.data + pos, 8);
    if (len > kv.bytes - pos - 8) break;
    if (e >= first && fn && fn(user, e, reinterpret_cast<const char *>(kv.data + pos + 8), static_cast<size_t>(len))) {
      *element = e + 1;
      *position = pos + 8 + len;
      return diag.fail(TBLOB_E_CANCELLED, TBLOB_NO_OFFSET, -1, "cancelled by the callback at element %llu of \"%.*s\"",
                       static_cast<ull>(e), kn, kv.key);
    }
    pos += 8 + len;
  }
  if (e < end)  // only a cursor that was not the library's gets here
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "invalid argument: the cursor does not point at an element of \"%.*s\"", kn, kv.key);
  *element = e;
  *position = pos;
  return TBLOB_OK;
}

uint64_t cursor_check(const MetaKv &kv, uint64_t array, uint64_t element, uint64_t position) {
  const uint64_t base = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(kv.data));
  return mix(mix(mix(base ^ array) ^ element) ^ position);
}

}  // namespace gguf
}  // namespace tblob
