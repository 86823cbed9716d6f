// SLM1 q8_0 / q4_0 (rules in slm1_quant.h) over a Source: a row (q8_0) or a block (q4_0) at a
// time, two passes over the input (amax, then codes), nothing buffered.
#include "quant/slm1/slm1_quant.h"

#include <cmath>

#include "core/endian.h"
#include "quant/encode.h"
#include "quant/quantize.h"

namespace tblob {
namespace quant {

namespace {

// Round half to even without depending on the rounding mode; |q| is far below 2^23 here.
inline int32_t round_half_even(float q) {
  const float r = std::floor(q);
  const float diff = q - r;  // exact for |q| < 2^23
  int32_t i = static_cast<int32_t>(r);
  if (diff > 0.5f || (diff == 0.5f && (i & 1) != 0)) ++i;
  return i;
}

}  // namespace

float slm1_scale(float amax, float qmax) {
  const float s = amax / qmax;
  return s == 0.0f ? 1.0f : s;
}

int32_t slm1_code(float x, float scale, int32_t qmax) {
  int32_t i = round_half_even(x / scale);
  if (i > qmax) i = qmax;
  if (i < -qmax) i = -qmax;
  return i;
}

void slm1_rows(const QuantDesc &d, const Source &src, uint64_t ub, uint64_t ue, ValueError *err) {
  const bool q8 = d.scheme == QuantScheme::kSlm1Q8;
  const uint64_t cols = d.cols, block = q8 ? cols : d.group_size, nblocks = cols / block;
  const int32_t qmax = q8 ? 127 : 7;
  uint8_t *data = const_cast<uint8_t *>(d.data);
  uint8_t *scales = const_cast<uint8_t *>(d.scales);
  for (uint64_t r = ub; r < ue; ++r) {
    for (uint64_t b = 0; b < nblocks; ++b) {
      const uint64_t c0 = b * block;
      float amax = 0.0f;
      bool ok = true;
      for (uint64_t c = c0; c < c0 + block; ++c) {
        const float v = src.at(r, c);
        if (!finite(v)) {
          ValueError e;
          e.row = r, e.col = c, e.why = "NaN or infinite value";
          err->keep(e);
          ok = false;
          break;
        }
        const float a = std::fabs(v);
        if (a > amax) amax = a;
      }
      const float s = ok ? slm1_scale(amax, static_cast<float>(qmax)) : 1.0f;
      store_le_f32(scales + 4 * (r * nblocks + b), s);
      if (q8) {
        for (uint64_t c = c0; c < c0 + block; ++c)
          data[r * cols + c] = ok ? static_cast<uint8_t>(slm1_code(src.at(r, c), s, qmax) & 0xff) : 0;
      } else {
        for (uint64_t c = c0; c < c0 + block; c += 2) {  // blocks are even: pairs stay inside
          const uint32_t lo = ok ? static_cast<uint32_t>(slm1_code(src.at(r, c), s, qmax)) & 0xFu : 0;
          const uint32_t hi = ok ? static_cast<uint32_t>(slm1_code(src.at(r, c + 1), s, qmax)) & 0xFu : 0;
          data[r * (cols / 2) + c / 2] = static_cast<uint8_t>(lo | (hi << 4));
        }
      }
    }
  }
}

}  // namespace quant
}  // namespace tblob
