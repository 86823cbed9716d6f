#include "formats/slm1/dequant.h"

#include <cstdint>

#include "dequant/dequant.h"
#include "formats/slm1/format.h"

namespace tblob {

Status slm1_quant_desc(const Slm1View &v, QuantDesc *out) {
  QuantDesc q;
  q.rows = v.rows;
  q.cols = v.cols;
  q.data = v.payload;
  q.data_bytes = v.payload_bytes;
  switch (v.dtype) {
    case slm1::kDtypeF32:
      q.scheme = QuantScheme::kF32;
      break;
    case slm1::kDtypeQ8_0:
    case slm1::kDtypeQ4_0:
      q.scheme = v.dtype == slm1::kDtypeQ8_0 ? QuantScheme::kSlm1Q8 : QuantScheme::kSlm1Q4;
      q.group_size = v.block_size;  // q8_0: cols (validate_desc checks it)
      q.scale_dtype = TBLOB_DTYPE_F32;
      q.scales = v.scales;
      q.scales_bytes = v.scale_bytes;
      break;
    default:
      return TBLOB_E_INVALID_ARGUMENT;
  }
  *out = q;
  return TBLOB_OK;
}

namespace {

Status describe(const tblob_model *m, uint64_t index, QuantDesc *q, const uint64_t **shape,
                uint32_t *rank) {
  Slm1View v;
  Status s = slm1_view(m, index, &v);
  if (s == TBLOB_OK) s = slm1_quant_desc(v, q);
  if (s != TBLOB_OK) return s;
  *shape = v.shape;
  *rank = v.rank;
  return TBLOB_OK;
}

}  // namespace

const DequantHooks kSlm1DequantHooks = {&describe, nullptr, nullptr};

Status slm1_dequant_rows(const Slm1View &v, uint64_t row_begin, uint64_t row_end, float *dst,
                         size_t dst_count) {
  if (v.rows == 0 || v.cols == 0 || !v.payload) return TBLOB_E_INVALID_ARGUMENT;
  QuantDesc q;
  if (slm1_quant_desc(v, &q) != TBLOB_OK || validate_desc(q) != TBLOB_OK) return TBLOB_E_INVALID_ARGUMENT;
  const size_t dst_bytes = dst_count > SIZE_MAX / 4 ? SIZE_MAX : dst_count * 4;
  return dequantize_rows(q, TBLOB_DTYPE_F32, row_begin, row_end, dst, dst_bytes);
}

}  // namespace tblob
