// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0: ggml's first block formats (32 values a block), quantized by
// ggml's rules (quantize_row_<type>_ref without importance, quantize_row_<type>_impl with it;
// Q8_0 takes none). Layouts (ggml-common.h): Q4_0 f16 d + 16 bytes of nibbles (element j low,
// j + 16 high); Q4_1 f16 d, f16 m, nibbles; Q5_0 f16 d, u32 qh (the fifth bits), nibbles;
// Q5_1 f16 d, f16 m, u32 qh, nibbles; Q8_0 f16 d + 32 int8.
#include <cfloat>
#include <cmath>

#include "quant/ggml/quant_common.h"
#include "quant/ggml/quant_rows.h"

namespace tblob {
namespace ggml {

using namespace q;

namespace {

constexpr int kQK = 32;

// The row's mean square as ggml's _impl functions compute it (one running f32 sum in order).
float row_sigma2(const float *x, int64_t n) {
  float sum_x2 = 0;
  for (int64_t j = 0; j < n; ++j) sum_x2 += x[j] * x[j];
  return sum_x2 / static_cast<float>(n);
}

// weight[j] = qw[j] * sqrt(sigma2 + x[j]^2): the importance of each element of a block.
void block_weights(const float *xb, const float *qw, float sigma2, float *weight) {
  for (int j = 0; j < kQK; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
}

// The value of largest magnitude (the first of equal magnitudes), as the symmetric types use.
float signed_absmax(const float *xb) {
  float amax = 0, max = 0;
  for (int j = 0; j < kQK; ++j) {
    const float v = xb[j];
    if (amax < std::fabs(v)) {
      amax = std::fabs(v);
      max = v;
    }
  }
  return max;
}

void pack_nibbles(const uint8_t *L, uint8_t *qs) {
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(L[j] | (L[j + 16] << 4));
}

// Low nibbles into qs, the fifth bits into the little-endian u32 at qh.
void pack_five(const uint8_t *L, uint8_t *qh, uint8_t *qs) {
  uint32_t h = 0;
  for (int j = 0; j < 16; ++j) {
    const uint8_t a = L[j], b = L[j + 16];
    qs[j] = static_cast<uint8_t>((a & 0x0F) | ((b & 0x0F) << 4));
    h |= ((a & 0x10u) >> 4) << j;
    h |= ((b & 0x10u) >> 4) << (j + 16);
  }
  store_le32(qh, h);
}

// Symmetric 4/5-bit codes without importance: d = max / -(2^(bits-1)), code = trunc(x/d +
// offset + 0.5) capped at 2^bits - 1 (ggml's int8 truncation, low byte kept).
void symmetric_ref(const float *xb, int half, float *d_out, uint8_t *L) {
  const float max = signed_absmax(xb);
  const float d = max / static_cast<float>(-half);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const float offset = static_cast<float>(half) + 0.5f;
  const int top = 2 * half - 1;
  for (int j = 0; j < kQK; ++j) {
    const int v = to_i8(xb[j] * id + offset);
    L[j] = static_cast<uint8_t>(v < top ? v : top);
  }
  *d_out = d;
}

// Min/max 4/5-bit codes without importance: d = (max - min) / (2^bits - 1), m = min.
// Q4_1 caps the code at 15 after an int8 cast, Q5_1 casts to uint8 without a cap (as ggml).
void affine_ref(const float *xb, int nmax, bool cap, float *d_out, float *m_out, uint8_t *L) {
  float min = FLT_MAX, max = -FLT_MAX;
  for (int j = 0; j < kQK; ++j) {
    const float v = xb[j];
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const float d = (max - min) / static_cast<float>(nmax);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < kQK; ++j) {
    const float v = (xb[j] - min) * id + 0.5f;
    if (cap) {
      const int c = to_i8(v);
      L[j] = static_cast<uint8_t>(c < nmax ? c : nmax);
    } else {
      L[j] = to_u8(v);
    }
  }
  *d_out = d;
  *m_out = min;
}

// Symmetric with importance (make_qx_quants over the block, rmse_type 1).
float symmetric_weighted(const float *xb, const float *qw, float sigma2, int half, uint8_t *L) {
  float weight[kQK];
  int8_t Ls[kQK];
  block_weights(xb, qw, sigma2, weight);
  const float d = make_qx_quants(kQK, half, xb, Ls, 1, weight);
  for (int j = 0; j < kQK; ++j) L[j] = static_cast<uint8_t>(Ls[j]);
  return d;
}

// Min/max with importance (make_qkx3_quants, ggml's constants -0.9, 0.05, 36 steps).
float affine_weighted(const float *xb, const float *qw, float sigma2, int nmax, float *m_out, uint8_t *L) {
  float weight[kQK];
  uint8_t aux[kQK];
  block_weights(xb, qw, sigma2, weight);
  float the_min;
  const float d = make_qkx3_quants(kQK, nmax, xb, weight, L, &the_min, aux, -0.9f, 0.05f, 36, false);
  *m_out = -the_min;
  return d;
}

}  // namespace

void quantize_row_q4_0(const float *x, void *dst, int64_t cols, const float *importance) {
  uint8_t *y = static_cast<uint8_t *>(dst);
  const float sigma2 = importance ? row_sigma2(x, cols) : 0.0f;
  for (int64_t ib = 0; ib < cols / kQK; ++ib, y += 18) {
    const float *xb = x + ib * kQK;
    uint8_t L[kQK];
    float d;
    if (importance)
      d = symmetric_weighted(xb, importance + ib * kQK, sigma2, 8, L);
    else
      symmetric_ref(xb, 8, &d, L);
    store_fp16(y, d);
    pack_nibbles(L, y + 2);
  }
}

void quantize_row_q5_0(const float *x, void *dst, int64_t cols, const float *importance) {
  uint8_t *y = static_cast<uint8_t *>(dst);
  const float sigma2 = importance ? row_sigma2(x, cols) : 0.0f;
  for (int64_t ib = 0; ib < cols / kQK; ++ib, y += 22) {
    const float *xb = x + ib * kQK;
    uint8_t L[kQK];
    float d;
    if (importance)
      d = symmetric_weighted(xb, importance + ib * kQK, sigma2, 16, L);
    else
      symmetric_ref(xb, 16, &d, L);
    store_fp16(y, d);
    pack_five(L, y + 2, y + 6);
  }
}

void quantize_row_q4_1(const float *x, void *dst, int64_t cols, const float *importance) {
  uint8_t *y = static_cast<uint8_t *>(dst);
  const float sigma2 = importance ? row_sigma2(x, cols) : 0.0f;
  for (int64_t ib = 0; ib < cols / kQK; ++ib, y += 20) {
    const float *xb = x + ib * kQK;
    uint8_t L[kQK];
    float d, m;
    if (importance)
      d = affine_weighted(xb, importance + ib * kQK, sigma2, 15, &m, L);
    else
      affine_ref(xb, 15, true, &d, &m, L);
    store_fp16(y, d);
    store_fp16(y + 2, m);
    pack_nibbles(L, y + 4);
  }
}

void quantize_row_q5_1(const float *x, void *dst, int64_t cols, const float *importance) {
  uint8_t *y = static_cast<uint8_t *>(dst);
  const float sigma2 = importance ? row_sigma2(x, cols) : 0.0f;
  for (int64_t ib = 0; ib < cols / kQK; ++ib, y += 24) {
    const float *xb = x + ib * kQK;
    uint8_t L[kQK];
    float d, m;
    if (importance)
      d = affine_weighted(xb, importance + ib * kQK, sigma2, 31, &m, L);
    else
      affine_ref(xb, 31, false, &d, &m, L);
    store_fp16(y, d);
    store_fp16(y + 2, m);
    pack_five(L, y + 4, y + 8);
  }
}

// Q8_0 (no importance in ggml): d = amax / 127, code = roundf(x / d) (half away from zero).
void quantize_row_q8_0(const float *x, void *dst, int64_t cols, const float * /*importance*/) {
  uint8_t *y = static_cast<uint8_t *>(dst);
  for (int64_t ib = 0; ib < cols / kQK; ++ib, y += 34) {
    const float *xb = x + ib * kQK;
    float amax = 0;
    for (int j = 0; j < kQK; ++j) {
      const float a = std::fabs(xb[j]);
      amax = amax > a ? amax : a;
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_fp16(y, d);
    for (int j = 0; j < kQK; ++j) y[2 + j] = static_cast<uint8_t>(to_i8(std::round(xb[j] * id)));
  }
}

}  // namespace ggml
}  // namespace tblob
