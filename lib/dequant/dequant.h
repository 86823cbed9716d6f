// Dequantization entry points over a QuantDesc (no files, no allocation).
#pragma once
#include <cstddef>
#include <cstdint>

#include "dequant/kernel_table.h"
#include "dequant/quant_desc.h"

namespace tblob {

// Bytes dequantize_rows writes for rows [row_begin, row_end) in out_dtype. Validates the
// descriptor, the output dtype and the range; *out_bytes is set only on TBLOB_OK.
Status dequant_output_bytes(const QuantDesc &d, uint32_t out_dtype, uint64_t row_begin,
                            uint64_t row_end, uint64_t *out_bytes);

// Decodes rows [row_begin, row_end) of d into dst as out_dtype (TBLOB_DTYPE_F32, _F16 or
// _BF16), row-major, host byte order, any alignment. Returns:
//   the validate_desc() status for a bad descriptor; kStatusDequantOutDtype;
//   TBLOB_E_RANGE when row_begin > row_end or row_end > d.rows;
//   TBLOB_E_BUFFER_TOO_SMALL when dst_bytes is less than dequant_output_bytes() (larger is
//   fine; bytes past the output are untouched); TBLOB_E_INVALID_ARGUMENT for a NULL dst with
//   a non-empty output. Uses the active kernel set (dispatch.h).
Status dequantize_rows(const QuantDesc &d, uint32_t out_dtype, uint64_t row_begin,
                       uint64_t row_end, void *dst, size_t dst_bytes);

// Same, with an explicit kernel set (tests compare every set against the scalar one).
Status dequantize_rows_with(const KernelTable &kernels, const QuantDesc &d,
                            uint32_t out_dtype, uint64_t row_begin, uint64_t row_end,
                            void *dst, size_t dst_bytes);

}  // namespace tblob
