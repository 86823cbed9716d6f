// SLM1 open: validation in the order of docs/slm1.md section 11, then the tensor table.
#include <charconv>
#include <cstdio>
#include <cstring>
#include <new>

#include "core/checked.h"
#include "formats/slm1/checksum.h"
#include "formats/slm1/dequant.h"
#include "formats/slm1/format.h"
#include "formats/slm1/layout.h"
#include "formats/slm1/scales.h"
#include "formats/slm1/slm1.h"
#include "formats/slm1/state.h"
#include "formats/slm1/tokenizer.h"

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
    MetaDesc d{key, std::strlen(key), v, n};
    return v && m->metadata.push(d);
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
  st->file = m->files[0].source.data;
  st->file_len = m->files[0].source.len;
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
  if (s == TBLOB_OK) s = slm1::check_data_region(file, len, h, st->entries, st->count, m->alloc, diag);
  if (s == TBLOB_OK && !(limits.flags & TBLOB_OPEN_FLAG_SLM1_NO_SCALE_CHECK))
    s = slm1::check_scales(file, h, st->entries, st->count, diag);
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
  m->find_fn = &slm1::find_name;
  m->dequant_hooks = &kSlm1DequantHooks;
  return TBLOB_OK;
}

Status slm1_open_detected(tblob_model *m, const Limits &limits, const Diag &diag) {
  return slm1_open_model(m, limits, nullptr, diag);
}

}  // namespace tblob
