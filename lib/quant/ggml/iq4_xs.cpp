// IQ4_XS: 256 values in eight sub-blocks of 32, each value a 4-bit index into ggml's
// non-linear grid (kvalues_iq4nl), each sub-block a 6-bit signed scale (stored +32) times the
// block's f16 d. Layout: d, a 16-bit word of the scales' high 2 bits (2 per sub-block), 4
// bytes of their low nibbles, 128 bytes of indices (byte 16i+j: value 32i+j low, +16 high).
// ggml_quantize_chunk always runs the 15-candidate scale search (ntry 7), with or without
// importance; quantize_row_iq4_xs_ref is the same call.
#include <cmath>

#include "quant/ggml/kquant_batch.h"
#include "quant/ggml/kquant_search.h"
#include "quant/ggml/kquants.h"

namespace tblob {
namespace ggml {

using namespace q;

void quantize_row_iq4_xs(const float *row, void *dst, int64_t cols, const float *importance) {
  uint8_t *blk = static_cast<uint8_t *>(dst);
  const SearchSet &s = active_searches();
  for (int64_t b = 0; b < cols / kQK; ++b, blk += kIQ4XSBytes) {
    const float *x = row + b * kQK;
    const float *qw = importance ? importance + b * kQK : nullptr;
    float sigma2 = 0.0f;
    for (int i = 0; i < kQK; ++i) sigma2 += x[i] * x[i];
    sigma2 *= 2.0f / 256.0f;
    float scales[8], w[kQK];
    for (int i = 0; i < kQK; ++i) w[i] = qw ? qw[i] * std::sqrt(sigma2 + x[i] * x[i]) : x[i] * x[i];
    s.iq4(x, w, scales);
    float max_scale = 0.0f, amax_scale = 0.0f;
    for (int ib = 0; ib < 8; ++ib) {
      const float a = std::fabs(scales[ib]);
      if (a > amax_scale) {
        amax_scale = a;
        max_scale = scales[ib];
      }
    }
    // Block scale -max_scale/32; the sub-block levels and indices use the unrounded d.
    const float d = -max_scale / 32.0f;
    store_half(blk, d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint16_t scales_h = 0;
    uint8_t *scales_l = blk + 4;
    uint8_t *qs = blk + 8;
    uint8_t L[32];
    for (int ib = 0; ib < 8; ++ib) {
      int l = clamp_int(nearest_int(id * scales[ib]), -32, 31);
      const float dl = d * static_cast<float>(l);
      const float idl = dl != 0.0f ? 1.0f / dl : 0.0f;
      const float *xb = x + 32 * ib;
      for (int j = 0; j < 32; ++j) L[j] = static_cast<uint8_t>(iq4_index(idl * xb[j]));
      for (int j = 0; j < 16; ++j) qs[16 * ib + j] = static_cast<uint8_t>(L[j] | (L[16 + j] << 4));
      l += 32;
      if (ib % 2 == 0) {
        scales_l[ib / 2] = static_cast<uint8_t>(l & 0xF);
      } else {
        scales_l[ib / 2] = static_cast<uint8_t>(scales_l[ib / 2] | ((l & 0xF) << 4));
      }
      scales_h = static_cast<uint16_t>(scales_h | ((l >> 4) << (2 * (ib % 8))));
    }
    store_le(blk + 2, scales_h);
  }
}

}  // namespace ggml
}  // namespace tblob
