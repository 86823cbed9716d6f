// The extern "C" streaming GGUF writer (experimental): lib/formats/gguf/gguf_writer.cpp.
#include "capi/capi_common.h"
#include "formats/gguf/gguf_writer.h"

extern "C" {

TBLOB_API tblob_status tblob_gguf_writer_open(const char *path, const tblob_gguf_writer_options *options,
                                              tblob_gguf_writer **out, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!path) {
    if (out) *out = nullptr;
    return tblob::capi::bad_arg(d, "path is NULL");
  }
  return tblob::gguf::writer_open(path, nullptr, nullptr, options, out, d);
}

TBLOB_API tblob_status tblob_gguf_writer_open_callback(tblob_gguf_write_fn fn, void *user,
                                                       const tblob_gguf_writer_options *options,
                                                       tblob_gguf_writer **out, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!fn) {
    if (out) *out = nullptr;
    return tblob::capi::bad_arg(d, "fn is NULL");
  }
  return tblob::gguf::writer_open(nullptr, fn, user, options, out, d);
}

TBLOB_API tblob_status tblob_gguf_writer_add_value(tblob_gguf_writer *writer, const char *key, size_t key_len,
                                                   const tblob_gguf_value *value, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::gguf::writer_add_value(writer, key, key_len, value, d);
}

TBLOB_API tblob_status tblob_gguf_writer_add_tensor(tblob_gguf_writer *writer, const char *name, size_t name_len,
                                                    const uint64_t *shape, uint32_t rank, uint32_t ggml_type,
                                                    uint64_t *data_bytes, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::gguf::writer_add_tensor(writer, name, name_len, shape, rank, ggml_type, data_bytes, d);
}

TBLOB_API tblob_status tblob_gguf_writer_write(tblob_gguf_writer *writer, uint64_t tensor, const void *data,
                                               size_t length, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::gguf::writer_write(writer, tensor, data, length, d);
}

TBLOB_API tblob_status tblob_gguf_writer_finish(tblob_gguf_writer *writer, uint64_t *bytes_written,
                                                tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::gguf::writer_finish(writer, bytes_written, d);
}

TBLOB_API void tblob_gguf_writer_close(tblob_gguf_writer *writer) noexcept { tblob::gguf::writer_close(writer); }

}  // extern "C"
