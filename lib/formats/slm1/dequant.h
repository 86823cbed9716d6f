// Dequantization of SLM1 tensors (docs/slm1.md section 6) through the shared kernel table:
// an SLM1 tensor is described zero-copy as a QuantDesc (QuantScheme::kSlm1Q8 / kSlm1Q4 for
// q8_0 / q4_0, kF32 for f32) whose pointers are the payload and scale array where they lie
// (in the mapping, 64-byte aligned for files; any alignment works), and decoded by the active
// kernel set (lib/dequant/). The C API (tblob_tensor_dequantize) goes the same way.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "dequant/quant_desc.h"
#include "table/model.h"
#include "tensorblob.h"

namespace tblob {

struct Slm1View {
  uint32_t dtype = 0;       // tblob_slm1_dtype
  uint64_t rows = 0, cols = 0;
  uint32_t block_size = 0;  // 0 for f32, cols for q8_0, the q4_0 block
  const uint8_t *payload = nullptr;
  uint64_t payload_bytes = 0;
  const uint8_t *scales = nullptr;  // little-endian f32
  uint64_t scale_bytes = 0;
  uint64_t scale_offset = 0;  // in the file (a byte source reads the scales from there)
  const uint64_t *shape = nullptr;  // the stored dims (q4_0 not halved), borrowed; may be null
  uint32_t rank = 0;
};

// The view of tensor `index` of an SLM1 model. TBLOB_E_INVALID_ARGUMENT if the model is not
// SLM1, TBLOB_E_RANGE for a bad index.
Status slm1_view(const tblob_model *m, uint64_t index, Slm1View *out);

// The kernel-table descriptor of a view (no copy, nothing checked beyond the dtype; run
// validate_desc on it). TBLOB_E_INVALID_ARGUMENT for a dtype that is not f32/q8_0/q4_0.
Status slm1_quant_desc(const Slm1View &v, QuantDesc *out);

namespace slm1 {
// The operations an SLM1 model carries (slm1_format.cpp): find is find_name, describe is
// slm1_view + slm1_quant_desc.
extern const FormatOps kFormat;
}  // namespace slm1

// Writes rows [row_begin, row_end) as f32 (row-major) into dst, which holds dst_count floats,
// with the active kernel set (a thin adapter over dequantize_rows). Checks first, writes
// nothing on error: the view's sizes (TBLOB_E_INVALID_ARGUMENT), the range (TBLOB_E_RANGE),
// dst_count (TBLOB_E_BUFFER_TOO_SMALL).
Status slm1_dequant_rows(const Slm1View &v, uint64_t row_begin, uint64_t row_end, float *dst,
                         size_t dst_count);

}  // namespace tblob
