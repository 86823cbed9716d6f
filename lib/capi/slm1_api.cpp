// The extern "C" SLM1 API: argument checks and status mapping only.
#include <cstddef>
#include <cstring>

#include "capi/capi_common.h"
#include "core/checked.h"
#include "core/limits.h"
#include "table/model.h"
#include "formats/slm1/config_json.h"
#include "formats/slm1/dequant.h"
#include "formats/slm1/format.h"
#include "formats/slm1/slm1.h"
#include "formats/slm1/state.h"
#include "formats/slm1/writer.h"
#include "hash/fnv1a.h"

using tblob::Diag;
using tblob::Status;
using tblob::capi::bad_arg;
using tblob::capi::begin;

namespace {

// Reads the caller's SLM1 open options (fields covered by struct_size).
bool resolve_names(const tblob_slm1_open_options *o, tblob::slm1::NameList *out) {
  *out = tblob::slm1::NameList{};
  if (!o) return true;
  if (!TBLOB_COVERS(o, required_name_count)) return false;
  if (o->reserved != 0) return false;
  out->names = o->required_names;
  out->lens = o->required_name_lens;
  out->count = o->required_name_count;
  return true;
}

}  // namespace

extern "C" {

TBLOB_API tblob_status tblob_slm1_open_path(const char *path, const tblob_open_options *options,
                                            const tblob_slm1_open_options *slm1_options,
                                            tblob_model **out, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (out) *out = nullptr;
  if (!path || !out) return bad_arg(d, "path and out are required");
  tblob::Limits limits;
  if (!tblob::resolve_limits(options, &limits)) return bad_arg(d, "options: struct_size or mode");
  tblob::slm1::NameList names;
  if (!resolve_names(slm1_options, &names)) return bad_arg(d, "slm1_options: struct_size or reserved");
  return tblob::model_build(limits.allocator, out, d, [&](tblob_model *m) {
    const Status s = tblob::model_add_file(m, path, limits.mode, d);
    return s == TBLOB_OK ? tblob::slm1_open_model(m, limits, &names, d) : s;
  });
}

TBLOB_API tblob_status tblob_slm1_open_memory(const void *buf, size_t len,
                                              const tblob_open_options *options,
                                              const tblob_slm1_open_options *slm1_options,
                                              tblob_model **out, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (out) *out = nullptr;
  if (!out || (!buf && len)) return bad_arg(d, "buf (when len > 0) and out are required");
  tblob::Limits limits;
  if (!tblob::resolve_limits(options, &limits)) return bad_arg(d, "options: struct_size or mode");
  tblob::slm1::NameList names;
  if (!resolve_names(slm1_options, &names)) return bad_arg(d, "slm1_options: struct_size or reserved");
  return tblob::model_build(limits.allocator, out, d, [&](tblob_model *m) {
    const Status s = tblob::model_add_buffer(m, buf, len, d);
    return s == TBLOB_OK ? tblob::slm1_open_model(m, limits, &names, d) : s;
  });
}

TBLOB_API tblob_status tblob_slm1_header(const tblob_model *model, tblob_slm1_header_info *info,
                                         tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  const tblob::slm1::State *st = tblob::slm1::state_of(model);
  if (!st || !info) return bad_arg(d, "an SLM1 model and info are required");
  if (!TBLOB_COVERS(info, tokenizer))
    return bad_arg(d, "info->struct_size too small (use TBLOB_SLM1_HEADER_INFO_INIT)");
  const tblob::slm1::Header &h = st->header;
  info->version = h.version;
  info->header_length = h.header_length;
  info->model_type = h.model_type;
  info->flags = h.flags;
  info->vocab_size = h.vocab_size;
  info->special_token_count = h.special_token_count;
  info->hidden_size = h.hidden_size;
  info->layer_count = h.layer_count;
  info->head_count = h.head_count;
  info->kv_head_count = h.kv_head_count;
  info->head_dim = h.head_dim;
  info->ffn_size = h.ffn_size;
  info->max_context = h.max_context;
  info->rope_theta = h.rope_theta;
  info->rms_norm_epsilon = h.rms_norm_epsilon;
  info->tokenizer_kind = st->tokenizer_kind;
  info->tensor_count = h.tensor_count;
  info->tokenizer_offset = h.tokenizer_offset;
  info->tokenizer_length = h.tokenizer_length;
  info->tensor_directory_offset = h.directory_offset;
  info->tensor_data_offset = h.data_offset;
  info->checksum = h.checksum;
  info->checksum_verified = st->checksum_verified ? 1u : 0u;
  info->directory_sorted = st->sorted ? 1u : 0u;
  info->tokenizer = st->file + h.tokenizer_offset;
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_slm1_tensor_at(const tblob_model *model, uint64_t index,
                                            tblob_slm1_tensor_info *info, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  const tblob::slm1::State *st = tblob::slm1::state_of(model);
  if (!st || !info) return bad_arg(d, "an SLM1 model and info are required");
  if (!TBLOB_COVERS(info, reserved))
    return bad_arg(d, "info->struct_size too small (use TBLOB_SLM1_TENSOR_INFO_INIT)");
  if (index >= st->count)
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%u tensors)",
                  static_cast<unsigned long long>(index), st->count);
  const tblob::slm1::Entry &e = st->entries[index];
  const bool quant = e.dtype != tblob::slm1::kDtypeF32;
  info->dtype = e.dtype;
  info->name_hash = e.hash;
  info->rank = e.rank;
  info->block_size = e.block_size;
  for (int k = 0; k < 4; ++k) info->dims[k] = e.dims[k];
  info->rows = e.rows;
  info->cols = e.cols;
  info->byte_offset = e.byte_offset;
  info->byte_length = e.byte_length;
  info->scale_offset = e.scale_offset;
  info->scale_length = e.scale_bytes;
  // NULL for bytes a byte source has not read (as tblob_tensor_quant_desc does).
  info->payload = tblob::range_inside(e.byte_offset, e.byte_length, st->in_memory) ? st->file + e.byte_offset : nullptr;
  info->scales = quant && tblob::range_inside(e.scale_offset, e.scale_bytes, st->in_memory) ? st->file + e.scale_offset
                                                                                               : nullptr;
  info->entry_offset = st->header.directory_offset + index * tblob::slm1::kEntryBytes;
  info->name_listed = st->entry_listed[index] ? 1u : 0u;
  info->reserved = 0;
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_slm1_find_hash(const tblob_model *model, uint64_t name_hash,
                                            uint64_t *index, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  const tblob::slm1::State *st = tblob::slm1::state_of(model);
  if (!st || !index) return bad_arg(d, "an SLM1 model and index are required");
  if (!tblob::slm1::find_hash(*st, name_hash, index))
    return d.fail(TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1, "no entry with name_hash %016llx",
                  static_cast<unsigned long long>(name_hash));
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_slm1_writer_options_from_config(tblob_slm1_writer_options *options,
                                                             const char *json, size_t json_len,
                                                             tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!options || (!json && json_len)) return bad_arg(d, "options and json are required");
  // Every field the config sets lies before the end of rms_norm_epsilon; only the part of
  // the caller's struct that struct_size covers is read or written.
  if (!TBLOB_COVERS(options, rms_norm_epsilon))
    return bad_arg(d, "options->struct_size too small (use TBLOB_SLM1_WRITER_OPTIONS_INIT)");
  tblob_slm1_writer_options full = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  const size_t n = options->struct_size < sizeof(full) ? options->struct_size : sizeof(full);
  std::memcpy(static_cast<void *>(&full), options, n);
  const Status s = tblob::slm1::options_from_config(&full, json ? json : "", json ? json_len : 0, d);
  if (s == TBLOB_OK) std::memcpy(static_cast<void *>(options), &full, n);
  return s;
}

TBLOB_API tblob_status tblob_slm1_writer_new(const tblob_slm1_writer_options *options,
                                                tblob_slm1_writer **out, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::slm1::writer_create(options, out, d);
}

TBLOB_API void tblob_slm1_writer_free(tblob_slm1_writer *writer) noexcept {
  tblob::slm1::writer_free(writer);
}

TBLOB_API tblob_status tblob_slm1_writer_add_f32(tblob_slm1_writer *writer, const char *name,
                                                 size_t name_len, const uint64_t *shape,
                                                 uint32_t rank, const float *values,
                                                 uint64_t value_count, uint32_t dtype,
                                                 uint32_t block_size, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::slm1::writer_add_f32(writer, name, name_len, shape, rank, values, value_count,
                                     dtype, block_size, d);
}

TBLOB_API tblob_status tblob_slm1_writer_add_encoded(
    tblob_slm1_writer *writer, const char *name, size_t name_len, const uint64_t *shape,
    uint32_t rank, uint32_t dtype, uint32_t block_size, const void *payload,
    size_t payload_length, const void *scales, size_t scale_length, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::slm1::writer_add_encoded(writer, name, name_len, shape, rank, dtype, block_size,
                                         payload, payload_length, scales, scale_length, d);
}

TBLOB_API tblob_status tblob_slm1_writer_finish(tblob_slm1_writer *writer, const char *path,
                                                tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::slm1::writer_finish_path(writer, path, d);
}

}  // extern "C"
