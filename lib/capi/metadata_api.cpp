// The typed metadata API (tblob_metadata_typed_*, tblob_metadata_array_*): argument checks,
// then the format's typed metadata operations (table/format_ops.h) or, for a format without
// them, the string pairs of the metadata table.
#include <cstddef>
#include <cstring>

#include "capi/capi_common.h"
#include "table/format_ops.h"
#include "table/model.h"

using tblob::Status;
using tblob::capi::bad_arg;

namespace {

using ull = unsigned long long;

// The 0.2 struct is the smallest accepted: every field a caller can read is filled.
constexpr size_t kValueMin = offsetof(tblob_metadata_value, data_bytes) + sizeof(uint64_t);
constexpr size_t kCursorMin = offsetof(tblob_metadata_cursor, check) + sizeof(uint64_t);

const tblob::FormatOps *typed(const tblob_model *m) { return m->ops && m->ops->meta_count ? m->ops : nullptr; }

uint64_t typed_count(const tblob_model *m) {
  if (const tblob::FormatOps *o = typed(m)) return o->meta_count(m);
  return m->metadata_ready() == TBLOB_OK ? m->metadata.size() : 0;
}

void fill(const tblob_model *m, uint64_t index, tblob_metadata_value *v) {
  const uint32_t size = v->struct_size;
  std::memset(reinterpret_cast<char *>(v) + sizeof(uint32_t), 0, kValueMin - sizeof(uint32_t));
  v->struct_size = size;
  v->index = index;
  v->count = 1;
  tblob::TypedMeta kv;
  const tblob::FormatOps *o = typed(m);
  if (o && o->meta_at(m, index, &kv)) {
    v->value_type = kv.value_type;
    v->key = kv.key;
    v->key_len = kv.key_len;
    v->data = kv.data;
    v->data_bytes = kv.data_bytes;
    if (kv.is_array) {
      v->element_type = kv.element_type;
      v->count = kv.count;
      return;
    }
    if (kv.meta_row < m->metadata.size()) {  // always, for a string or scalar
      const tblob::MetaDesc &row = m->metadata[kv.meta_row];
      v->string = row.value;  // a string's bytes, or the scalar's text
      v->string_len = row.value_len;
    }
    v->uint_value = kv.uint_value;
    v->int_value = kv.int_value;
    v->float_value = kv.float_value;
    return;
  }
  const tblob::MetaDesc &row = m->metadata[static_cast<size_t>(index)];
  v->value_type = TBLOB_META_STRING;
  v->key = row.name;
  v->key_len = row.name_len;
  v->string = row.value;
  v->string_len = row.value_len;
  v->data = row.value;
  v->data_bytes = row.value_len;
}

Status not_an_array(const tblob::Diag &d, const tblob_model *m, uint64_t index) {
  const uint64_t n = typed_count(m);
  if (index >= n)
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "typed metadata index %llu out of range (%llu entries)",
                  static_cast<ull>(index), static_cast<ull>(n));
  return bad_arg(d, "the key/value at this index is not an array");
}

// The format's operations when typed index `index` is an array, else nullptr (then
// not_an_array says why).
const tblob::FormatOps *array_at(const tblob_model *m, uint64_t index) {
  const tblob::FormatOps *o = typed(m);
  tblob::TypedMeta kv;
  return o && o->meta_at(m, index, &kv) && kv.is_array ? o : nullptr;
}

}  // namespace

extern "C" {

TBLOB_API uint64_t tblob_metadata_typed_count(const tblob_model *model) noexcept {
  return model ? typed_count(model) : 0;
}

TBLOB_API tblob_status tblob_metadata_typed_at(const tblob_model *model, uint64_t index,
                                               tblob_metadata_value *value, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !value) return bad_arg(d, "model and value are required");
  if (value->struct_size < kValueMin) return bad_arg(d, "value->struct_size too small (use tblob_metadata_value_init)");
  if (model->metadata_ready() != TBLOB_OK)
    return d.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory making the metadata table");
  const uint64_t n = typed_count(model);
  if (index >= n)
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "typed metadata index %llu out of range (%llu entries)",
                  static_cast<ull>(index), static_cast<ull>(n));
  fill(model, index, value);
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_metadata_typed_find(const tblob_model *model, const char *key, size_t key_len,
                                                 tblob_metadata_value *value, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !value || (!key && key_len)) return bad_arg(d, "model and value (and key when key_len > 0) are required");
  if (value->struct_size < kValueMin) return bad_arg(d, "value->struct_size too small (use tblob_metadata_value_init)");
  if (model->metadata_ready() != TBLOB_OK)
    return d.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory making the metadata table");
  const char *k = key ? key : "";
  uint64_t index = UINT64_MAX;
  if (const tblob::FormatOps *o = typed(model)) {
    index = o->meta_find(model, k, key_len);
  } else {
    const size_t row = model->metadata_index.find(k, key_len);
    if (row != SIZE_MAX) index = row;
  }
  if (index == UINT64_MAX) {
    const char *ell;
    const int shown = tblob::clip_name(key_len, &ell);
    return d.fail(TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1, "no metadata key \"%.*s%s\"", shown, k, ell);
  }
  fill(model, index, value);
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_metadata_array_get(const tblob_model *model, uint64_t index, uint64_t first,
                                                uint64_t count, void *buf, size_t buf_capacity,
                                                tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || (!buf && buf_capacity)) return bad_arg(d, "model is required (and buf when buf_capacity > 0)");
  if (const tblob::FormatOps *o = array_at(model, index))
    return o->meta_array_get(model, index, first, count, buf, buf ? buf_capacity : 0, d);
  return not_an_array(d, model, index);
}

TBLOB_API tblob_status tblob_metadata_array_strings(const tblob_model *model, uint64_t index, uint64_t first,
                                                    uint64_t count, tblob_metadata_cursor *cursor,
                                                    tblob_metadata_string_fn fn, void *user,
                                                    tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !fn) return bad_arg(d, "model and fn are required");
  if (cursor && cursor->struct_size < kCursorMin) return bad_arg(d, "cursor->struct_size too small (use tblob_metadata_cursor_init)");
  if (const tblob::FormatOps *o = array_at(model, index)) {
    uint64_t element = 0, position = 0;
    bool resume = false;
    if (cursor && cursor->array == index &&
        cursor->check == o->meta_cursor_check(model, index, cursor->element, cursor->position)) {
      resume = true;
      element = cursor->element;
      position = cursor->position;
    }
    const Status s = o->meta_array_strings(model, index, first, count, resume, &element, &position, fn, user, d);
    if (cursor && (s == TBLOB_OK || s == TBLOB_E_CANCELLED)) {
      cursor->array = index;
      cursor->element = element;
      cursor->position = position;
      cursor->check = o->meta_cursor_check(model, index, element, position);
    }
    return s;
  }
  return not_an_array(d, model, index);
}

namespace {
struct One {
  const char *s = nullptr;
  size_t len = 0;
};
int take_one(void *user, uint64_t, const char *s, size_t len) {
  One *o = static_cast<One *>(user);
  o->s = s;
  o->len = len;
  return 0;
}
}  // namespace

TBLOB_API tblob_status tblob_metadata_array_string(const tblob_model *model, uint64_t index, uint64_t element,
                                                   tblob_metadata_cursor *cursor, const char **s, size_t *len,
                                                   tblob_diag *diag) noexcept {
  if (tblob::capi::bad_diag(diag)) return TBLOB_E_INVALID_ARGUMENT;
  if (!s || !len) {
    const tblob::Diag d = tblob::capi::begin(diag);
    return bad_arg(d, "s and len are required");
  }
  One one;
  const tblob_status st = tblob_metadata_array_strings(model, index, element, 1, cursor, take_one, &one, diag);
  if (st != TBLOB_OK) return st;
  *s = one.s;
  *len = one.len;
  return TBLOB_OK;
}

}  // extern "C"
