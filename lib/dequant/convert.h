// Bit-exact conversions between f32, f16 (IEEE binary16) and bf16 (bfloat16), done on the
// bits with integer operations only, so the result never depends on the FPU mode, the compiler
// or the ISA. Every SIMD kernel must reproduce these functions exactly.
//
//  - Narrowing (f32 -> f16 / bf16) rounds to nearest, ties to even. Overflow goes to +-inf,
//    f16 subnormals are produced exactly, values below half the smallest f16 subnormal go to
//    +-0 (exactly half rounds to even, i.e. to 0).
//  - NaN is preserved: the result is a quiet NaN with the same sign and the top payload bits
//    that fit (f32 payload >> 13 for f16, >> 16 for bf16), quiet bit forced on. A NaN never
//    turns into an infinity.
//  - Widening (f16 / bf16 -> f32) is exact, including subnormals, infinities and NaN
//    payloads (bits are moved, nothing is quieted).
#pragma once
#include <cstdint>
#include <cstring>

namespace tblob {
namespace dq {

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ---- bf16 ---------------------------------------------------------------------------------
inline uint16_t f32_to_bf16(uint32_t u) {
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) {  // NaN: keep sign + top payload, force quiet
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  }
  // Round to nearest even on bit 16; carries into the exponent handle overflow to inf.
  uint32_t lsb = (u >> 16) & 1u;
  uint32_t r = u + 0x7FFFu + lsb;
  return static_cast<uint16_t>(r >> 16);
}
inline uint32_t bf16_to_f32(uint16_t h) { return static_cast<uint32_t>(h) << 16; }

// ---- f16 ----------------------------------------------------------------------------------
inline uint16_t f32_to_f16(uint32_t u) {
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) {  // NaN
    return static_cast<uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x03FFu));
  }
  if (a >= 0x477FF000u) {  // >= 65520 (half-way past 65504) rounds to inf; also inf itself
    return static_cast<uint16_t>(sign | 0x7C00u);
  }
  if (a >= 0x38800000u) {  // >= 2^-14: normal f16
    // Rebias exponent (127 -> 15) and round the 13 dropped mantissa bits to nearest even.
    uint32_t v = a - 0x38000000u;  // exponent - 112, mantissa unchanged
    uint32_t lsb = (v >> 13) & 1u;
    v = v + 0x0FFFu + lsb;
    return static_cast<uint16_t>(sign | (v >> 13));
  }
  if (a <= 0x33000000u) {  // <= 2^-25: rounds to zero (2^-25 itself is a tie -> even = 0)
    return static_cast<uint16_t>(sign);
  }
  // Subnormal f16: value = m * 2^-24 with m in [1, 1023] after rounding (may round up to the
  // smallest normal 0x0400, which the carry produces naturally).
  const uint32_t e = a >> 23;                 // 102 .. 112
  const uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;  // 24-bit significand
  const uint32_t shift = 126u - e;            // 14 .. 24: mant >> shift = m (truncated)
  uint32_t m = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (m & 1u))) ++m;
  return static_cast<uint16_t>(sign | m);
}

inline uint32_t f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t m = h & 0x03FFu;
  if (e == 0x1Fu) return sign | 0x7F800000u | (m << 13);  // inf / NaN (payload kept)
  if (e != 0) return sign | ((e + 112u) << 23) | (m << 13);
  if (m == 0) return sign;
  // Subnormal: normalise.
  uint32_t exp = 113u;  // 2^-14 as f32 biased exponent is 113
  while ((m & 0x0400u) == 0) {
    m <<= 1;
    --exp;
  }
  return sign | (exp << 23) | ((m & 0x03FFu) << 13);
}

// ---- rounding helpers: round an f32 value to the nearest f16 / bf16, returned as f32 -------
inline float round_to_bf16(float f) { return f32_from_bits(bf16_to_f32(f32_to_bf16(f32_bits(f)))); }
inline float round_to_f16(float f) { return f32_from_bits(f16_to_f32(f32_to_f16(f32_bits(f)))); }

// Forces the value through a register so the compiler cannot contract a preceding multiply
// with a following add into an FMA (the kernels define separately rounded operations).
inline float no_contract(float x) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+x"(x));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(x));
#else
  volatile float v = x;
  x = v;
#endif
  return x;
}

}  // namespace dq
}  // namespace tblob
