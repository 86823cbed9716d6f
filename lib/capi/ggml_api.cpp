// The extern "C" GGML block entry points: raw ggml blocks to f32/f16/bf16 with the active
// kernel set. Part of every build (the kernels live in lib/dequant/ggml), whether or not the
// UQFF reader that uses them is.
#include "capi/capi_common.h"
#include "dequant/ggml/ggml.h"
#include "quant/ggml/quant_ggml.h"

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

TBLOB_API tblob_status tblob_ggml_row_size(uint32_t ggml_type, uint64_t cols, uint64_t *bytes,
                                           tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!bytes) return bad_arg(d, "bytes is NULL");
  *bytes = 0;
  return tblob::ggml::row_size(ggml_type, cols, bytes, d);
}

TBLOB_API tblob_status tblob_ggml_quantize(uint32_t ggml_type, uint32_t src_dtype, const void *src,
                                           size_t src_bytes, uint64_t rows, uint64_t cols,
                                           const float *importance, void *dst, size_t dst_bytes,
                                           const tblob_quantize_options *options,
                                           tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  uint32_t threads = 0;
  if (options) {
    if (!TBLOB_COVERS(options, threads))
      return bad_arg(d, "options->struct_size too small (use TBLOB_QUANTIZE_OPTIONS_INIT)");
    threads = options->threads;
    if (TBLOB_COVERS(options, importance_count) && options->importance) {
      if (importance)
        return d.fail(TBLOB_E_QUANT_IMPORTANCE, TBLOB_NO_OFFSET, -1,
                      "importance given twice (the argument and options->importance)");
      if (options->importance_count != cols)
        return d.fail(TBLOB_E_QUANT_IMPORTANCE, TBLOB_NO_OFFSET, -1,
                      "options->importance_count is %llu; it must equal cols (%llu)",
                      static_cast<unsigned long long>(options->importance_count),
                      static_cast<unsigned long long>(cols));
      importance = options->importance;
    }
    if (TBLOB_COVERS(options, reserved) && (options->reserved[0] || options->reserved[1]))
      return bad_arg(d, "options->reserved must be 0");
  }
  return tblob::ggml::quantize(ggml_type, src_dtype, src, src_bytes, rows, cols, importance, dst, dst_bytes,
                               threads, d);
}

TBLOB_API const char *tblob_ggml_kernel_name(void) noexcept { return tblob::ggml::active_kernels().name; }

}  // extern "C"
