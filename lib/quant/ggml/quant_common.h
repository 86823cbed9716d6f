// Helpers shared by the GGML row quantizers: ggml's integer conversions as x86-64 performs
// them (so every host writes the bytes ggml's x86 build writes), its f16 rounding and its
// scale searches. Header-only; included only by files compiled with -ffp-contract=off.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/endian.h"
#include "dequant/convert.h"

#if defined(__FAST_MATH__)
#error "lib/quant/ggml must not be built with -ffast-math: its outputs are defined bit for bit"
#endif

namespace tblob {
namespace ggml {
namespace q {

inline uint32_t bits(float f) { return dq::f32_bits(f); }
inline float from_bits(uint32_t u) { return dq::f32_from_bits(u); }

// C's float -> int conversion as x86's CVTTSS2SI does it: truncation toward zero, and
// INT32_MIN for NaN and for values outside the int32 range (C leaves those undefined; ggml's
// x86 build gets this, and its narrowing casts keep the low bits).
inline int32_t trunc_i32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return INT32_MIN;  // NaN, or out of range
  return static_cast<int32_t>(v);
}
// (int8_t)v and (uint8_t)v on a float: the low byte of trunc_i32.
inline int8_t to_i8(float v) { return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint32_t>(trunc_i32(v)))); }
inline uint8_t to_u8(float v) { return static_cast<uint8_t>(static_cast<uint32_t>(trunc_i32(v))); }

// glibc's lroundf on x86-64: round half away from zero; INT64_MIN for NaN and out of range.
inline int64_t lround_x86(float v) {
  if (!(v >= -9223372036854775808.0f && v < 9223372036854775808.0f)) return INT64_MIN;
  return static_cast<int64_t>(std::round(v));
}

// ggml's nearest_int: adds 1.5 * 2^23 and reads the low mantissa bits (round to nearest even
// for |v| < 2^22; defined bits, no conversion, for anything else).
inline int nearest_int(float v) {
  const float s = v + 12582912.0f;
  return static_cast<int>(bits(s) & 0x007FFFFFu) - 0x00400000;
}

// GGML_FP32_TO_FP16: round to nearest even; NaN becomes sign | 0x7E00. From finite input a
// scale is NaN only when ggml's f32 sums overflow (inf/inf, 0*inf): on x86 that is the default
// NaN, whose sign bit is set, and ggml's x86 build writes 0xFE00 (no quantizer negates a NaN an
// odd number of times before storing it). Other hosts make default NaNs with the sign clear
// (aarch64: 0x7FC00000), so the sign is fixed here rather than taken from the host's NaN.
inline uint16_t fp16(float f) {
  const uint32_t u = bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFE00u;
  return dq::f32_to_f16(u);
}
inline void store_fp16(uint8_t *p, float f) { store_le<uint16_t>(p, fp16(f)); }

// ggml's best_index_int8: the index of the grid value nearest x (ties: the lower one), by
// bisection over the sorted grid, comparing as ggml does (int8 values promoted to float).
inline int best_index_int8(int n, const int8_t *val, float x) {
  if (x <= static_cast<float>(val[0])) return 0;
  if (x >= static_cast<float>(val[n - 1])) return n - 1;
  int ml = 0, mu = n - 1;
  while (mu - ml > 1) {
    const int mav = (ml + mu) / 2;
    if (x < static_cast<float>(val[mav]))
      mu = mav;
    else
      ml = mav;
  }
  return x - static_cast<float>(val[mu - 1]) < static_cast<float>(val[mu]) - x ? mu - 1 : mu;
}

// ggml's GROUP_MAX_EPS: a group whose largest magnitude is below it quantizes to zero.
constexpr float kGroupMaxEps = 1e-15f;

// ggml's make_qx_quants: symmetric codes L in [0, 2*nmax) and the scale minimising the
// weighted error over 19 candidate inverse scales. rmse_type as ggml (1: weights qw, or x^2
// without them). Returns the scale. Defined in quant_search.cpp.
float make_qx_quants(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw);

// ggml's make_qkx3_quants: asymmetric codes L in [0, nmax], a scale and a minimum (returned
// negated in *the_min) from nstep + 1 candidates. Defined in quant_search.cpp.
float make_qkx3_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                       float *the_min, uint8_t *Laux, float rmin, float rdelta, int nstep, bool use_mad);

}  // namespace q
}  // namespace ggml
}  // namespace tblob
