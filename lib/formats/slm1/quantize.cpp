#include "formats/slm1/quantize.h"

#include <cmath>
#include <cstring>

#include "formats/slm1/format.h"

namespace tblob {
namespace slm1 {

namespace {

inline float load(const float *x, uint64_t i) {
  float v;
  std::memcpy(&v, x + i, sizeof(v));
  return v;
}

// Round half to even without depending on the rounding mode; |q| is small here (the
// quotient of values bounded by amax and amax/QMAX), far below 2^23.
inline int32_t round_half_even(float q) {
  const float r = std::floor(q);
  const float diff = q - r;  // exact for |q| < 2^23
  int32_t i = static_cast<int32_t>(r);
  if (diff > 0.5f || (diff == 0.5f && (i & 1) != 0)) ++i;
  return i;
}

float group_amax(const float *x, uint64_t begin, uint64_t n) {
  float amax = 0.0f;
  for (uint64_t k = 0; k < n; ++k) {
    const float a = std::fabs(load(x, begin + k));
    if (a > amax) amax = a;
  }
  return amax;
}

}  // namespace

float quant_scale(float amax, float qmax) {
  const float s = amax / qmax;
  return s == 0.0f ? 1.0f : s;
}

int32_t quant_code(float x, float scale, int32_t qmax) {
  const float q = x / scale;
  int32_t i = round_half_even(q);
  if (i > qmax) i = qmax;
  if (i < -qmax) i = -qmax;
  return i;
}

uint64_t first_non_finite(const float *x, uint64_t n) {
  for (uint64_t k = 0; k < n; ++k)
    if (!std::isfinite(load(x, k))) return k;
  return n;
}

void encode_q8_0(const float *x, uint64_t rows, uint64_t cols, uint8_t *payload, uint8_t *scales) {
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t base = r * cols;
    const float scale = quant_scale(group_amax(x, base, cols), 127.0f);
    store_le_f32(scales + 4 * r, scale);
    for (uint64_t c = 0; c < cols; ++c)
      payload[base + c] = static_cast<uint8_t>(quant_code(load(x, base + c), scale, 127) & 0xff);
  }
}

void encode_q4_0(const float *x, uint64_t rows, uint64_t cols, uint32_t block, uint8_t *payload,
                 uint8_t *scales) {
  const uint64_t blocks = cols / block;
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t b = 0; b < blocks; ++b) {
      const uint64_t base = r * cols + b * block;
      const float scale = quant_scale(group_amax(x, base, block), 7.0f);
      store_le_f32(scales + 4 * (r * blocks + b), scale);
      // block is even and base is even, so pairs never straddle blocks.
      for (uint64_t c = 0; c < block; c += 2) {
        const uint32_t lo = static_cast<uint32_t>(quant_code(load(x, base + c), scale, 7)) & 0xfu;
        const uint32_t hi = static_cast<uint32_t>(quant_code(load(x, base + c + 1), scale, 7)) & 0xfu;
        payload[(base + c) / 2] = static_cast<uint8_t>(lo | (hi << 4));
      }
    }
  }
}

}  // namespace slm1
}  // namespace tblob
