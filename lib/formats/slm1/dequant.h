// Scalar reference dequantization of SLM1 tensors (docs/slm1.md section 6): x = (float)q *
// scale, one f32 multiply. Zero-copy: it reads the payload and scales where they are (in
// the mapping, 64-byte aligned for files; any alignment works). This is the reference the
// shared kernel table (lib/dequant/) will take over.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
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
};

// The view of tensor `index` of an SLM1 model. TBLOB_E_INVALID_ARGUMENT if the model is not
// SLM1, TBLOB_E_RANGE for a bad index.
Status slm1_view(const tblob_model *m, uint64_t index, Slm1View *out);

// Writes rows [row_begin, row_end) as f32 (row-major) into dst, which holds dst_count floats.
// Checks first, writes nothing on error: the view's sizes (TBLOB_E_INVALID_ARGUMENT), the
// range (TBLOB_E_RANGE), dst_count (TBLOB_E_BUFFER_TOO_SMALL).
Status slm1_dequant_rows(const Slm1View &v, uint64_t row_begin, uint64_t row_end, float *dst,
                         size_t dst_count);

}  // namespace tblob
