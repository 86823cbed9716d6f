// The extern "C" byte-source API: tblob_model_open_source and tblob_tensor_read.
#include <cstring>

#include "capi/capi_common.h"
#include "core/checked.h"
#include "core/limits.h"
#include "table/model.h"

using tblob::Diag;
using tblob::Status;
using tblob::capi::bad_arg;

extern "C" {

TBLOB_API tblob_status tblob_model_open_source(const tblob_byte_source *source,
                                               const tblob_open_options *options, tblob_model **out,
                                               tblob_diag *diag) noexcept {
  // Header-first stub: ownership rules already hold (close once, at once on failure).
  if (out) *out = nullptr;
  if (source && source->struct_size >= sizeof(tblob_byte_source) && source->close) source->close(source->user);
  TBLOB_CAPI_BEGIN(d, diag);
  (void)options;
  return d.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, -1, "byte sources: not implemented yet");
}

TBLOB_API tblob_status tblob_tensor_read(const tblob_model *model, uint64_t index, uint64_t offset, void *dst,
                                         size_t len, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || (!dst && len)) return bad_arg(d, "model (and dst when len > 0) are required");
  if (index >= model->tensors.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range",
                  static_cast<unsigned long long>(index));
  const tblob::TensorDesc &t = model->tensors[static_cast<size_t>(index)];
  const uint64_t length = t.end - t.begin;
  if (!tblob::range_inside(offset, len, length))
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, static_cast<int64_t>(index),
                  "bytes [%llu, +%zu) pass the tensor's %llu bytes", static_cast<unsigned long long>(offset), len,
                  static_cast<unsigned long long>(length));
  const tblob::Source &src = model->files[t.file_index].source;
  uint64_t at;
  if (!tblob::checked_add(t.file_offset, offset, &at) || !tblob::range_inside(at, len, src.len))
    return d.fail(TBLOB_E_RANGE, t.file_offset, static_cast<int64_t>(index), "tensor data outside its file");
  if (len) std::memcpy(dst, src.data + at, len);
  return TBLOB_OK;
}

}  // extern "C"
