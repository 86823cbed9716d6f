// Q4_K and Q5_K: 256 values in eight sub-blocks of 32, each with levels 0..15 (Q4_K) or 0..31
// (Q5_K), a 6-bit scale and a 6-bit min, both multiplied by the block's f16 d and dmin
// (value = d*sc*q - dmin*m). The two types differ only in the level width and the packing of
// the levels. Layout: d, dmin (f16), 12 bytes of scales/mins, then Q5_K's 32 high-bit bytes,
// then the low 4 bits.
#include <cmath>

#include "quant/ggml/kquant_batch.h"
#include "quant/ggml/kquant_search.h"
#include "quant/ggml/kquants.h"

namespace tblob {
namespace ggml {

using namespace q;

namespace {

constexpr int kSub = 32;              // values per sub-block
constexpr int kNSub = kQK / kSub;     // sub-blocks per block

// Writes the eight 6-bit scale/min pairs into the 12 scale bytes: pairs 0-3 whole bytes
// (scale at j, min at j+4), pairs 4-7 as low nibbles in bytes 8-11 and high two bits in the
// top bits of bytes 0-7. Levels arrive as bytes and are not masked: an out-of-range level
// (a wrapped negative one from the importance search) spills into the bits ggml's would.
void pack_scales(const uint8_t *ls, const uint8_t *lm, uint8_t *sc) {
  for (int j = 0; j < kNSub; ++j) {
    if (j < 4) {
      sc[j] = ls[j];
      sc[j + 4] = lm[j];
    } else {
      sc[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
      sc[j - 4] = static_cast<uint8_t>(sc[j - 4] | ((ls[j] >> 4) << 6));
      sc[j] = static_cast<uint8_t>(sc[j] | ((lm[j] >> 4) << 6));
    }
  }
}

void unpack_scale(const uint8_t *sc, int j, int *s, int *m) {
  if (j < 4) {
    *s = sc[j] & 63;
    *m = sc[j + 4] & 63;
  } else {
    *s = (sc[j + 4] & 0xF) | ((sc[j - 4] >> 6) << 4);
    *m = (sc[j + 4] >> 4) | ((sc[j] >> 6) << 4);
  }
}

// Final levels from the stored (rounded) d, dmin and 6-bit pairs; a sub-block whose scale
// reads as zero keeps the search's levels.
void requantize(const float *x, const uint8_t *blk, int nmax, uint8_t *L) {
  const float d = load_half(blk);
  const float dmin = load_half(blk + 2);
  for (int j = 0; j < kNSub; ++j) {
    int s, m;
    unpack_scale(blk + 4, j, &s, &m);
    const float ds = d * static_cast<float>(s);
    if (ds == 0.0f) continue;
    const float dm = dmin * static_cast<float>(m);
    for (int i = 0; i < kSub; ++i) {
      L[kSub * j + i] = static_cast<uint8_t>(clamp_int(nearest_int((x[kSub * j + i] + dm) / ds), 0, nmax));
    }
  }
}

void pack_q4(const uint8_t *L, uint8_t *qs) {
  for (int k = 0; k < kQK / 64; ++k) {
    for (int i = 0; i < 32; ++i) qs[32 * k + i] = static_cast<uint8_t>(L[64 * k + i] | (L[64 * k + i + 32] << 4));
  }
}

// Low nibbles as Q4_K; bit 2k (2k+1) of qh[i] is the fifth bit of value 64k+i (64k+32+i).
// Levels are 0..31, so ggml's "if (l > 15) { set the bit; l -= 16; }" is bit 4 and l & 15.
void pack_q5(const uint8_t *L, uint8_t *qh_out, uint8_t *qs) {
  uint8_t qh[32] = {};
  for (int k = 0; k < kQK / 64; ++k) {
    for (int i = 0; i < 32; ++i) {
      const int lo = L[64 * k + i], hi = L[64 * k + i + 32];
      qh[i] = static_cast<uint8_t>(qh[i] | (((lo >> 4) & 1) << (2 * k)) | (((hi >> 4) & 1) << (2 * k + 1)));
      qs[32 * k + i] = static_cast<uint8_t>((lo & 15) | ((hi & 15) << 4));
    }
  }
  std::memcpy(qh_out, qh, 32);
}

// ggml's reference path: per sub-block weights sqrt(mean x^2) + |x|, the affine search, then
// scales and mins as 6-bit fractions of the largest of each.
void reference_block(const SearchSet &s, const float *x, int nmax, float rmin, float rdelta, int nstep, uint8_t *blk,
                     uint8_t *L) {
  float scales[kNSub], mins[kNSub], w[kQK];
  for (int j = 0; j < kNSub; ++j) {
    const float *xs = x + kSub * j;
    float sum_x2 = 0.0f;
    for (int i = 0; i < kSub; ++i) sum_x2 += xs[i] * xs[i];
    const float av_x = std::sqrt(sum_x2 / 32.0f);
    for (int i = 0; i < kSub; ++i) w[kSub * j + i] = av_x + std::fabs(xs[i]);
  }
  s.affine(kNSub, kSub, nmax, x, w, L, scales, mins, rmin, rdelta, nstep, false);
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < kNSub; ++j) {
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  uint8_t ls[kNSub], lm[kNSub];
  for (int j = 0; j < kNSub; ++j) {
    const uint8_t s = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
    const uint8_t m = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
    ls[j] = s < 63 ? s : 63;
    lm[j] = m < 63 ? m : 63;
  }
  pack_scales(ls, lm, blk + 4);
  store_half(blk, max_scale / 63.0f);
  store_half(blk + 2, max_min / 63.0f);
}

// ggml's importance path: weights qw * sqrt(sigma2 + x^2) with sigma2 = 2 * mean x^2 over the
// block, the longer affine search, then the sub-block scales and mins themselves fitted to
// 6-bit levels weighted by each sub-block's total weight.
void importance_block(const SearchSet &s, const float *x, const float *qw, int nmax, bool clamp_levels, uint8_t *blk,
                      uint8_t *L) {
  float sum_x2 = 0.0f;
  for (int i = 0; i < kQK; ++i) sum_x2 += x[i] * x[i];
  const float sigma2 = 2.0f * sum_x2 / 256.0f;
  float scales[kNSub], mins[kNSub], sw[kNSub], w[kQK];
  for (int j = 0; j < kNSub; ++j) {
    const float *xs = x + kSub * j;
    float *ws = w + kSub * j;
    for (int i = 0; i < kSub; ++i) ws[i] = qw[kSub * j + i] * std::sqrt(sigma2 + xs[i] * xs[i]);
    float sumw = 0.0f;
    for (int i = 0; i < kSub; ++i) sumw += ws[i];
    sw[j] = sumw;
  }
  s.affine(kNSub, kSub, nmax, x, w, L, scales, mins, -0.9f, 0.05f, 36, false);
  uint8_t ls[kNSub], lm[kNSub];
  const float d_block = search_positive(kNSub, 63, scales, sw, ls);
  const float m_block = search_positive(kNSub, 63, mins, sw, lm);
  if (clamp_levels) {  // Q5_K clamps the (possibly wrapped) levels to 63; Q4_K does not
    for (int j = 0; j < kNSub; ++j) {
      if (ls[j] > 63) ls[j] = 63;
      if (lm[j] > 63) lm[j] = 63;
    }
  }
  pack_scales(ls, lm, blk + 4);
  store_half(blk, d_block);
  store_half(blk + 2, m_block);
}

}  // namespace

void quantize_row_q4_k(const float *row, void *dst, int64_t cols, const float *importance) {
  uint8_t *blk = static_cast<uint8_t *>(dst);
  uint8_t L[kQK];
  const SearchSet &s = active_searches();
  for (int64_t b = 0; b < cols / kQK; ++b, blk += kQ4KBytes) {
    const float *x = row + b * kQK;
    if (importance) {
      importance_block(s, x, importance + b * kQK, 15, false, blk, L);
    } else {
      reference_block(s, x, 15, -1.0f, 0.1f, 20, blk, L);
    }
    requantize(x, blk, 15, L);
    pack_q4(L, blk + 16);
  }
}

void quantize_row_q5_k(const float *row, void *dst, int64_t cols, const float *importance) {
  uint8_t *blk = static_cast<uint8_t *>(dst);
  uint8_t L[kQK];
  const SearchSet &s = active_searches();
  for (int64_t b = 0; b < cols / kQK; ++b, blk += kQ5KBytes) {
    const float *x = row + b * kQK;
    if (importance) {
      importance_block(s, x, importance + b * kQK, 31, true, blk, L);
    } else {
      reference_block(s, x, 31, -0.5f, 0.1f, 15, blk, L);
    }
    requantize(x, blk, 31, L);
    pack_q5(L, blk + 16, blk + 48);
  }
}

}  // namespace ggml
}  // namespace tblob
