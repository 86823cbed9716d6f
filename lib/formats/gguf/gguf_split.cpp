// Split GGUF sets (gguf-split, gguf-py's split writer): NAME-00001-of-0000N.gguf ...
// NAME-0000N-of-0000N.gguf, each a whole GGUF file with split.no (its 0-based number),
// split.count (N) and split.tensors.count (the set's tensor total). Opened from any part as one
// model: the parts are files 0..N-1 in number order, their tensors one table in that order,
// the metadata and typed table those of part 1 (the others hold only the split keys). A part
// that is absent is TBLOB_E_GGUF_SPLIT_MISSING; keys that disagree with the names or the
// tensor total are TBLOB_E_GGUF_SPLIT (docs/gguf.md, "Split sets").
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "formats/gguf/gguf.h"
#include "io/source.h"

namespace tblob {
namespace gguf {

namespace {

using ull = unsigned long long;
constexpr char kTail[] = "-00000-of-00000.gguf";  // the shape of the name's end
constexpr size_t kTailLen = sizeof(kTail) - 1;

// "-kkkkk-of-nnnnn.gguf" at the end of path: the prefix length, k and n (true when it matches).
bool split_name(const char *path, size_t len, size_t *prefix, uint32_t *k, uint32_t *n) {
  if (len < kTailLen) return false;
  const char *t = path + len - kTailLen;
  uint32_t a = 0, b = 0;
  for (size_t i = 0; i < kTailLen; ++i) {
    const char c = t[i];
    if (kTail[i] == '0') {
      if (c < '0' || c > '9') return false;
      (i < 6 ? a : b) = (i < 6 ? a : b) * 10 + static_cast<uint32_t>(c - '0');
    } else if (c != kTail[i]) {
      return false;
    }
  }
  if (a == 0 || b == 0 || a > b) return false;
  *prefix = len - kTailLen;
  *k = a;
  *n = b;
  return true;
}

// An integer key of the part's key/values: false when absent; *bad when not an integer.
bool int_key(const tblob_model *m, const GgufExt &e, const char *key, int64_t *v, bool *bad) {
  const size_t kl = std::strlen(key);
  for (size_t i = 0; i < e.kv_count; ++i) {
    size_t len;
    const char *k = kv_key(e.kvs[i], &len);
    if (len != kl || std::memcmp(k, key, kl) != 0) continue;
    const MetaKv kv = decode_kv(m, e, i);
    const uint32_t t = kv.type;
    if (t == kF32 || t == kF64 || t == kBool || scalar_bytes(t) == 0) {
      *bad = true;
      return true;
    }
    uint64_t u = 0;
    int64_t s = 0;
    double f = 0;
    scalar_value(kv, &u, &s, &f);
    *v = (t == kI8 || t == kI16 || t == kI32 || t == kI64) ? s : static_cast<int64_t>(u);
    return true;
  }
  return false;
}

using PartReader = Status (*)(tblob_model *m, uint32_t part, const Limits &limits, const Diag &diag);
Status read_set(tblob_model *m, const char *path, uint32_t count, PartReader read_part, const Limits &limits,
                const Diag &diag);

Status open_set(tblob_model *m, const char *path, size_t prefix, uint32_t given, uint32_t count, const Limits &limits,
                const Diag &diag) {
  if (count > limits.max_files)
    return diag.fail(TBLOB_E_LIMIT_FILES, TBLOB_NO_OFFSET, -1, "%s: a split set of %u files (max_files %u)", path, count,
                     limits.max_files);
  const size_t len = prefix + kTailLen + 24;  // room for any two u32 numbers
  char *part = static_cast<char *>(m->arena.alloc(len));
  if (!part) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  std::memcpy(part, path, prefix);
  // File 0 is the part opened; the others are added after it, then the first `given` files
  // rotated so that file i is part i + 1, before any row records its file index.
  for (uint32_t i = 0; i < count; ++i) {
    if (i + 1 == given) continue;
    std::snprintf(part + prefix, kTailLen + 24, "-%05u-of-%05u.gguf", i + 1, count);
    if (!path_is_regular_file(part))
      return diag.fail(TBLOB_E_GGUF_SPLIT_MISSING, TBLOB_NO_OFFSET, -1,
                       "split set of %s: part %u of %u, %s, is missing", path, i + 1, count, part);
    const Status st = model_add_file(m, part, limits.mode, diag);
    if (st != TBLOB_OK) return st;
  }
  std::rotate(m->files.data(), m->files.data() + 1, m->files.data() + given);
  return read_set(m, path, count, &read_file, limits, diag);
}

// Reads parts 0..count-1 (files 0..count-1 of m, in part order) with read_part, checks their
// split keys and makes them one model.
Status read_set(tblob_model *m, const char *path, uint32_t count, PartReader read_part, const Limits &limits,
                const Diag &diag) {
  const GgufExt **exts = static_cast<const GgufExt **>(m->arena.alloc(sizeof(GgufExt *) * count));
  if (!exts) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  int64_t total = -1;
  for (uint32_t i = 0; i < count; ++i) {
    const char *part_path = m->files[i].path;
    Status st = read_part(m, i, limits, diag);
    if (st != TBLOB_OK) return st;
    const GgufExt &e = *ext_of(m);
    exts[i] = &e;
    int64_t no = -1, n = -1, tc = -1;
    bool bad = false;
    const bool has_no = int_key(m, e, "split.no", &no, &bad), has_n = int_key(m, e, "split.count", &n, &bad),
               has_tc = int_key(m, e, "split.tensors.count", &tc, &bad);
    if (bad)
      return diag.fail(TBLOB_E_GGUF_SPLIT, TBLOB_NO_OFFSET, -1, "%s: a split.* key is not an integer", part_path);
    if (!has_no || !has_n || no != static_cast<int64_t>(i) || n != static_cast<int64_t>(count))
      return diag.fail(TBLOB_E_GGUF_SPLIT, TBLOB_NO_OFFSET, -1,
                       "%s: split.no %lld and split.count %lld where its name says part %u of %u (split.no %u)%s", part_path,
                       static_cast<long long>(no), static_cast<long long>(n), i + 1, count, i,
                       !has_no || !has_n ? "; a key is missing" : "");
    if (i == 0 && !has_tc)
      return diag.fail(TBLOB_E_GGUF_SPLIT, TBLOB_NO_OFFSET, -1, "%s: split.tensors.count is missing", part_path);
    if (i == 0) total = tc;
    if (has_tc && tc != total)
      return diag.fail(TBLOB_E_GGUF_SPLIT, TBLOB_NO_OFFSET, -1, "%s: split.tensors.count %lld, part 1 says %lld", part_path,
                       static_cast<long long>(tc), static_cast<long long>(total));
  }
  if (static_cast<uint64_t>(total) != m->tensors.size())
    return diag.fail(TBLOB_E_GGUF_SPLIT, TBLOB_NO_OFFSET, -1,
                     "split set of %s: split.tensors.count is %lld, the %u parts hold %zu tensors", path,
                     static_cast<long long>(total), count, m->tensors.size());
  if (m->tensors.size() > limits.max_tensors)
    return diag.fail(TBLOB_E_LIMIT_TENSORS, TBLOB_NO_OFFSET, -1, "split set of %s: %zu tensors (max_tensors %llu)", path,
                     m->tensors.size(), static_cast<ull>(limits.max_tensors));
  // One ext for the set: part 1's key/values, every part's ggml types in row order.
  GgufExt *set = static_cast<GgufExt *>(m->arena.alloc(sizeof(GgufExt)));
  uint32_t *types = static_cast<uint32_t *>(m->arena.alloc(sizeof(uint32_t) * (m->tensors.size() + 1)));
  if (!set || !types) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  for (uint32_t i = 0; i < count; ++i)
    if (exts[i]->rows) std::memcpy(types + exts[i]->first_row, exts[i]->types, sizeof(uint32_t) * exts[i]->rows);
  *set = *exts[0];
  set->first_row = 0;
  set->rows = m->tensors.size();
  set->types = types;
  m->ext = set;
  // The metadata table is part 1's (the typed table's rows point there).
  const size_t meta_end = m->files[0].metadata_end;
  m->metadata.resize(meta_end);
  for (size_t i = 1; i < m->files.size(); ++i) m->files[i].metadata_begin = m->files[i].metadata_end = meta_end;
  m->format = TBLOB_FORMAT_GGUF;
  Status st = m->index_names(diag);
  if (st != TBLOB_OK) return st;
  return m->index_metadata_first_wins(diag);
}

bool short_of_bytes(Status s) {
  return s == TBLOB_E_GGUF_TRUNCATED || s == TBLOB_E_GGUF_STRING || s == TBLOB_E_GGUF_ARRAY || s == TBLOB_E_GGUF_COUNT;
}

// A part through a byte source: its header is parsed from a prefix that doubles while the parser
// says the bytes ran out (as tblob_model_open_source reads a GGUF file), the rows of a failed
// attempt dropped before the next.
Status read_source_part(tblob_model *m, uint32_t i, const Limits &limits, const Diag &diag) {
  uint64_t want = m->files[i].source.len > 0 ? m->files[i].source.len : 64 * 1024;
  for (;;) {
    Source &src = m->files[i].source;
    uint64_t total = source_total(src);
    uint64_t cap = limits.max_header_bytes;
    if (total != TBLOB_SOURCE_SIZE_UNKNOWN && total < cap) cap = total;
    if (want > cap) want = cap;
    if (src.len < want) {
      const Status g = source_grow_prefix(&src, want, m->alloc, "the GGUF header", diag, true);
      if (g != TBLOB_OK) return g;
    }
    const size_t rows = m->tensors.size(), meta = m->metadata.size();
    tblob_diag local = TBLOB_DIAG_INIT;
    Diag ld;
    ld.out = &local;
    Status s = read_file(m, i, limits, ld);
    total = source_total(src);
    if (total != TBLOB_SOURCE_SIZE_UNKNOWN && total < cap) cap = total;
    if (s == TBLOB_OK) {
      if (total != TBLOB_SOURCE_SIZE_UNKNOWN) return TBLOB_OK;
      // Size unknown: the last tensor's last byte must exist.
      FileDesc &f = m->files[i];
      uint64_t end = 0;
      for (size_t r = f.tensor_begin; r < f.tensor_end; ++r) {
        const TensorDesc &t = m->tensors[r];
        if (t.end > t.begin && t.file_offset + (t.end - t.begin) > end) end = t.file_offset + (t.end - t.begin);
      }
      uint8_t last;
      if (end > src.len && (s = source_read(src, end - 1, &last, 1, "the last tensor's last byte", diag)) != TBLOB_OK)
        return s;
      if (end >= f.data_offset) f.data_bytes = end - f.data_offset;
      return TBLOB_OK;
    }
    const bool more = src.len < cap && (total == TBLOB_SOURCE_SIZE_UNKNOWN || src.len < total);
    if (!short_of_bytes(s) || !more) {
      if (short_of_bytes(s) && src.len >= limits.max_header_bytes && (total == TBLOB_SOURCE_SIZE_UNKNOWN || total > src.len))
        return diag.fail(TBLOB_E_LIMIT_HEADER_BYTES, src.len, -1, "%s: the GGUF header goes on past max_header_bytes (%llu)",
                         m->files[i].path, static_cast<ull>(limits.max_header_bytes));
      return diag.fail(s, local.offset, local.tensor_index, "%s: %s", m->files[i].path, local.message);
    }
    m->tensors.resize(rows);
    m->metadata.resize(meta);
    want = static_cast<uint64_t>(src.len) * 2;
  }
}

// A lone file or source holding split.count > 1 would be a silently partial model.
Status refuse_lone_part(const tblob_model *m, const char *name, const Diag &diag) {
  int64_t count = 0;
  bool bad = false;
  if (int_key(m, *ext_of(m), "split.count", &count, &bad) && !bad && count > 1)
    return diag.fail(TBLOB_E_GGUF_SPLIT, TBLOB_NO_OFFSET, -1,
                     "%s holds split.count %lld but is not named NAME-0000k-of-%05lld.gguf: the other parts cannot be "
                     "found",
                     name, static_cast<long long>(count), static_cast<long long>(count));
  return TBLOB_OK;
}

}  // namespace

Status open_file(tblob_model *m, const Limits &limits, const Diag &diag) {
  const char *path = m->files[0].path;
  size_t prefix = 0;
  uint32_t k = 0, n = 0;
  if (split_name(path, m->files[0].path_len, &prefix, &k, &n) && n > 1)
    return open_set(m, path, prefix, k, n, limits, diag);
  const Status st = open_detected(m, limits, diag);
  if (st != TBLOB_OK) return st;
  return refuse_lone_part(m, path, diag);
}

Status open_source_set(tblob_model **mp, const Limits &limits, const Diag &diag) {
  tblob_model *old = *mp;
  const char *name = old->files[0].path ? old->files[0].path : "";
  const size_t len = old->files[0].path ? old->files[0].path_len : 0;
  size_t prefix = 0;
  uint32_t k = 0, n = 0;
  if (!split_name(name, len, &prefix, &k, &n) || n < 2) return refuse_lone_part(old, name, diag);
  if (n > limits.max_files)
    return diag.fail(TBLOB_E_LIMIT_FILES, TBLOB_NO_OFFSET, -1, "%s: a split set of %u files (max_files %u)", name, n,
                     limits.max_files);
  tblob_model *m = model_new(limits.allocator);
  if (!m) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  if (!m->files.resize(n)) {
    model_free(m);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  for (uint32_t i = 0; i < n; ++i) m->files[i] = FileDesc{};
  // The part opened moves into the set's model (which then owns every source) at its place.
  const size_t size = prefix + kTailLen + 24;
  char *stem = static_cast<char *>(m->arena.alloc(size));
  if (stem) std::memcpy(stem, name, prefix);
  m->files[k - 1].source = old->files[0].source;
  old->files[0].source = Source{};
  model_free(old);
  *mp = m;
  if (!stem) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  size_t base = prefix;
  while (base > 0 && stem[base - 1] != '/') --base;  // siblings are named relative to the directory
  for (uint32_t i = 0; i < n; ++i) {
    char *p = static_cast<char *>(m->arena.alloc(size));
    if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    std::memcpy(p, stem, prefix);
    std::snprintf(p + prefix, size - prefix, "-%05u-of-%05u.gguf", i + 1, n);
    m->files[i].path = p;
    m->files[i].path_len = std::strlen(p);
    if (i + 1 == k) continue;
    tblob_diag local = TBLOB_DIAG_INIT;
    Diag ld;
    ld.out = &local;
    const Status st = source_open_sibling(m->files[k - 1].source, p + base, m->files[i].path_len - base, m->alloc,
                                          &m->files[i].source, ld);
    if (st == TBLOB_E_NOT_FOUND)
      return diag.fail(TBLOB_E_GGUF_SPLIT_MISSING, TBLOB_NO_OFFSET, -1,
                       "split set of %s: part %u of %u, %s, is missing (open_sibling: %s)", m->files[k - 1].path, i + 1,
                       n, p + base, local.message);
    if (st != TBLOB_OK) return diag.fail(st, local.offset, local.tensor_index, "%s", local.message);
  }
  return read_set(m, m->files[k - 1].path, n, &read_source_part, limits, diag);
}

}  // namespace gguf
}  // namespace tblob
