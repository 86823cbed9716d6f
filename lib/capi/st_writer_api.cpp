// The extern "C" safetensors header writer (experimental): the Ollama import's writer with an
// optional __metadata__ object, for tools that stream tensor data into files themselves.
#include <cstring>

#include "capi/capi_common.h"
#include "core/allocator.h"
#include "core/dtype.h"
#include "formats/safetensors/st_writer.h"

extern "C" {

TBLOB_API tblob_status tblob_st_header_write(const tblob_st_tensor_spec *tensors, size_t count,
                                             const char *const *meta_keys, const char *const *meta_values,
                                             size_t meta_count, void *buf, size_t buf_capacity, size_t *out_len,
                                             tblob_diag *diag) noexcept {
  using namespace tblob;
  TBLOB_CAPI_BEGIN(d, diag);
  if (!out_len) return capi::bad_arg(d, "out_len is NULL");
  *out_len = 0;
  if (count && !tensors) return capi::bad_arg(d, "tensors is NULL");
  if (meta_count && (!meta_keys || !meta_values)) return capi::bad_arg(d, "metadata arrays are NULL");
  for (size_t k = 0; k < meta_count; ++k)
    if (!meta_keys[k] || !meta_values[k]) return capi::bad_arg(d, "a metadata key or value is NULL");
  if (!buf && buf_capacity) return capi::bad_arg(d, "buf is NULL");
  const Allocator libc;
  PodVec<HeaderTensor> ts(&libc);
  if (!ts.reserve(count)) return d.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory");
  for (size_t i = 0; i < count; ++i) {
    const tblob_st_tensor_spec &t = tensors[i];
    if ((!t.name && t.name_len) || (!t.shape && t.rank)) return capi::bad_arg(d, "a tensor's name or shape is NULL");
    if (!dtype_info(t.dtype))
      return d.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, static_cast<int64_t>(i),
                    "invalid argument: tensor %zu has no safetensors dtype (%u)", i, t.dtype);
    ts.push(HeaderTensor{t.name ? t.name : "", t.name_len, t.dtype, t.shape, t.rank, t.data_bytes});
  }
  ByteBuf out(&libc);
  if (!go_writer_header(ts.data(), count, &out, meta_keys, meta_values, meta_count))
    return d.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                  "invalid argument: data offsets pass 2^64 or out of memory");
  *out_len = out.size();
  if (buf_capacity < out.size())
    return d.fail(TBLOB_E_BUFFER_TOO_SMALL, TBLOB_NO_OFFSET, -1, "the header needs %zu bytes", out.size());
  std::memcpy(buf, out.data(), out.size());
  return TBLOB_OK;
}

}  // extern "C"
