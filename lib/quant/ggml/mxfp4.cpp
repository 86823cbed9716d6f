// MXFP4 (ggml's block: 1 byte E8M0 exponent e + 16 bytes of 4-bit E2M1 codes, element j low
// nibble, j + 16 high; 32 values). ggml's rule (quantize_row_mxfp4_ref; no importance):
// e = floor(log2f(amax)) - 2 + 127 as a byte (0 for an all-zero block), then each value's code
// is the first of the 16 codes whose value k * 2^(e-128) (k: the E2M1 value doubled) is
// nearest to it.
#include <cmath>

#include "dequant/ggml/ggml_blocks.h"
#include "quant/ggml/quant_common.h"
#include "quant/ggml/quant_rows.h"

namespace tblob {
namespace ggml {

using namespace q;

namespace {

constexpr int kQK = 32;

// floorf(log2f(a)) for a finite a > 0, as glibc's correctly rounded log2f gives it: the
// exponent of a, plus one when log2(a) rounds up to the next integer in f32 (a just below a
// power of two). log2 in double is exact enough to decide that rounding.
float floor_log2f(float a) {
  const float l = static_cast<float>(std::log2(static_cast<double>(a)));
  return std::floor(l);
}

inline int best_code(float x, float e) {
  int best = 0;
  float best_err = std::fabs(static_cast<float>(kMxfp4Grid[0]) * e - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(static_cast<float>(kMxfp4Grid[i]) * e - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

}  // namespace

void quantize_row_mxfp4(const float *x, void *dst, int64_t cols, const float * /*importance*/) {
  uint8_t *y = static_cast<uint8_t *>(dst);
  for (int64_t ib = 0; ib < cols / kQK; ++ib, y += 17) {
    const float *xb = x + ib * kQK;
    float amax = 0;
    for (int j = 0; j < kQK; ++j)
      if (amax < std::fabs(xb[j])) amax = std::fabs(xb[j]);
    const uint8_t e = amax > 0.0f ? to_u8(floor_log2f(amax) - 2 + 127) : 0;
    const float d = e8m0_half(e);
    y[0] = e;
    for (int j = 0; j < 16; ++j)
      y[1 + j] = static_cast<uint8_t>(best_code(xb[j], d) | (best_code(xb[16 + j], d) << 4));
  }
}

}  // namespace ggml
}  // namespace tblob
