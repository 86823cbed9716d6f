// The extern "C" GGML block entry points: raw ggml blocks to f32/f16/bf16 with the active
// kernel set. Part of every build (the kernels live in lib/dequant/ggml), whether or not the
// UQFF reader that uses them is.
#include "capi/capi_common.h"
#include "dequant/ggml/ggml.h"

using tblob::Diag;
using tblob::capi::bad_arg;
using tblob::capi::begin;

extern "C" {

TBLOB_API tblob_status tblob_ggml_dequantize(uint32_t ggml_type, const void *src, size_t src_bytes,
                                             uint64_t elements, uint32_t out_dtype, void *dst,
                                             size_t dst_bytes, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!src && src_bytes) return bad_arg(d, "src is NULL");
  return tblob::ggml::dequantize(tblob::ggml::active_kernels(), ggml_type, static_cast<const uint8_t *>(src),
                                 src_bytes, elements, out_dtype, dst, dst_bytes, d);
}

TBLOB_API const char *tblob_ggml_kernel_name(void) noexcept { return tblob::ggml::active_kernels().name; }

}  // extern "C"
