// Scalar reference for Hugging Face block FP8 (definition in block_fp8.h).
#include "dequant/scalar/block_fp8.h"

#include "core/checked.h"
#include "core/dtype.h"
#include "dequant/scalar/common.h"

namespace tblob {

namespace {

// Bytes per scale for the encodings block FP8 allows (F32, F16, BF16), else 0.
uint32_t block_scale_size(uint32_t dt) {
  const bool allowed = dt == TBLOB_DTYPE_F32 || dt == TBLOB_DTYPE_F16 || dt == TBLOB_DTYPE_BF16;
  return allowed ? dtype_size(dt) : 0;
}

template <uint32_t SDT, uint32_t OUT>
void rows_impl(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  uint8_t *out = static_cast<uint8_t *>(dst);
  const uint64_t g = d.group_size;
  const uint64_t bc = ceil_div(d.cols, g);
  const bool max_finite = (d.special & kSpecE4M3MaxFinite) != 0;
  uint64_t o = 0;
  for (uint64_t r = rb; r < re; ++r) {
    const uint8_t *codes = d.data + r * d.cols;
    const uint64_t srow = (r / g) * bc;
    for (uint64_t c0 = 0; c0 < d.cols; c0 += g) {
      const float s = dq::load_float<SDT>(d.scales, srow + c0 / g);
      const uint64_t c1 = d.cols - c0 < g ? d.cols : c0 + g;
      for (uint64_t c = c0; c < c1; ++c) {
        const float e = dq::f32_from_bits(dq::e4m3_to_f32(codes[c], max_finite));
        const float p = e * s;  // one f32 multiply (nothing to contract)
        dq::store_out<OUT>(out, o++, dq::canon_nan(dq::f32_bits(p)));
      }
    }
  }
}

}  // namespace

namespace scalar {
template <uint32_t OUT>
void block_fp8_rows(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  switch (d.scale_dtype) {
    case TBLOB_DTYPE_F32: rows_impl<TBLOB_DTYPE_F32, OUT>(d, rb, re, dst); break;
    case TBLOB_DTYPE_F16: rows_impl<TBLOB_DTYPE_F16, OUT>(d, rb, re, dst); break;
    default: rows_impl<TBLOB_DTYPE_BF16, OUT>(d, rb, re, dst); break;
  }
}
template void block_fp8_rows<kOutF32>(const QuantDesc &, uint64_t, uint64_t, void *);
template void block_fp8_rows<kOutF16>(const QuantDesc &, uint64_t, uint64_t, void *);
template void block_fp8_rows<kOutBF16>(const QuantDesc &, uint64_t, uint64_t, void *);
}  // namespace scalar

Status validate_block_fp8(const QuantDesc &d) {
  if (d.scheme != QuantScheme::kBlockFp8) return kStatusQuantScheme;
  if (d.bits != 0 && d.bits != 8) return kStatusQuantScheme;
  if ((d.special & ~kSpecAll) != 0) return kStatusQuantScheme;
  if (static_cast<uint32_t>(d.global_scale_mode) > static_cast<uint32_t>(GlobalScaleMode::kMlxAmax))
    return kStatusQuantScheme;
  uint64_t elems;
  if (!checked_mul(d.rows, d.cols, &elems)) return TBLOB_E_SHAPE_OVERFLOW;
  if (d.group_size == 0) return kStatusQuantGroupSize;
  const uint32_t ss = block_scale_size(d.scale_dtype);
  if (ss == 0) return kStatusQuantScaleDtype;
  if (d.bias_dtype != TBLOB_DTYPE_INVALID || d.biases != nullptr || d.biases_bytes != 0)
    return kStatusQuantBiasDtype;
  if (d.global_scale_mode != GlobalScaleMode::kNone || d.global_scale != nullptr ||
      d.global_scale_bytes != 0)
    return kStatusQuantGlobalScale;
  if (d.data_bytes != elems) return kStatusQuantDataSize;
  uint64_t blocks, sbytes;
  if (!checked_mul(ceil_div(d.rows, d.group_size), ceil_div(d.cols, d.group_size), &blocks) ||
      !checked_mul(blocks, ss, &sbytes))
    return TBLOB_E_SHAPE_OVERFLOW;
  if (d.scales_bytes != sbytes) return kStatusQuantScaleSize;
  if ((d.data_bytes && !d.data) || (d.scales_bytes && !d.scales)) return TBLOB_E_INVALID_ARGUMENT;
  return TBLOB_OK;
}

uint64_t block_fp8_scale_count(const QuantDesc &d) {
  if (d.group_size == 0) return 0;
  return ceil_div(d.rows, d.group_size) * ceil_div(d.cols, d.group_size);
}

Status dequantize_block_fp8(const QuantDesc &d, uint32_t out_dtype, uint64_t row_begin,
                            uint64_t row_end, void *dst, size_t dst_bytes) {
  const Status st = validate_block_fp8(d);
  if (st != TBLOB_OK) return st;
  const uint32_t es = dequant_out_size(out_dtype);
  if (es == 0) return kStatusDequantOutDtype;
  if (row_begin > row_end || row_end > d.rows) return TBLOB_E_RANGE;
  uint64_t n, need;
  if (!checked_mul(row_end - row_begin, d.cols, &n) || !checked_mul(n, es, &need))
    return TBLOB_E_SHAPE_OVERFLOW;
  if (need > static_cast<uint64_t>(dst_bytes)) return TBLOB_E_BUFFER_TOO_SMALL;
  if (need == 0) return TBLOB_OK;
  if (dst == nullptr) return TBLOB_E_INVALID_ARGUMENT;
  switch (dequant_out_slot(out_dtype)) {
    case kOutF32: scalar::block_fp8_rows<kOutF32>(d, row_begin, row_end, dst); break;
    case kOutF16: scalar::block_fp8_rows<kOutF16>(d, row_begin, row_end, dst); break;
    default: scalar::block_fp8_rows<kOutBF16>(d, row_begin, row_end, dst); break;
  }
  return TBLOB_OK;
}

}  // namespace tblob
