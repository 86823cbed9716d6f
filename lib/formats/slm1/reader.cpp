#include "formats/slm1/slm1.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "core/allocator.h"
#include "core/checked.h"
#include "dequant/dequant.h"
#include "formats/slm1/dequant.h"
#include "formats/slm1/format.h"
#include "formats/slm1/state.h"
#include "formats/slm1/tokenizer.h"
#include "hash/fnv1a.h"
#include "io/source.h"

// ---- open -------------------------------------------------------------------------------------
// SLM1 open: validation in the order of docs/slm1.md section 11, then the tensor table.
namespace tblob {

namespace {

using ull = unsigned long long;
using slm1::Entry;
using slm1::State;

Status oom(const Diag &diag) {
  return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory building the SLM1 table");
}

Status read_entries(State *st, const Limits &limits, Arena *arena, const Diag &diag) {
  const slm1::Header &h = st->header;
  Entry *entries = static_cast<Entry *>(arena->alloc(sizeof(Entry) * (size_t{h.tensor_count} + 1)));
  if (!entries) return oom(diag);
  for (uint32_t i = 0; i < h.tensor_count; ++i) {
    const uint64_t at = h.directory_offset + uint64_t{i} * slm1::kEntryBytes;
    Entry &e = entries[i];
    slm1::decode_entry(st->file + at, &e);
    slm1::EntryProblem p;
    if (!slm1::check_entry_shape(&e, limits.max_rank, &p))
      return diag.fail(p.status, at + p.field, i, "tensor %u (hash %016llx, entry at byte %llu): %s", i,
                       static_cast<ull>(e.hash), static_cast<ull>(at), p.why);
    if (e.byte_length != e.payload_bytes)
      return diag.fail(TBLOB_E_TENSOR_SIZE, at + slm1::kEntByteLength, i,
                       "tensor %u (hash %016llx, entry at byte %llu): byte_length %llu; %s %u-D "
                       "shape of %llu elements needs exactly %llu",
                       i, static_cast<ull>(e.hash), static_cast<ull>(at), static_cast<ull>(e.byte_length),
                       slm1::dtype_name(e.dtype), e.rank, static_cast<ull>(e.elements),
                       static_cast<ull>(e.payload_bytes));
  }
  st->entries = entries;
  st->count = h.tensor_count;
  return TBLOB_OK;
}

// The header fields as metadata: key -> decimal (floats: shortest round-trip form).
Status add_metadata(tblob_model *m, const State &st, const Diag &diag) {
  const slm1::Header &h = st.header;
  struct U32Field {
    const char *key;
    uint32_t value;
  };
  const U32Field fields[] = {
      {"version", h.version},
      {"header_length", h.header_length},
      {"model_type", h.model_type},
      {"flags", h.flags},
      {"vocab_size", h.vocab_size},
      {"special_token_count", h.special_token_count},
      {"hidden_size", h.hidden_size},
      {"layer_count", h.layer_count},
      {"head_count", h.head_count},
      {"kv_head_count", h.kv_head_count},
      {"head_dim", h.head_dim},
      {"ffn_size", h.ffn_size},
      {"max_context", h.max_context},
  };
  auto push = [&](const char *key, const char *text, size_t n) {
    char *v = m->arena.copy(text, n);
    return v && meta_len_ok(std::strlen(key), n) && m->metadata.push(meta_desc(key, std::strlen(key), v, n));
  };
  char buf[48];
  for (const U32Field &f : fields) {
    const int n = std::snprintf(buf, sizeof(buf), "%u", f.value);
    if (!push(f.key, buf, static_cast<size_t>(n))) return oom(diag);
  }
  const float floats[2] = {h.rope_theta, h.rms_norm_epsilon};
  const char *float_keys[2] = {"rope_theta", "rms_norm_epsilon"};
  for (int k = 0; k < 2; ++k) {
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), floats[k]);
    if (!push(float_keys[k], buf, static_cast<size_t>(r.ptr - buf))) return oom(diag);
  }
  const char *tok = st.tokenizer_kind == slm1::kTokenizerBtok ? "BTOK" : "BPE1";
  if (!push("tokenizer", tok, 4)) return oom(diag);
  int n = std::snprintf(buf, sizeof(buf), "%016llx", static_cast<ull>(h.checksum));
  if (!push("checksum", buf, static_cast<size_t>(n))) return oom(diag);
  const char *verified = st.checksum_verified ? "true" : "false";
  if (!push("checksum_verified", verified, std::strlen(verified))) return oom(diag);
  return m->index_metadata_first_wins(diag);
}

// One row per directory entry, in directory order.
// Also records each entry's logical shape (q4_0 not halved) in st->logical_shapes, which the
// dequantization API reports.
Status fill_table(tblob_model *m, State *stp, const Diag &diag) {
  const State &st = *stp;
  const uint32_t n = st.count;
  if (!m->tensors.reserve(n ? n : 1)) return oom(diag);
  uint64_t *shapes = static_cast<uint64_t *>(m->arena.alloc(sizeof(uint64_t) * 4 * (size_t{n} + 1)));
  uint64_t *logical = static_cast<uint64_t *>(m->arena.alloc(sizeof(uint64_t) * 4 * (size_t{n} + 1)));
  char *labels = static_cast<char *>(m->arena.alloc(22 * (size_t{n} + 1)));
  if (!shapes || !logical || !labels) return oom(diag);
  stp->logical_shapes = logical;
  static const char kHex[] = "0123456789abcdef";
  for (uint32_t i = 0; i < n; ++i) {
    const Entry &e = st.entries[i];
    TensorDesc t;
    std::memset(&t, 0, sizeof(t));
    if (st.entry_listed[i]) {
      const slm1::Listed &l = st.listed[st.entry_listed[i] - 1];
      t.name = l.name;
      t.name_len = l.len;
    } else {
      char *p = labels + 22 * size_t{i};
      std::memcpy(p, "fnv1a:", 6);
      for (int k = 0; k < 16; ++k) p[6 + k] = kHex[(e.hash >> (60 - 4 * k)) & 0xf];
      t.name = p;
      t.name_len = 22;
    }
    uint64_t *dims = shapes + 4 * size_t{i};
    for (uint32_t k = 0; k < 4; ++k) logical[4 * size_t{i} + k] = k < e.rank ? e.dims[k] : 0;
    for (uint32_t k = 0; k < e.rank; ++k) dims[k] = e.dims[k];
    switch (e.dtype) {
      case slm1::kDtypeF32:
        t.dtype = TBLOB_DTYPE_F32;
        t.elements = e.elements;
        break;
      case slm1::kDtypeQ8_0:
        t.dtype = TBLOB_DTYPE_I8;
        t.elements = e.elements;
        break;
      default:  // q4_0: the stored bytes, two codes each; the last dim is even
        t.dtype = TBLOB_DTYPE_U8;
        dims[e.rank - 1] /= 2;
        t.elements = e.elements / 2;
        break;
    }
    t.shape = dims;
    t.rank = e.rank;
    t.file_index = 0;
    t.entry_status = TBLOB_OK;
    t.begin = e.byte_offset - st.header.data_offset;  // the region check put it at or after
    t.end = t.begin + e.byte_length;
    t.file_offset = e.byte_offset;
    t.order = i;
    t.key_offset = st.header.directory_offset + uint64_t{i} * slm1::kEntryBytes;
    m->tensors.push(t);  // reserved above
  }
  FileDesc &f = m->files[0];
  f.data_offset = st.header.data_offset;
  f.data_bytes = st.file_len - st.header.data_offset;
  f.tensor_begin = 0;
  f.tensor_end = n;
  f.metadata_begin = m->metadata.size();
  Status s = add_metadata(m, st, diag);
  m->files[0].metadata_end = m->metadata.size();
  return s;
}

// Step 8 for a byte source holding only [0, data_offset) in memory: each scale array is read
// on its own (4 bytes per block), the payloads are not.
Status check_scales_source(const Source &src, const slm1::Header &h, const Entry *e, uint32_t n, const Allocator &a,
                           const Diag &diag) {
  PodVec<uint8_t> buf(&a);
  for (uint32_t i = 0; i < n; ++i) {
    if (e[i].dtype == slm1::kDtypeF32 || e[i].scale_bytes == 0) continue;
    size_t len;
    if (!to_size(e[i].scale_bytes, &len) || !buf.resize(len)) return oom(diag);
    Status s = source_read(src, e[i].scale_offset, buf.data(), len, "an SLM1 scale array", diag);
    if (s != TBLOB_OK) return s;
    const uint64_t count = e[i].scale_bytes / 4;
    const uint64_t k = slm1::first_bad_scale(buf.data(), count);
    if (k != count) return slm1::scale_fail(h, e, i, k, load_le32(buf.data() + 4 * k), diag);
  }
  return TBLOB_OK;
}

}  // namespace

bool slm1_looks_like(const uint8_t *p, size_t n) {
  return n >= 4 && std::memcmp(p, slm1::kMagic, 4) == 0;
}

Status slm1_open_model(tblob_model *m, const Limits &limits, const slm1::NameList *names,
                       const Diag &diag) {
  m->format = TBLOB_FORMAT_SLM1;
  void *mem = m->arena.alloc(sizeof(State));
  if (!mem) return oom(diag);
  State *st = new (mem) State();
  const Source &src = m->files[0].source;
  st->file = src.data;
  st->file_len = src.len;
  st->in_memory = src.len;
  // A byte source may hold only the header, tokenizer and directory (open_source reads no more
  // when the checksum is skipped): the checks below then take the file's length from its
  // declared size and leave the data bytes unread, except the scale arrays.
  const bool partial = src.kind == Source::kCallback && source_total(src) != TBLOB_SOURCE_SIZE_UNKNOWN &&
                       source_total(src) > src.len;
  if (partial) st->file_len = source_total(src);
  if (partial && !(limits.flags & TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM))
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "SLM1: the checksum needs the whole file in memory");
  const uint8_t *file = st->file;
  const uint64_t len = st->file_len;
  // Steps 1-3: header.
  Status s = slm1::read_header(file, len, limits, &st->header, diag);
  if (s != TBLOB_OK) return s;
  const slm1::Header &h = st->header;
  // Step 4: tokenizer section.
  slm1::TokenizerInfo tk;
  s = slm1::check_tokenizer(file + h.tokenizer_offset, h.tokenizer_length, h.tokenizer_offset,
                            h.vocab_size, m->alloc, &tk, diag);
  if (s != TBLOB_OK) return s;
  st->tokenizer_kind = tk.kind;
  // Step 5: entries; step 6: duplicate hashes, then the caller's names.
  s = read_entries(st, limits, &m->arena, diag);
  if (s == TBLOB_OK) s = slm1::index_directory(st, &m->arena, diag);
  if (s == TBLOB_OK) s = slm1::attach_names(st, names ? *names : slm1::NameList{}, limits, &m->arena, m->alloc, diag);
  // Step 7: data region; step 8: scales; step 9: checksum.
  if (s == TBLOB_OK) s = slm1::check_data_region(file, len, h, st->entries, st->count, m->alloc, diag, !partial);
  if (s == TBLOB_OK && !(limits.flags & TBLOB_OPEN_FLAG_SLM1_NO_SCALE_CHECK))
    s = partial ? check_scales_source(src, h, st->entries, st->count, m->alloc, diag)
                : slm1::check_scales(file, h, st->entries, st->count, diag);
  if (s != TBLOB_OK) return s;
  if (!(limits.flags & TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM)) {
    if (h.checksum == 0)
      return diag.fail(TBLOB_E_SLM1_CHECKSUM, slm1::kOffChecksum, -1,
                       "stored checksum (byte 100) is 0, which is never valid");
    const uint64_t c = slm1::checksum(file, len);
    if (c != h.checksum)
      return diag.fail(TBLOB_E_SLM1_CHECKSUM, slm1::kOffChecksum, -1,
                       "stored checksum %016llx (byte 100) differs from the computed %016llx "
                       "(a file from another producer? TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM / --no-checksum "
                       "skips only this check)",
                       static_cast<ull>(h.checksum), static_cast<ull>(c));
    st->checksum_verified = true;
  }
  s = fill_table(m, st, diag);
  if (s != TBLOB_OK) return s;
  m->ext = st;
  m->ops = &slm1::kFormat;  // hashed lookup, rows described in place: slm1_format.cpp
  return TBLOB_OK;
}

Status slm1_open_detected(tblob_model *m, const Limits &limits, const Diag &diag) {
  return slm1_open_model(m, limits, nullptr, diag);
}

}  // namespace tblob

// ---- name lookup ------------------------------------------------------------------------------
namespace tblob {
namespace slm1 {

namespace {

using ull = unsigned long long;

uint64_t entry_at(const State &st, uint64_t i) { return st.header.directory_offset + i * kEntryBytes; }

Status collision(const State &st, uint64_t a, uint64_t b, const Diag &diag) {
  if (a > b) std::swap(a, b);
  return diag.fail(TBLOB_E_HASH_COLLISION, entry_at(st, b) + kEntHash, static_cast<int64_t>(b),
                   "tensors %llu and %llu (entries at bytes %llu and %llu) share name_hash %016llx",
                   static_cast<ull>(a), static_cast<ull>(b), static_cast<ull>(entry_at(st, a)),
                   static_cast<ull>(entry_at(st, b)), static_cast<ull>(st.entries[b].hash));
}

const Listed *find_listed(const State &st, uint64_t hash) {
  const Listed *end = st.listed + st.listed_count;
  const Listed *it = std::lower_bound(st.listed, end, hash,
                                      [](const Listed &l, uint64_t h) { return l.hash < h; });
  return it != end && it->hash == hash ? it : nullptr;
}

}  // namespace

Status index_directory(State *st, Arena *arena, const Diag &diag) {
  st->sorted = true;
  st->index = nullptr;
  for (uint32_t i = 1; i < st->count; ++i) {
    if (st->entries[i].hash == st->entries[i - 1].hash) return collision(*st, i - 1, i, diag);
    if (st->entries[i].hash < st->entries[i - 1].hash) st->sorted = false;
  }
  if (st->sorted) {
    // A dense copy of the hashes: the binary search then touches a few cache lines instead
    // of one per probe (entries are 64 bytes apart in the directory).
    uint64_t *h = static_cast<uint64_t *>(arena->alloc(sizeof(uint64_t) * (size_t{st->count} + 1)));
    if (!h) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory indexing the directory");
    for (uint32_t i = 0; i < st->count; ++i) h[i] = st->entries[i].hash;
    st->hashes = h;
    return TBLOB_OK;
  }
  // One allocation of count slots (the count is bounded by the directory bytes).
  HashSlot *slots = static_cast<HashSlot *>(arena->alloc(sizeof(HashSlot) * size_t{st->count}));
  if (!slots) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory indexing the directory");
  for (uint32_t i = 0; i < st->count; ++i) slots[i] = HashSlot{st->entries[i].hash, i};
  std::sort(slots, slots + st->count, [](const HashSlot &x, const HashSlot &y) {
    return x.hash != y.hash ? x.hash < y.hash : x.index < y.index;
  });
  for (uint32_t i = 1; i < st->count; ++i)
    if (slots[i].hash == slots[i - 1].hash) return collision(*st, slots[i - 1].index, slots[i].index, diag);
  st->index = slots;
  return TBLOB_OK;
}

Status attach_names(State *st, const NameList &list, const Limits &limits, Arena *arena,
                    const Allocator &a, const Diag &diag) {
  st->listed = nullptr;
  st->listed_count = 0;
  uint32_t *owner = static_cast<uint32_t *>(arena->alloc(sizeof(uint32_t) * (size_t{st->count} + 1)));
  if (!owner) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory attaching names");
  std::memset(owner, 0, sizeof(uint32_t) * (size_t{st->count} + 1));
  st->entry_listed = owner;
  if (list.count == 0) return TBLOB_OK;
  if (!list.names || !list.lens)
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "invalid argument: required_names and required_name_lens are needed for %zu names",
                     list.count);
  // Sorted by (hash, position); the names themselves stay the caller's until copied.
  PodVec<HashSlot> order(&a);
  if (!order.resize(list.count))
    return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory hashing required names");
  for (size_t k = 0; k < list.count; ++k) {
    if (!list.names[k] && list.lens[k])
      return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                       "invalid argument: required name %zu is NULL with length %zu", k, list.lens[k]);
    if (list.lens[k] > limits.max_name_bytes)
      return diag.fail(TBLOB_E_LIMIT_NAME_BYTES, TBLOB_NO_OFFSET, -1,
                       "required name %zu is %zu bytes, above the limit of %llu", k, list.lens[k],
                       static_cast<ull>(limits.max_name_bytes));
    order[k] = HashSlot{fnv1a64(list.names[k] ? list.names[k] : "", list.lens[k]), k};
  }
  std::sort(order.data(), order.data() + list.count, [](const HashSlot &x, const HashSlot &y) {
    return x.hash != y.hash ? x.hash < y.hash : x.index < y.index;
  });
  Listed *listed = static_cast<Listed *>(arena->alloc(sizeof(Listed) * list.count));
  if (!listed) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory copying required names");
  size_t n = 0;
  for (size_t k = 0; k < list.count; ++k) {
    const size_t pos = static_cast<size_t>(order[k].index);
    const char *name = list.names[pos] ? list.names[pos] : "";
    const size_t len = list.lens[pos];
    if (n > 0 && listed[n - 1].hash == order[k].hash) {
      const Listed &prev = listed[n - 1];
      if (prev.len == len && std::memcmp(prev.name, name, len) == 0) continue;  // listed twice
      const char *e1, *e2;
      const int s1 = clip_name(prev.len, &e1), s2 = clip_name(len, &e2);
      return diag.fail(TBLOB_E_HASH_COLLISION, TBLOB_NO_OFFSET, -1,
                       "required names \"%.*s%s\" and \"%.*s%s\" share FNV-1a 64 hash %016llx", s1,
                       prev.name, e1, s2, name, e2, static_cast<ull>(order[k].hash));
    }
    char *copy = arena->copy(name, len);
    if (!copy) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory copying required names");
    listed[n++] = Listed{order[k].hash, copy, len};
  }
  st->listed = listed;
  st->listed_count = n;
  for (size_t k = 0; k < n; ++k) {
    uint64_t i;
    if (find_hash(*st, listed[k].hash, &i)) owner[i] = static_cast<uint32_t>(k + 1);
  }
  return TBLOB_OK;
}

bool find_hash(const State &st, uint64_t hash, uint64_t *index) {
  if (st.sorted) {
    const uint64_t *end = st.hashes + st.count;
    const uint64_t *it = std::lower_bound(st.hashes, end, hash);
    if (it != end && *it == hash) {
      *index = static_cast<uint64_t>(it - st.hashes);
      return true;
    }
    return false;
  }
  const HashSlot *end = st.index + st.count;
  const HashSlot *it = std::lower_bound(st.index, end, hash,
                                        [](const HashSlot &s, uint64_t h) { return s.hash < h; });
  if (it != end && it->hash == hash) {
    *index = it->index;
    return true;
  }
  return false;
}

Status find_name(const tblob_model *m, const char *name, size_t len, uint64_t *index,
                 const Diag &diag) {
  const State *st = state_of(m);
  if (!st) return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: not an SLM1 model");
  const uint64_t h = fnv1a64(name, len);
  const char *ell;
  const int shown = clip_name(len, &ell);
  if (const Listed *l = find_listed(*st, h)) {
    if (l->len != len || std::memcmp(l->name, name, len) != 0) {
      const char *ell2;
      const int shown2 = clip_name(l->len, &ell2);
      return diag.fail(TBLOB_E_HASH_COLLISION, TBLOB_NO_OFFSET, -1,
                       "name \"%.*s%s\" has FNV-1a 64 hash %016llx, which belongs to the required "
                       "name \"%.*s%s\"; refused, a hash match is never taken as a guess",
                       shown, name, ell, static_cast<ull>(h), shown2, l->name, ell2);
    }
  }
  uint64_t i;
  if (!find_hash(*st, h, &i))
    return diag.fail(TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1,
                     "no tensor named \"%.*s%s\" (FNV-1a 64 hash %016llx)", shown, name, ell,
                     static_cast<ull>(h));
  *index = i;
  return TBLOB_OK;
}

}  // namespace slm1
}  // namespace tblob

// ---- dequantization views ---------------------------------------------------------------------
namespace tblob {

Status slm1_view(const tblob_model *m, uint64_t index, Slm1View *out) {
  const slm1::State *st = slm1::state_of(m);
  if (!st) return TBLOB_E_INVALID_ARGUMENT;
  if (index >= st->count) return TBLOB_E_RANGE;
  const slm1::Entry &e = st->entries[index];
  Slm1View v;
  v.dtype = e.dtype;
  v.rows = e.rows;
  v.cols = e.cols;
  v.block_size = e.dtype == slm1::kDtypeF32 ? 0 : e.block_size;
  // Bytes a byte source has not read are null (the dequantizer reads them).
  const bool payload_here = range_inside(e.byte_offset, e.byte_length, st->in_memory);
  const bool scales_here = range_inside(e.scale_offset, e.scale_bytes, st->in_memory);
  v.payload = payload_here ? st->file + e.byte_offset : nullptr;
  v.payload_bytes = e.byte_length;
  v.scales = e.dtype == slm1::kDtypeF32 || !scales_here ? nullptr : st->file + e.scale_offset;
  v.scale_offset = e.scale_offset;
  v.scale_bytes = e.scale_bytes;
  v.shape = st->logical_shapes ? st->logical_shapes + 4 * index : nullptr;
  v.rank = e.rank;
  *out = v;
  return TBLOB_OK;
}

Status slm1_quant_desc(const Slm1View &v, QuantDesc *out) {
  QuantDesc q;
  q.rows = v.rows;
  q.cols = v.cols;
  q.data = v.payload;
  q.data_bytes = v.payload_bytes;
  switch (v.dtype) {
    case slm1::kDtypeF32:
      q.scheme = QuantScheme::kF32;
      break;
    case slm1::kDtypeQ8_0:
    case slm1::kDtypeQ4_0:
      q.scheme = v.dtype == slm1::kDtypeQ8_0 ? QuantScheme::kSlm1Q8 : QuantScheme::kSlm1Q4;
      q.group_size = v.block_size;  // q8_0: cols (validate_desc checks it)
      q.scale_dtype = TBLOB_DTYPE_F32;
      q.scales = v.scales;
      q.scales_bytes = v.scale_bytes;
      break;
    default:
      return TBLOB_E_INVALID_ARGUMENT;
  }
  *out = q;
  return TBLOB_OK;
}

Status slm1_dequant_rows(const Slm1View &v, uint64_t row_begin, uint64_t row_end, float *dst,
                         size_t dst_count) {
  if (v.rows == 0 || v.cols == 0 || !v.payload) return TBLOB_E_INVALID_ARGUMENT;
  QuantDesc q;
  if (slm1_quant_desc(v, &q) != TBLOB_OK || validate_desc(q) != TBLOB_OK) return TBLOB_E_INVALID_ARGUMENT;
  const size_t dst_bytes = dst_count > SIZE_MAX / 4 ? SIZE_MAX : dst_count * 4;
  return dequantize_rows(q, TBLOB_DTYPE_F32, row_begin, row_end, dst, dst_bytes);
}

}  // namespace tblob
