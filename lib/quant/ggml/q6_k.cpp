// Q6_K: 256 values in sixteen sub-blocks of 16 with symmetric levels -32..31, an int8 scale
// per sub-block and an f16 d (value = d*sc*q). Layout: 128 bytes of low nibbles, 64 bytes of
// high two bits, 16 scales, d. The importance path differs from the reference one only in the
// search's weights: the importance values themselves instead of x^2.
#include <cmath>

#include "quant/ggml/kquant_batch.h"
#include "quant/ggml/kquant_search.h"
#include "quant/ggml/kquants.h"

namespace tblob {
namespace ggml {

using namespace q;

namespace {

void pack_q6(const int8_t *L, uint8_t *ql, uint8_t *qh) {
  for (int k = 0; k < 2; ++k) {
    const int8_t *l = L + 128 * k;
    for (int i = 0; i < 32; ++i) {
      const int a = l[i], b = l[i + 32], c = l[i + 64], e = l[i + 96];
      ql[64 * k + i] = static_cast<uint8_t>((a & 0xF) | ((c & 0xF) << 4));
      ql[64 * k + i + 32] = static_cast<uint8_t>((b & 0xF) | ((e & 0xF) << 4));
      qh[32 * k + i] = static_cast<uint8_t>((a >> 4) | ((b >> 4) << 2) | ((c >> 4) << 4) | ((e >> 4) << 6));
    }
  }
}

}  // namespace

void quantize_row_q6_k(const float *row, void *dst, int64_t cols, const float *importance) {
  uint8_t *blk = static_cast<uint8_t *>(dst);
  int8_t L[kQK];
  float scales[16];
  const SearchSet &s = active_searches();
  for (int64_t b = 0; b < cols / kQK; ++b, blk += kQ6KBytes) {
    const float *x = row + b * kQK;
    const float *qw = importance ? importance + b * kQK : nullptr;
    s.symmetric(16, 16, 32, x, qw, L, scales);
    float max_scale = 0.0f, max_abs_scale = 0.0f;
    for (int j = 0; j < 16; ++j) {
      const float a = std::fabs(scales[j]);
      if (a > max_abs_scale) {
        max_abs_scale = a;
        max_scale = scales[j];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {  // all sub-blocks zero: an all-zero block
      std::memset(blk, 0, kQ6KBytes);
      continue;
    }
    const float iscale = -128.0f / max_scale;
    const float d = store_half(blk + 208, 1.0f / iscale);
    int8_t *sc = reinterpret_cast<int8_t *>(blk + 192);
    for (int j = 0; j < 16; ++j) {
      const int l = nearest_int(iscale * scales[j]);
      sc[j] = static_cast<int8_t>(l < 127 ? l : 127);
    }
    for (int j = 0; j < 16; ++j) {
      const float ds = d * static_cast<float>(sc[j]);
      if (ds == 0.0f) continue;
      for (int i = 0; i < 16; ++i) {
        L[16 * j + i] = static_cast<int8_t>(clamp_int(nearest_int(x[16 * j + i] / ds), -32, 31) + 32);
      }
    }
    pack_q6(L, blk, blk + 128);
  }
}

}  // namespace ggml
}  // namespace tblob
