// Q3_K: 256 values in sixteen sub-blocks of 16 with symmetric levels -4..3, a 6-bit signed
// scale per sub-block (stored +32) and an f16 d (value = d*(sc-32)*q). Layout: 32 bytes of
// high bits (bit k of byte i: value 32k+i), 64 bytes of low 2 bits, 12 bytes of scales (low
// nibbles in bytes 0-7, high 2 bits in bytes 8-11), d.
#include <cmath>

#include "quant/ggml/kquant_batch.h"
#include "quant/ggml/kquant_search.h"
#include "quant/ggml/kquants.h"

namespace tblob {
namespace ggml {

using namespace q;

namespace {

// Scale j (0..63) into the 12 scale bytes, which start zeroed.
void put_scale(uint8_t *sc, int j, int l) {
  if (j < 8) {
    sc[j] = static_cast<uint8_t>(l & 0xF);
  } else {
    sc[j - 8] = static_cast<uint8_t>(sc[j - 8] | ((l & 0xF) << 4));
  }
  sc[8 + j % 4] = static_cast<uint8_t>(sc[8 + j % 4] | ((l >> 4) << (2 * (j / 4))));
}

int get_scale(const uint8_t *sc, int j) {
  const int lo = j < 8 ? sc[j] & 0xF : sc[j - 8] >> 4;
  return (lo | (((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
}

// Final levels from the stored d and scales, then the high-bit mask and the 2-bit field. A
// sub-block whose scale reads as zero keeps the search's levels (L holds level + 4).
void finish(const float *x, uint8_t *blk, int8_t *L) {
  const float d = load_half(blk + 108);
  for (int j = 0; j < 16; ++j) {
    const float ds = d * static_cast<float>(get_scale(blk + 96, j));
    if (ds == 0.0f) continue;
    for (int i = 0; i < 16; ++i) {
      L[16 * j + i] = static_cast<int8_t>(clamp_int(nearest_int(x[16 * j + i] / ds), -4, 3) + 4);
    }
  }
  // Levels are 0..7: bit 2 goes to the mask (bit k of byte i for value 32k+i), bits 0-1 to
  // the 2-bit field (ggml's "if (L > 3) { set the bit; L -= 4; }", without the branch).
  uint8_t hmask[32] = {};
  uint8_t low[kQK];
  for (int k = 0; k < 8; ++k) {
    for (int i = 0; i < 32; ++i) {
      const int l = L[32 * k + i];
      hmask[i] = static_cast<uint8_t>(hmask[i] | (((l >> 2) & 1) << k));
      low[32 * k + i] = static_cast<uint8_t>(l & 3);
    }
  }
  std::memcpy(blk, hmask, 32);
  pack_2bit(low, blk + 32);
}

// Reference path: the x^2-weighted single-level search per sub-block, then scales as signed
// 6-bit fractions of the one of largest magnitude (the int8 rounding wraps before the clamp,
// as ggml's does).
void reference_block(const SearchSet &s, const float *x, uint8_t *blk, int8_t *L) {
  float scales[16];
  s.q3_rmse(x, L, scales);
  float max_scale = 0.0f, amax = 0.0f;
  for (int j = 0; j < 16; ++j) {
    const float a = std::fabs(scales[j]);
    if (a > amax) {
      amax = a;
      max_scale = scales[j];
    }
  }
  uint8_t *sc = blk + 96;
  std::memset(sc, 0, 12);
  if (max_scale != 0.0f) {
    const float iscale = -32.0f / max_scale;
    for (int j = 0; j < 16; ++j) {
      const int8_t l8 = static_cast<int8_t>(nearest_int(iscale * scales[j]));
      put_scale(sc, j, clamp_int(l8, -32, 31) + 32);
    }
    store_half(blk + 108, 1.0f / iscale);
  } else {
    store_half(blk + 108, 0.0f);
  }
}

// Importance path: weights qw * sqrt(sigma2 + x^2) (sigma2 = 2 * mean x^2 over the block), the
// weighted symmetric search per sub-block, then the sixteen scales themselves fitted to
// levels -32..31 by the same search, weighted by each sub-block's total weight.
void importance_block(const SearchSet &s, const float *x, const float *qw, uint8_t *blk, int8_t *L) {
  float sumx2 = 0.0f;
  for (int i = 0; i < kQK; ++i) sumx2 += x[i] * x[i];
  const float sigma2 = 2.0f * sumx2 / 256.0f;
  float scales[16], sw[16], w[kQK];
  for (int j = 0; j < 16; ++j) {
    const float *xs = x + 16 * j;
    float *ws = w + 16 * j;
    for (int i = 0; i < 16; ++i) ws[i] = qw[16 * j + i] * std::sqrt(sigma2 + xs[i] * xs[i]);
    float sumw = 0.0f;
    for (int i = 0; i < 16; ++i) sumw += ws[i];
    sw[j] = sumw;
  }
  s.symmetric(16, 16, 4, x, w, L, scales);
  uint8_t *sc = blk + 96;
  std::memset(sc, 0, 12);
  int8_t Ls[16];
  const float d_block = make_qx_quants(16, 32, scales, Ls, 1, sw);
  for (int j = 0; j < 16; ++j) put_scale(sc, j, Ls[j]);
  store_half(blk + 108, d_block);
}

}  // namespace

void quantize_row_q3_k(const float *row, void *dst, int64_t cols, const float *importance) {
  uint8_t *blk = static_cast<uint8_t *>(dst);
  int8_t L[kQK];
  const SearchSet &s = active_searches();
  for (int64_t b = 0; b < cols / kQK; ++b, blk += kQ3KBytes) {
    const float *x = row + b * kQK;
    if (importance) {
      importance_block(s, x, importance + b * kQK, blk, L);
    } else {
      reference_block(s, x, blk, L);
    }
    finish(x, blk, L);
  }
}

}  // namespace ggml
}  // namespace tblob
