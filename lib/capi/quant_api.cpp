// The extern "C" quantization API for the MLX/FP8/SLM1 schemes: argument checks and
// diagnostics only; the quantizers are lib/quant/.
#include <cstddef>

#include "capi/capi_common.h"
#include "capi/quant_desc_public.h"
#include "core/checked.h"
#include "quant/quantize.h"

using tblob::QuantDesc;
using tblob::Status;
using tblob::capi::bad_arg;
using tblob::capi::desc_from_public;

namespace {

const char *scheme_text(const QuantDesc &q) { return tblob::quant_scheme_name(q.scheme); }

Status desc_fail(const tblob::Diag &d, Status s, const QuantDesc &q, const char *what) {
  return d.fail(s, TBLOB_NO_OFFSET, -1, "quant descriptor (%s, bits %u, group size %u, %llu x %llu): %s",
                scheme_text(q), q.bits, q.group_size, static_cast<unsigned long long>(q.rows),
                static_cast<unsigned long long>(q.cols), what);
}

}  // namespace

extern "C" {

TBLOB_API tblob_status tblob_quant_size(tblob_quant_desc *desc, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  QuantDesc q;
  if (!desc_from_public(desc, &q))
    return bad_arg(d, "desc is NULL or its struct_size is too small (use TBLOB_QUANT_DESC_INIT)");
  const Status s = tblob::quant::sizes(&q);
  if (s != TBLOB_OK) return desc_fail(d, s, q, tblob_status_name(s));
  desc->data_bytes = q.data_bytes;
  desc->scales_bytes = q.scales_bytes;
  desc->biases_bytes = q.biases_bytes;
  desc->global_scale_bytes = q.global_scale_bytes;
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_quant_quantize(const tblob_quant_desc *desc, uint32_t src_dtype,
                                           const void *src, size_t src_bytes,
                                           const tblob_quantize_options *options,
                                           tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  QuantDesc q;
  if (!desc_from_public(desc, &q))
    return bad_arg(d, "desc is NULL or its struct_size is too small (use TBLOB_QUANT_DESC_INIT)");
  uint32_t threads = 0;
  if (options) {
    if (!TBLOB_COVERS(options, reserved))
      return bad_arg(d, "options->struct_size is too small (use TBLOB_QUANTIZE_OPTIONS_INIT)");
    if (options->reserved[0] || options->reserved[1]) return bad_arg(d, "options->reserved must be 0");
    if (options->importance || options->importance_count)
      return d.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, -1,
                    "%s takes no importance weights (options->importance must be NULL, importance_count 0)",
                    scheme_text(q));
    threads = options->threads;
  }
  Status s = tblob::validate_desc(q);
  if (s != TBLOB_OK) {
    if (s == TBLOB_E_INVALID_ARGUMENT) return bad_arg(d, "a descriptor buffer is NULL with a non-zero length");
    return desc_fail(d, s, q, "the lengths or parameters differ from what tblob_quant_size gives");
  }
  const char *why = nullptr;
  s = tblob::quant::check_quantizable(q, &why);
  if (s != TBLOB_OK) return desc_fail(d, s, q, why);
  const uint32_t es = tblob::quant::source_size(src_dtype);
  if (es == 0)
    return d.fail(TBLOB_E_DTYPE, TBLOB_NO_OFFSET, -1, "src_dtype %u: quantizers read F32, F16 or BF16", src_dtype);
  uint64_t n, need;
  if (!tblob::checked_mul(q.rows, q.cols, &n) || !tblob::checked_mul(n, es, &need))
    return desc_fail(d, TBLOB_E_SHAPE_OVERFLOW, q, "rows x cols overflows");
  if (need > static_cast<uint64_t>(src_bytes))
    return d.fail(TBLOB_E_BUFFER_TOO_SMALL, TBLOB_NO_OFFSET, -1, "src holds %zu bytes; %llu x %llu values need %llu",
                  src_bytes, static_cast<unsigned long long>(q.rows), static_cast<unsigned long long>(q.cols),
                  static_cast<unsigned long long>(need));
  if (need && !src) return bad_arg(d, "src is NULL");
  tblob::quant::Source in;
  in.p = static_cast<const uint8_t *>(src);
  in.dtype = src_dtype;
  in.cols = q.cols;
  tblob::quant::ValueError err;
  s = tblob::quant::quantize(q, in, threads, &err);
  if (s == TBLOB_OK) return TBLOB_OK;
  return d.fail(s, TBLOB_NO_OFFSET, -1, "quantizing %s: row %llu, column %llu: %s", scheme_text(q),
                static_cast<unsigned long long>(err.row), static_cast<unsigned long long>(err.col), err.why);
}

}  // extern "C"
