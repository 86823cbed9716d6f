// The extern "C" dequantization API: descriptors in and out, argument checks, conversion of
// the internal results. Tensor resolution and its diagnostics are lib/table/tensor_dequant.h,
// decoding is lib/dequant/.
#include "capi/capi_common.h"
#include <cstddef>
#include <cstring>

#include "dequant/dequant.h"
#include "dequant/dispatch.h"
#include "dequant/quant_desc.h"
#include "capi/quant_desc_public.h"
#include "dequant/quant_explain.h"
#include "table/model.h"
#include "table/tensor_dequant.h"
#include "table/tensor_view.h"


using tblob::Diag;
using tblob::GlobalScaleMode;
using tblob::kNoTensor;
using tblob::QuantDesc;
using tblob::QuantScheme;
using tblob::Status;
using tblob::capi::bad_arg;
using tblob::capi::begin;

// The public enums are the internal ones, number for number.
static_assert(TBLOB_QUANT_MLX_AFFINE == static_cast<int>(QuantScheme::kMlxAffine), "scheme");
static_assert(TBLOB_QUANT_MXFP4 == static_cast<int>(QuantScheme::kMxfp4), "scheme");
static_assert(TBLOB_QUANT_MXFP8 == static_cast<int>(QuantScheme::kMxfp8), "scheme");
static_assert(TBLOB_QUANT_NVFP4 == static_cast<int>(QuantScheme::kNvfp4), "scheme");
static_assert(TBLOB_QUANT_F8_E4M3 == static_cast<int>(QuantScheme::kF8E4M3), "scheme");
static_assert(TBLOB_QUANT_F8_E5M2 == static_cast<int>(QuantScheme::kF8E5M2), "scheme");
static_assert(TBLOB_QUANT_F8_E8M0 == static_cast<int>(QuantScheme::kF8E8M0), "scheme");
static_assert(TBLOB_QUANT_F8_E4M3FNUZ == static_cast<int>(QuantScheme::kF8E4M3Fnuz), "scheme");
static_assert(TBLOB_QUANT_F8_E5M2FNUZ == static_cast<int>(QuantScheme::kF8E5M2Fnuz), "scheme");
static_assert(TBLOB_QUANT_F4 == static_cast<int>(QuantScheme::kF4E2M1), "scheme");
static_assert(TBLOB_QUANT_F16 == static_cast<int>(QuantScheme::kF16), "scheme");
static_assert(TBLOB_QUANT_BF16 == static_cast<int>(QuantScheme::kBF16), "scheme");
static_assert(TBLOB_QUANT_F32 == static_cast<int>(QuantScheme::kF32), "scheme");
static_assert(TBLOB_QUANT_BLOCK_FP8 == static_cast<int>(QuantScheme::kBlockFp8), "scheme");
static_assert(TBLOB_QUANT_SLM1_Q8_0 == static_cast<int>(QuantScheme::kSlm1Q8), "scheme");
static_assert(TBLOB_QUANT_SLM1_Q4_0 == static_cast<int>(QuantScheme::kSlm1Q4), "scheme");
static_assert(TBLOB_QUANT_SLM1_Q4_0 + 1 == tblob::kQuantSchemeCount, "every scheme is numbered");
static_assert(TBLOB_SPECIAL_E4M3_MAX_FINITE == tblob::kSpecE4M3MaxFinite, "special");
static_assert(TBLOB_SPECIAL_E8M0_MAX_INF == tblob::kSpecE8M0MaxInf, "special");
static_assert(TBLOB_SPECIAL_E8M0_ZERO_IS_ZERO == tblob::kSpecE8M0ZeroIsZero, "special");
static_assert(TBLOB_SPECIAL_MLX == tblob::kSpecialMlx, "special");
static_assert(TBLOB_SPECIAL_MISTRALRS == tblob::kSpecialMistralRs, "special");
static_assert(TBLOB_GLOBAL_SCALE_MULTIPLIER == static_cast<int>(GlobalScaleMode::kMultiplier), "gs");
static_assert(TBLOB_GLOBAL_SCALE_MLX_AMAX == static_cast<int>(GlobalScaleMode::kMlxAmax), "gs");


using tblob::capi::desc_from_public;

namespace {

void desc_to_public(const QuantDesc &q, tblob_quant_desc *p) {
  p->scheme = static_cast<uint32_t>(q.scheme);
  p->bits = q.bits;
  p->group_size = q.group_size;
  p->scale_dtype = q.scale_dtype;
  p->bias_dtype = q.bias_dtype;
  p->special = q.special;
  p->global_scale_mode = static_cast<uint32_t>(q.global_scale_mode);
  p->rows = q.rows;
  p->cols = q.cols;
  p->data = q.data;
  p->data_bytes = q.data_bytes;
  p->scales = q.scales;
  p->scales_bytes = q.scales_bytes;
  p->biases = q.biases;
  p->biases_bytes = q.biases_bytes;
  p->global_scale = q.global_scale;
  p->global_scale_bytes = q.global_scale_bytes;
}

}  // namespace

extern "C" {

TBLOB_API const char *tblob_quant_scheme_name(uint32_t scheme) noexcept {
  return tblob::quant_scheme_name(static_cast<QuantScheme>(scheme));
}

TBLOB_API tblob_status tblob_quant_dequantize(const tblob_quant_desc *desc, uint32_t out_dtype,
                                         uint64_t row_begin, uint64_t row_end, void *dst,
                                         size_t dst_bytes, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  QuantDesc q;
  if (!desc_from_public(desc, &q))
    return bad_arg(d, "desc is NULL or its struct_size is too small (use TBLOB_QUANT_DESC_INIT)");
  if (row_end == TBLOB_ALL_ROWS) row_end = q.rows;
  const Status s = tblob::dequantize_rows(q, out_dtype, row_begin, row_end, dst, dst_bytes);
  if (s == TBLOB_OK) return TBLOB_OK;
  char detail[200];
  const tblob::QuantField f =
      tblob::quant_explain(s, q, out_dtype, row_begin, row_end, dst_bytes, detail, sizeof(detail));
  return d.fail(s, TBLOB_NO_OFFSET, -1, "quant descriptor (%s): %s%s",
                tblob::quant_scheme_text(static_cast<uint32_t>(q.scheme)), tblob::quant_field_prefix(f), detail);
}

TBLOB_API tblob_status tblob_tensor_dequantize(const tblob_model *model, uint64_t index,
                                        uint32_t out_dtype, uint64_t row_begin,
                                        uint64_t row_end, void *dst, size_t dst_bytes,
                                        tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::tensor_dequantize(model, index, out_dtype, row_begin, row_end, dst, dst_bytes, d);
}

}  // extern "C"

extern "C" {

TBLOB_API tblob_status tblob_tensor_dequant_size(const tblob_model *model, uint64_t index,
                                                 uint32_t out_dtype, uint64_t row_begin,
                                                 uint64_t row_end, uint64_t *bytes,
                                                 tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::tensor_dequant_size(model, index, out_dtype, row_begin, row_end, bytes, d);
}

TBLOB_API tblob_status tblob_tensor_quant_info(const tblob_model *model, uint64_t index,
                                          tblob_quant_info *info, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !info) return bad_arg(d, "model and info are required");
  if (!TBLOB_COVERS(info, global_scale_index))
    return bad_arg(d, "info->struct_size too small (use TBLOB_QUANT_INFO_INIT)");
  if (index >= model->tensors.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%zu tensors)",
                  static_cast<unsigned long long>(index), model->tensors.size());
  tblob::TensorView v;
  Status s = tblob::view_of(model, index, &v);
  if (s == TBLOB_OK) s = tblob::validate_desc(tblob::sized(v.q));
  const QuantDesc &q = v.q;
  info->scheme = static_cast<uint32_t>(q.scheme);
  info->flags = (v.logical || v.own_scheme) ? TBLOB_TENSOR_QUANTIZED : v.rec ? TBLOB_TENSOR_COMPANION : 0u;
  info->source = v.logical      ? v.rec->source
                 : v.own_scheme ? static_cast<uint32_t>(TBLOB_QUANT_SOURCE_SLM1)  // only SLM1 rows carry their own
                                : static_cast<uint32_t>(TBLOB_QUANT_SOURCE_PLAIN);
  info->bits = tblob::quant_element_bits(q);
  info->group_size = q.group_size;
  info->scale_dtype = q.scale_dtype;
  info->bias_dtype = q.bias_dtype;
  info->special = q.special;
  info->global_scale_mode = static_cast<uint32_t>(q.global_scale_mode);
  info->shape = v.shape;
  info->rank = v.rank;
  info->status = s;
  info->rows = q.rows;
  info->cols = q.cols;
  auto idx = [](uint64_t t) { return t == kNoTensor ? int64_t{-1} : static_cast<int64_t>(t); };
  info->weight_index = v.rec ? idx(v.rec->tensor) : v.own_scheme ? static_cast<int64_t>(index) : -1;
  info->scale_index = v.rec ? idx(v.rec->scale) : -1;
  info->bias_index = v.rec ? idx(v.rec->bias) : -1;
  info->global_scale_index = v.rec ? idx(v.rec->global_scale) : -1;
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_tensor_quant_desc(const tblob_model *model, uint64_t index,
                                               tblob_quant_desc *desc, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !desc) return bad_arg(d, "model and desc are required");
  if (!TBLOB_COVERS(desc, global_scale_bytes))
    return bad_arg(d, "desc->struct_size too small (use TBLOB_QUANT_DESC_INIT)");
  if (index >= model->tensors.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%zu tensors)",
                  static_cast<unsigned long long>(index), model->tensors.size());
  tblob::TensorView v;
  Status s = tblob::view_of(model, index, &v);
  desc_to_public(v.q, desc);  // a byte source's bytes not in memory: NULL pointers
  if (s == TBLOB_OK) s = tblob::validate_desc(tblob::sized(v.q));
  if (s == TBLOB_OK) return TBLOB_OK;
  return tblob::tensor_fail(d, model, index, v, s, TBLOB_DTYPE_F32, 0, v.q.rows, 0);
}

TBLOB_API tblob_status tblob_kernel_set(const char *name, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  const Status s = tblob::set_kernel(name ? name : "auto");
  if (s == TBLOB_OK) return TBLOB_OK;
  return d.fail(s, TBLOB_NO_OFFSET, -1, "kernel set \"%.40s\" is unknown, compiled out or not runnable on this host",
                name ? name : "auto");
}

TBLOB_API const char *tblob_kernel_active(void) noexcept {
  return tblob::active_kernel_name();
}

}  // extern "C"
