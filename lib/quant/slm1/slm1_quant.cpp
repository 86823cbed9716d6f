// SLM1 q8_0 / q4_0 (rules in slm1_quant.h) over a Source: a row (q8_0) or a block (q4_0) at a
// time, two passes over the input (amax, then codes), nothing buffered.
#include "quant/slm1/slm1_quant.h"

#include <cmath>

#include "core/endian.h"
#include "quant/encode.h"
#include "quant/quantize.h"

namespace tblob {
namespace quant {

float slm1_scale(float amax, float qmax) {
  const float s = amax / qmax;
  return s == 0.0f ? 1.0f : s;
}

int32_t slm1_code(float x, float scale, int32_t qmax) {
  // |x / scale| <= qmax (up to rounding) for finite inputs: far inside int32.
  int32_t i = static_cast<int32_t>(rint_even(x / scale));
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
      float x[256];
      for (uint64_t c = c0; ok && c < c0 + block; c += 256) {  // a row (q8_0) in bounded pieces
        const uint32_t n = static_cast<uint32_t>(c0 + block - c < 256 ? c0 + block - c : 256);
        src.span(r, c, n, x);
        for (uint32_t j = 0; j < n; ++j) {
          if (!finite(x[j])) {
            ValueError e;
            e.row = r, e.col = c + j, e.why = kNonFinite;
            err->keep(e);
            ok = false;
            break;
          }
          const float a = std::fabs(x[j]);
          if (a > amax) amax = a;
        }
      }
      const float s = ok ? slm1_scale(amax, static_cast<float>(qmax)) : 1.0f;
      store_le_f32(scales + 4 * (r * nblocks + b), s);
      if (q8) {
        for (uint64_t c = c0; c < c0 + block; c += 256) {
          const uint32_t n = static_cast<uint32_t>(c0 + block - c < 256 ? c0 + block - c : 256);
          if (ok) src.span(r, c, n, x);
          for (uint32_t j = 0; j < n; ++j)
            data[r * cols + c + j] = ok ? static_cast<uint8_t>(slm1_code(x[j], s, qmax) & 0xff) : 0;
        }
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
