// IQ4_NL: 32 values a block, f16 d + 16 bytes of 4-bit indices into ggml's non-linear grid
// (kvalues_iq4nl, lib/dequant/ggml/ggml_blocks.h kIq4Grid). ggml's quantize_iq4_nl rule for one
// block (quantize_row_iq4_nl_impl with one sub-block and ntry 7): weights x^2, or with
// importance qw * sqrt(sigma2 + x^2) where sigma2 = 2 * mean(x^2) over the block; a first
// scale max / 127 and its least-squares refit, then 15 candidate inverse scales
// (itry - 127) / max, keeping the refit with the best weighted error; the indices are then
// taken again from the chosen scale.
#include <cmath>
#include <cstring>

#include "dequant/ggml/ggml_blocks.h"
#include "quant/ggml/quant_common.h"
#include "quant/ggml/quant_rows.h"

namespace tblob {
namespace ggml {

using namespace q;

namespace {

constexpr int kQK = 32;
constexpr int kTry = 7;

void iq4_nl_block(const float *x, const float *qw, uint8_t *y) {
  const int8_t *values = kIq4Grid;
  float sigma2 = 0;
  for (int j = 0; j < kQK; ++j) sigma2 += x[j] * x[j];
  sigma2 *= 2.0f / static_cast<float>(kQK);

  float weight[kQK];
  uint8_t L[kQK];
  if (qw) {
    for (int j = 0; j < kQK; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + x[j] * x[j]);
  } else {
    for (int j = 0; j < kQK; ++j) weight[j] = x[j] * x[j];
  }
  float amax = 0, max = 0;
  for (int j = 0; j < kQK; ++j) {
    const float ax = std::fabs(x[j]);
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  const float v0 = static_cast<float>(values[0]);
  float scale = 0;
  if (!(amax < kGroupMaxEps)) {
    float d = -max / v0;
    float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < kQK; ++j) {
      const float al = id * x[j];
      const int l = best_index_int8(16, values, al);
      const float qv = static_cast<float>(values[l]);
      const float w = weight[j];
      sumqx += w * qv * x[j];
      sumq2 += w * qv * qv;
    }
    d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
    float best = d * sumqx;
    for (int itry = -kTry; itry <= kTry; ++itry) {
      id = static_cast<float>(itry + values[0]) / max;
      sumqx = sumq2 = 0;
      for (int j = 0; j < kQK; ++j) {
        const float al = id * x[j];
        const int l = best_index_int8(16, values, al);
        const float qv = static_cast<float>(values[l]);
        const float w = weight[j];
        sumqx += w * qv * x[j];
        sumq2 += w * qv * qv;
      }
      if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
        d = sumqx / sumq2;
        best = d * sumqx;
      }
    }
    scale = d;
  }
  store_fp16(y, scale);
  // With one sub-block ggml re-derives every index from the final scale (0 for an all-zero
  // block, whose indices are then those of 0 * x).
  const float id = scale != 0.0f ? 1 / scale : 0.0f;
  for (int j = 0; j < kQK; ++j) L[j] = static_cast<uint8_t>(best_index_int8(16, values, id * x[j]));
  for (int j = 0; j < 16; ++j) y[2 + j] = static_cast<uint8_t>(L[j] | (L[16 + j] << 4));
}

}  // namespace

void quantize_row_iq4_nl(const float *x, void *dst, int64_t cols, const float *importance) {
  uint8_t *y = static_cast<uint8_t *>(dst);
  for (int64_t ib = 0; ib < cols / kQK; ++ib)
    iq4_nl_block(x + ib * kQK, importance ? importance + ib * kQK : nullptr, y + ib * 18);
}

}  // namespace ggml
}  // namespace tblob
