// Hugging Face block FP8 (the `weight_scale_inv` layout; definition in
// lib/dequant/scalar/block_fp8.h). Rule (docs/quantize.md): per G x G block (partial at the
// edges) s = round_S(f32(amax / 448)), or 1 for an all-zero block; code = E4M3 nearest even
// to f32(x / s), saturating at +-448. So every block with a non-zero value holds a code of
// magnitude 448 (0x7E / 0xFE) up to the scale's rounding, as DeepSeek-V3 / Qwen3 FP8
// checkpoints do.
#include <cmath>

#include "quant/encode.h"
#include "quant/quantize.h"

namespace tblob {
namespace quant {

void block_fp8_rows(const QuantDesc &d, const Source &src, uint64_t ub, uint64_t ue, ValueError *err) {
  const uint64_t g = d.group_size, cols = d.cols, nbc = (cols + g - 1) / g;
  uint8_t *data = const_cast<uint8_t *>(d.data);
  uint8_t *scales = const_cast<uint8_t *>(d.scales);
  for (uint64_t br = ub; br < ue; ++br) {
    const uint64_t r0 = br * g, r1 = d.rows - r0 < g ? d.rows : r0 + g;
    for (uint64_t bc = 0; bc < nbc; ++bc) {
      const uint64_t c0 = bc * g, c1 = cols - c0 < g ? cols : c0 + g;
      float amax = 0.0f;
      ValueError e;
      for (uint64_t r = r0; r < r1 && !e.set(); ++r)
        for (uint64_t c = c0; c < c1; ++c) {
          const float v = src.at(r, c);
          if (!finite(v)) {
            e.row = r, e.col = c, e.why = kNonFinite;
            break;
          }
          const float a = std::fabs(v);
          amax = a > amax ? a : amax;
        }
      float s = 1.0f;
      if (!e.set() && amax != 0.0f) {
        s = round_dt(d.scale_dtype, amax / 448.0f);
        if (s == 0.0f || !finite(s)) {
          e.row = r0, e.col = c0;
          e.why = s == 0.0f ? "the block's amax / 448 underflows the scale dtype"
                            : "the block's amax / 448 overflows the scale dtype";
        }
      }
      if (e.set()) err->keep(e);
      store_dt(d.scale_dtype, scales, br * nbc + bc, e.set() ? 0.0f : s);
      for (uint64_t r = r0; r < r1; ++r)
        for (uint64_t c = c0; c < c1; ++c)
          data[r * cols + c] = e.set() ? 0 : e4m3_from_f32(src.at(r, c) / s);
    }
  }
}

}  // namespace quant
}  // namespace tblob
