// GGUF as one table of operations (table/format_ops.h): told by its magic, rows decoded
// through the GGML kernel table (gguf_dequant.cpp), the typed metadata of gguf_metadata.cpp.
#include "formats/gguf/gguf.h"

#include "table/format_ops.h"
#include "table/model.h"

namespace tblob {
namespace gguf {
namespace {

uint64_t meta_count(const tblob_model *m) {
  const GgufExt *e = ext_of(m);
  return e ? typed_count(*e) : m->metadata.size();
}

bool meta_at(const tblob_model *m, uint64_t index, TypedMeta *out) {
  const GgufExt *e = ext_of(m);
  MetaKv kv;
  if (!e || !typed_kv(m, *e, index, &kv)) return false;
  out->value_type = kv.type;
  out->key = kv.key;
  out->key_len = kv.key_len;
  out->data = kv.data;
  out->data_bytes = kv.bytes;
  out->count = 1;
  out->is_array = kv.type == kArray;
  if (out->is_array) {
    out->element_type = kv.element_type;
    out->count = kv.count;
    return true;
  }
  out->meta_row = kv.meta_row;
  scalar_value(kv, &out->uint_value, &out->int_value, &out->float_value);
  return true;
}

uint64_t meta_find(const tblob_model *m, const char *key, size_t key_len) {
  const GgufExt *e = ext_of(m);
  return e ? typed_find(m, *e, key, key_len) : UINT64_MAX;
}

// The array at typed index `index` (the callers checked it is one), decoded into *kv.
const MetaKv &array_at(const tblob_model *m, uint64_t index, MetaKv *kv) {
  typed_kv(m, *ext_of(m), index, kv);
  return *kv;
}

Status meta_array_get(const tblob_model *m, uint64_t index, uint64_t first, uint64_t count, void *buf, size_t cap,
                      const Diag &diag) {
  MetaKv kv;
  return array_get(array_at(m, index, &kv), first, count, buf, cap, diag);
}

Status meta_array_strings(const tblob_model *m, uint64_t index, uint64_t first, uint64_t count, bool resume,
                          uint64_t *element, uint64_t *position, tblob_metadata_string_fn fn, void *user,
                          const Diag &diag) {
  MetaKv kv;
  return array_strings(array_at(m, index, &kv), first, count, resume, element, position, fn, user, diag);
}

uint64_t meta_cursor_check(const tblob_model *m, uint64_t index, uint64_t element, uint64_t position) {
  MetaKv kv;
  return cursor_check(array_at(m, index, &kv), index, element, position);
}

ProbeResult probe(const uint8_t *head, size_t len, uint64_t, bool) {
  return looks_like(head, len) ? kProbeYes : kProbeNo;
}

Status open(const OpenRequest &r, tblob_model **out) {
  if (r.input == kInputSource) return open_source_prefix(r.m, r.limits, out, r.diag);
  // By path a part of a split set opens the whole set (gguf_split.cpp).
  const Status s = r.input == kInputPath ? open_file(r.m, r.limits, r.diag) : open_detected(r.m, r.limits, r.diag);
  if (s != TBLOB_OK) {
    model_free(r.m);
    return s;
  }
  *out = r.m;
  return TBLOB_OK;
}

constexpr FormatOps make() {
  FormatOps o;
  o.name = "gguf";
  o.format = TBLOB_FORMAT_GGUF;
  o.inputs = kInputPath | kInputMemory | kInputSource;
  o.probe = &probe;
  o.open = &open;
  o.output_bytes = &dequant_bytes;
  o.decode = &dequantize;
  o.meta_count = &meta_count;
  o.meta_at = &meta_at;
  o.meta_find = &meta_find;
  o.meta_array_get = &meta_array_get;
  o.meta_array_strings = &meta_array_strings;
  o.meta_cursor_check = &meta_cursor_check;
  return o;
}

}  // namespace

const FormatOps kFormat = make();

}  // namespace gguf
}  // namespace tblob
