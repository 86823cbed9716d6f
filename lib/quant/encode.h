// Encoders shared by the quantizers: rounding an f32 to a scale dtype, storing it, and
// f32 -> E4M3 as MLX's CPU to_fp8 does it. Integer bit operations only.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/endian.h"
#include "dequant/convert.h"
#include "tensorblob.h"

namespace tblob {
namespace quant {

// Rounds x to nearest even in dtype DT (F32: x), returned as f32.
inline float round_dt(uint32_t dt, float x) {
  if (dt == TBLOB_DTYPE_F16) return dq::round_to_f16(x);
  if (dt == TBLOB_DTYPE_BF16) return dq::round_to_bf16(x);
  return x;
}

// Stores v (already representable in dt) as element i of a little-endian F32/F16/BF16 array.
inline void store_dt(uint32_t dt, uint8_t *base, uint64_t i, float v) {
  const uint32_t b = dq::f32_bits(v);
  if (dt == TBLOB_DTYPE_F32) {
    const uint8_t le[4] = {static_cast<uint8_t>(b), static_cast<uint8_t>(b >> 8),
                           static_cast<uint8_t>(b >> 16), static_cast<uint8_t>(b >> 24)};
    std::memcpy(base + i * 4, le, 4);
    return;
  }
  const uint16_t h = dt == TBLOB_DTYPE_F16 ? dq::f32_to_f16(b) : dq::f32_to_bf16(b);
  const uint8_t le[2] = {static_cast<uint8_t>(h), static_cast<uint8_t>(h >> 8)};
  std::memcpy(base + i * 2, le, 2);
}

// f32 (finite or infinite; never NaN here) -> E4M3 byte, round to nearest even, |x| >= 448
// saturating to 0x7E (MLX's to_fp8; it never emits 0x7F). Subnormal E4M3 (below 2^-6) are
// multiples of 2^-9; f32 subnormals round to zero. The sign is kept (-0.0 -> 0x80).
inline uint8_t e4m3_from_f32(float x) {
  const uint32_t b = dq::f32_bits(x);
  const uint8_t sign = static_cast<uint8_t>((b >> 24) & 0x80u);
  const uint32_t a = b & 0x7FFFFFFFu;
  if (a >= 0x43E00000u) return sign | 0x7Eu;  // >= 448
  const uint32_t e = a >> 23;
  if (e < 121u) {  // below 2^-6: n = round(|x| / 2^-9), 0..8 (8 is the smallest normal)
    if (e == 0) return sign;
    const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;  // |x| = m * 2^(e - 150)
    const uint32_t shift = 141u - e;                 // >= 21
    if (shift >= 32u) return sign;
    uint32_t n = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (n & 1u))) ++n;
    return static_cast<uint8_t>(sign | n);
  }
  // Normal: drop 20 mantissa bits to nearest even, rebias 127 -> 7 (a carry moves the exponent).
  const uint32_t r = (a + 0x7FFFFu + ((a >> 20) & 1u)) >> 20;
  return static_cast<uint8_t>(sign | (r - (120u << 3)));
}

}  // namespace quant
}  // namespace tblob
