// The extern "C" byte-source API: tblob_model_open_source and tblob_tensor_read.
#include <cstring>

#include "capi/capi_common.h"
#include "core/checked.h"
#include "core/limits.h"
#include "table/model.h"
#include "formats/open.h"

using tblob::Diag;
using tblob::Status;
using tblob::capi::bad_arg;

extern "C" {

TBLOB_API tblob_status tblob_model_open_source(const tblob_byte_source *source,
                                               const tblob_open_options *options, tblob_model **out,
                                               tblob_diag *diag) noexcept {
  if (out) *out = nullptr;
  // The source is ours from here: every early return closes it (once).
  const bool usable = source && source->struct_size >= sizeof(tblob_byte_source);
  auto refuse = [&](tblob_status s) {
    if (usable && source->close) source->close(source->user);
    return s;
  };
  if (tblob::capi::bad_diag(diag)) return refuse(TBLOB_E_INVALID_ARGUMENT);
  const Diag d = tblob::capi::begin(diag);
  if (!usable || !source->read || !out) {
    refuse(TBLOB_E_INVALID_ARGUMENT);
    return bad_arg(d, "source (struct_size from tblob_byte_source_init, a read function) and out are required");
  }
  if (source->flags != 0) {  // none defined yet: a later one must not be ignored silently
    refuse(TBLOB_E_INVALID_ARGUMENT);
    return bad_arg(d, "source->flags must be 0");
  }
  tblob::Limits limits;
  if (!tblob::resolve_limits(options, &limits)) {
    refuse(TBLOB_E_INVALID_ARGUMENT);
    return bad_arg(d, "options: struct_size or mode");
  }
  return tblob::open_source(source, limits, out, d);
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
  if (!tblob::checked_add(t.file_offset, offset, &at) || !tblob::range_inside(at, len, tblob::source_total(src)))
    return d.fail(TBLOB_E_RANGE, t.file_offset, static_cast<int64_t>(index), "tensor data outside its file");
  const tblob::Status s = tblob::source_copy(src, at, dst, len, "tensor data", d);
  if (s != TBLOB_OK) return s;
  return TBLOB_OK;
}

}  // extern "C"
