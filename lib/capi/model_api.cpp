// The extern "C" model API: argument checks and status mapping only.
#include <cstddef>
#include <cstring>

#include "capi/capi_common.h"
#include "core/checked.h"
#include "core/dtype.h"
#include "core/format_name.h"
#include "core/limits.h"
#include "table/model.h"
#include "table/tensor_view.h"
#include "formats/open.h"

using tblob::Diag;
using tblob::Status;
using tblob::capi::bad_arg;

extern "C" {

TBLOB_API uint32_t tblob_version(void) noexcept { return TBLOB_VERSION_NUMBER; }

TBLOB_API const char *tblob_version_string(void) noexcept { return TBLOB_VERSION_STRING; }

TBLOB_API const char *tblob_dtype_name(uint32_t dtype) noexcept { return tblob::dtype_name(dtype); }

TBLOB_API uint32_t tblob_dtype_bits(uint32_t dtype) noexcept { return tblob::dtype_bits(dtype); }

TBLOB_API tblob_status tblob_dtype_from_name(const char *name, size_t name_len, uint32_t *out,
                                             tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!out || (!name && name_len)) return bad_arg(d, "out (and name when name_len > 0) are required");
  *out = tblob::dtype_from_name(name, name_len);
  if (*out != TBLOB_DTYPE_INVALID) return TBLOB_OK;
  const char *ell;
  const int shown = tblob::clip_name(name_len, &ell);
  return d.fail(TBLOB_E_DTYPE, TBLOB_NO_OFFSET, -1, "unknown dtype \"%.*s%s\"", shown,
                name ? name : "", ell);
}

TBLOB_API const char *tblob_format_name(uint32_t format) noexcept { return tblob::format_name(format); }

TBLOB_API tblob_status tblob_model_open(const char *path, const tblob_open_options *options,
                                       tblob_model **out, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (out) *out = nullptr;
  if (!path || !out) return bad_arg(d, "path and out are required");
  tblob::Limits limits;
  if (!tblob::resolve_limits(options, &limits)) return bad_arg(d, "options: struct_size or mode");
  return tblob::open_path(path, limits, out, d);
}

TBLOB_API tblob_status tblob_model_open_memory(const void *buf, size_t len,
                                         const tblob_open_options *options, tblob_model **out,
                                         tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (out) *out = nullptr;
  if (!out || (!buf && len)) return bad_arg(d, "buf (when len > 0) and out are required");
  tblob::Limits limits;
  if (!tblob::resolve_limits(options, &limits)) return bad_arg(d, "options: struct_size or mode");
  return tblob::open_memory(buf, len, limits, out, d);
}

TBLOB_API void tblob_model_close(tblob_model *model) noexcept { tblob::model_free(model); }

TBLOB_API uint32_t tblob_model_format(const tblob_model *model) noexcept {
  return model ? model->format : static_cast<uint32_t>(TBLOB_FORMAT_UNKNOWN);
}

TBLOB_API uint64_t tblob_model_tensor_count(const tblob_model *model) noexcept {
  return model ? model->tensors.size() : 0;
}

TBLOB_API uint32_t tblob_model_file_count(const tblob_model *model) noexcept {
  return model ? static_cast<uint32_t>(model->files.size()) : 0;
}

TBLOB_API tblob_status tblob_model_file_path(const tblob_model *model, uint32_t index,
                                             const char **path, size_t *path_len,
                                             tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !path) return bad_arg(d, "model and path are required");
  if (index >= model->files.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "file index %u out of range (%zu files)",
                  index, model->files.size());
  *path = model->files[index].path;
  if (path_len) *path_len = model->files[index].path_len;
  return TBLOB_OK;
}

namespace {

// The 0.1 fields every tblob_tensor_info has; the quant fields are appended.
constexpr size_t kTensorInfoMin = offsetof(tblob_tensor_info, element_count) + sizeof(uint64_t);

Status range_fail(const Diag &d, uint64_t index, size_t count) {
  return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%zu tensors)",
                static_cast<unsigned long long>(index), count);
}

// The fields appended to tblob_tensor_info: the logical (dequantized) view.
void tensor_info_quant_fields(const tblob_model *m, size_t index, tblob_tensor_info *info) {
  if (!m || !info || index >= m->tensors.size()) return;
  tblob::TensorLogical l;
  tblob::tensor_logical(m, index, &l);
  if (TBLOB_COVERS(info, logical_shape)) info->logical_shape = l.shape;
  if (TBLOB_COVERS(info, logical_elements)) info->logical_elements = l.elements;
  if (TBLOB_COVERS(info, logical_rank)) info->logical_rank = l.rank;
  if (TBLOB_COVERS(info, quant_scheme)) info->quant_scheme = l.scheme;
  if (TBLOB_COVERS(info, quant_flags))
    info->quant_flags = l.quantized ? TBLOB_TENSOR_QUANTIZED : l.companion ? TBLOB_TENSOR_COMPANION : 0u;
}

void fill_tensor_info(const tblob_model *model, size_t index, tblob_tensor_info *info) {
  const tblob::TensorDesc &t = model->tensors[index];
  info->dtype = t.dtype;
  info->name = t.name;
  info->name_len = t.name_len;
  info->shape = t.shape;
  info->rank = t.rank;
  info->file_index = t.file_index;
  info->data_offset = t.begin;
  info->data_length = t.end - t.begin;
  info->file_offset = t.file_offset;
  info->element_count = t.elements;
  tensor_info_quant_fields(model, index, info);  // appended fields
  if (TBLOB_COVERS(info, reserved)) info->reserved = 0;
}

}  // namespace

TBLOB_API tblob_status tblob_tensor_at(const tblob_model *model, uint64_t index,
                                       tblob_tensor_info *info, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !info) return bad_arg(d, "model and info are required");
  if (!TBLOB_COVERS(info, element_count))
    return bad_arg(d, "info->struct_size too small (use tblob_tensor_info_init)");
  if (index >= model->tensors.size()) return range_fail(d, index, model->tensors.size());
  fill_tensor_info(model, static_cast<size_t>(index), info);
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_tensors_at(const tblob_model *model, uint64_t first, uint64_t count,
                                        tblob_tensor_info *infos, size_t info_size,
                                        tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || (!infos && count)) return bad_arg(d, "model and infos are required");
  if (info_size < kTensorInfoMin || info_size > UINT32_MAX || info_size % alignof(tblob_tensor_info))
    return bad_arg(d, "info_size: at least the 0.1 tblob_tensor_info, a multiple of its alignment");
  const size_t n = model->tensors.size();
  if (first > n || count > n - first) return range_fail(d, first > n ? first : n, n);
  unsigned char *at = reinterpret_cast<unsigned char *>(infos);
  for (uint64_t i = 0; i < count; ++i, at += info_size) {
    tblob_tensor_info *info = reinterpret_cast<tblob_tensor_info *>(at);
    info->struct_size = static_cast<uint32_t>(info_size);
    fill_tensor_info(model, static_cast<size_t>(first + i), info);
  }
  return TBLOB_OK;
}

namespace {
// Out of line: a lookup that finds its tensor then keeps the few registers it needs.
__attribute__((noinline, cold)) tblob_status tensor_not_found(const Diag &d, const char *name, size_t name_len) {
  const char *ell;
  const int shown = tblob::clip_name(name_len, &ell);
  return d.fail(TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1, "no tensor named \"%.*s%s\"", shown, name, ell);
}
}  // namespace

TBLOB_API tblob_status tblob_tensor_find(const tblob_model *model, const char *name, size_t name_len,
                                  uint64_t *index, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !index || (!name && name_len)) return bad_arg(d, "model, name and index are required");
  if (!name) name = "";
  if (model->ops && model->ops->find) return model->ops->find(model, name, name_len, index, d);  // SLM1: hashes
  const size_t pos = model->tensor_index.find(name, name_len);
  if (pos == SIZE_MAX) return tensor_not_found(d, name, name_len);
  *index = pos;
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_tensor_data(const tblob_model *model, uint64_t index,
                                         const void **data, uint64_t *length,
                                         tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !data || !length) return bad_arg(d, "model, data and length are required");
  if (index >= model->tensors.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range",
                  static_cast<unsigned long long>(index));
  const tblob::TensorDesc &t = model->tensors[static_cast<size_t>(index)];
  const tblob::Source &src = model->files[t.file_index].source;
  if (src.kind == tblob::Source::kCallback)
    return d.fail(TBLOB_E_NOT_MAPPED, t.file_offset, static_cast<int64_t>(index),
                  "tensor %llu of source %s: no zero-copy view of a byte source (use tblob_tensor_read)",
                  static_cast<unsigned long long>(index), tblob::source_name(src));
  // Validated at open; re-checked so a corrupted handle can never read out of range.
  if (!tblob::range_inside(t.file_offset, t.end - t.begin, src.len))
    return d.fail(TBLOB_E_RANGE, t.file_offset, static_cast<int64_t>(index), "tensor data outside its file");
  *data = src.data ? src.data + t.file_offset : src.data;
  *length = t.end - t.begin;
  return TBLOB_OK;
}

TBLOB_API uint64_t tblob_metadata_count(const tblob_model *model) noexcept {
  // 0 also when the table could not be made (out of memory): _at and _find then say so.
  return model && model->metadata_ready() == TBLOB_OK ? model->metadata.size() : 0;
}

TBLOB_API tblob_status tblob_metadata_at(const tblob_model *model, uint64_t index,
                                         const char **key, size_t *key_len, const char **value,
                                         size_t *value_len, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !key || !key_len || !value || !value_len)
    return bad_arg(d, "model, key, key_len, value and value_len are required");
  if (model->metadata_ready() != TBLOB_OK) return d.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory making the metadata table");
  if (index >= model->metadata.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "metadata index %llu out of range (%zu entries)",
                  static_cast<unsigned long long>(index), model->metadata.size());
  const tblob::MetaDesc &m = model->metadata[static_cast<size_t>(index)];
  *key = m.name;
  *key_len = m.name_len;
  *value = m.value;
  *value_len = m.value_len;
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_metadata_find(const tblob_model *model, const char *key,
                                           size_t key_len, const char **value,
                                           size_t *value_len, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !value || !value_len || (!key && key_len))
    return bad_arg(d, "model, value and value_len (and key when key_len > 0) are required");
  if (model->metadata_ready() != TBLOB_OK) return d.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory making the metadata table");
  const size_t pos = model->metadata_index.find(key ? key : "", key_len);
  if (pos == SIZE_MAX) {
    const char *ell;
    const int shown = tblob::clip_name(key_len, &ell);
    return d.fail(TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1, "no metadata key \"%.*s%s\"", shown,
                  key ? key : "", ell);
  }
  *value = model->metadata[pos].value;
  *value_len = model->metadata[pos].value_len;
  return TBLOB_OK;
}

}  // extern "C"
