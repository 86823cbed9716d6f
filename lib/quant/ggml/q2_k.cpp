// Q2_K: 256 values in sixteen sub-blocks of 16 with levels 0..3, a 4-bit scale and a 4-bit
// min per sub-block (one byte: scale low, min high) and f16 d and dmin (value = d*sc*q -
// dmin*m). Layout: 16 scale bytes, 64 bytes of 2-bit levels, d, dmin.
#include <cmath>

#include "quant/ggml/kquant_batch.h"
#include "quant/ggml/kquant_search.h"
#include "quant/ggml/kquants.h"

namespace tblob {
namespace ggml {

using namespace q;

namespace {

// Reference path: weights |x|, the affine search by absolute error, then scales and mins as
// 4-bit fractions of the largest of each (the rounded level is stored as a byte, unclamped).
void reference_block(const SearchSet &s, const float *x, uint8_t *blk, uint8_t *L) {
  float scales[16], mins[16], w[kQK];
  for (int i = 0; i < kQK; ++i) w[i] = std::fabs(x[i]);
  s.affine(16, 16, 3, x, w, L, scales, mins, -0.5f, 0.1f, 15, true);
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 16; ++j) {
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  uint8_t *sc = blk;
  if (max_scale > 0.0f) {
    const float iscale = 15.0f / max_scale;
    for (int j = 0; j < 16; ++j) sc[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
    store_half(blk + 80, max_scale / 15.0f);
  } else {
    std::memset(sc, 0, 16);
    store_half(blk + 80, 0.0f);
  }
  if (max_min > 0.0f) {
    const float iscale = 15.0f / max_min;
    for (int j = 0; j < 16; ++j) {
      sc[j] = static_cast<uint8_t>(sc[j] | (static_cast<unsigned>(nearest_int(iscale * mins[j])) << 4));
    }
    store_half(blk + 82, max_min / 15.0f);
  } else {
    store_half(blk + 82, 0.0f);
  }
}

// Importance path: weights qw * sqrt(sigma2 + x^2) with sigma2 = mean x^2 over the block, the
// affine search by squared error, then scales and mins fitted to 4-bit levels weighted by
// each sub-block's total weight.
void importance_block(const SearchSet &s, const float *x, const float *qw, uint8_t *blk, uint8_t *L) {
  float sumx2 = 0.0f;
  for (int i = 0; i < kQK; ++i) sumx2 += x[i] * x[i];
  const float sigma2 = sumx2 / 256.0f;
  float scales[16], mins[16], sw[16], w[kQK];
  for (int j = 0; j < 16; ++j) {
    const float *xs = x + 16 * j;
    float *ws = w + 16 * j;
    for (int i = 0; i < 16; ++i) ws[i] = qw[16 * j + i] * std::sqrt(sigma2 + xs[i] * xs[i]);
    float sumw = 0.0f;
    for (int i = 0; i < 16; ++i) sumw += ws[i];
    sw[j] = sumw;
  }
  s.affine(16, 16, 3, x, w, L, scales, mins, -0.9f, 0.05f, 36, false);
  uint8_t ls[16], lm[16];
  const float dm = search_positive(16, 15, scales, sw, ls);
  const float mm = search_positive(16, 15, mins, sw, lm);
  store_half(blk + 80, dm);
  store_half(blk + 82, mm);
  for (int j = 0; j < 16; ++j) blk[j] = static_cast<uint8_t>(ls[j] | (lm[j] << 4));
}

}  // namespace

void quantize_row_q2_k(const float *row, void *dst, int64_t cols, const float *importance) {
  uint8_t *blk = static_cast<uint8_t *>(dst);
  uint8_t L[kQK];
  const SearchSet &s = active_searches();
  for (int64_t b = 0; b < cols / kQK; ++b, blk += kQ2KBytes) {
    const float *x = row + b * kQK;
    if (importance) {
      importance_block(s, x, importance + b * kQK, blk, L);
    } else {
      reference_block(s, x, blk, L);
    }
    // Final levels from the stored d, dmin and nibbles; a sub-block whose scale reads as zero
    // keeps the search's levels.
    const float d = load_half(blk + 80);
    const float dmin = load_half(blk + 82);
    for (int j = 0; j < 16; ++j) {
      const float ds = d * static_cast<float>(blk[j] & 0xF);
      if (ds == 0.0f) continue;
      const float dm = dmin * static_cast<float>(blk[j] >> 4);
      for (int i = 0; i < 16; ++i) {
        L[16 * j + i] = static_cast<uint8_t>(clamp_int(nearest_int((x[16 * j + i] + dm) / ds), 0, 3));
      }
    }
    pack_2bit(L, blk + 16);
  }
}

}  // namespace ggml
}  // namespace tblob
