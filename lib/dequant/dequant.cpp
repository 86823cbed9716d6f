#include "dequant/dequant.h"

#include "core/checked.h"
#include "dequant/scalar/scalar.h"

namespace tblob {

Status dequant_output_bytes(const QuantDesc &d, uint32_t out_dtype, uint64_t row_begin,
                            uint64_t row_end, uint64_t *out_bytes) {
  const Status st = validate_desc(d);
  if (st != TBLOB_OK) return st;
  const uint32_t esize = dequant_out_size(out_dtype);
  if (esize == 0) return kStatusDequantOutDtype;
  if (row_begin > row_end || row_end > d.rows) return TBLOB_E_RANGE;
  uint64_t elems, bytes;
  if (!checked_mul(row_end - row_begin, d.cols, &elems) || !checked_mul(elems, esize, &bytes)) {
    return TBLOB_E_SHAPE_OVERFLOW;
  }
  *out_bytes = bytes;
  return TBLOB_OK;
}

Status dequantize_rows_with(const KernelTable &kernels, const QuantDesc &d,
                            uint32_t out_dtype, uint64_t row_begin, uint64_t row_end,
                            void *dst, size_t dst_bytes) {
  uint64_t need = 0;
  const Status st = dequant_output_bytes(d, out_dtype, row_begin, row_end, &need);
  if (st != TBLOB_OK) return st;
  if (need > static_cast<uint64_t>(dst_bytes)) return TBLOB_E_BUFFER_TOO_SMALL;
  if (need == 0) return TBLOB_OK;
  if (dst == nullptr) return TBLOB_E_INVALID_ARGUMENT;
  const DequantRowsFn fn =
      kernels.rows[static_cast<uint32_t>(d.scheme)][dequant_out_slot(out_dtype)];
  if (fn == nullptr) return TBLOB_E_UNSUPPORTED;
  fn(d, row_begin, row_end, dst);
  return TBLOB_OK;
}

Status dequantize_rows(const QuantDesc &d, uint32_t out_dtype, uint64_t row_begin,
                       uint64_t row_end, void *dst, size_t dst_bytes) {
  return dequantize_rows_with(scalar_kernel_table(), d, out_dtype, row_begin, row_end, dst,
                              dst_bytes);
}

}  // namespace tblob
