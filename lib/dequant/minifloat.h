// Exact decoders for the small float encodings, each returning the f32 bit pattern of the
// value (every value of these formats is exactly representable in f32, subnormals included).
// Pure integer/bit code; the SIMD kernels must reproduce these tables exactly.
//
// NaN results follow ml_dtypes (checked against it for every code in the tests): a quiet NaN
// 0x7FC00000 carrying the code's sign bit; the FNUZ formats' single NaN 0x80 gives 0xFFC00000.
#pragma once
#include <cstdint>

#include "dequant/convert.h"

namespace tblob {
namespace dq {

constexpr uint32_t kF32QuietNaN = 0x7FC00000u;
constexpr uint32_t kF32Inf = 0x7F800000u;

// m * 2^exp2 for small m (< 2^8) and exp2 in [-24, 0]; exact in f32.
inline uint32_t small_times_pow2(uint32_t m, int exp2) {
  if (m == 0) return 0;
  // Normalise m to 1.f * 2^k.
  int k = 0;
  while ((m >> (k + 1)) != 0) ++k;
  const uint32_t frac = (m << (23 - k)) & 0x7FFFFFu;
  return (static_cast<uint32_t>(127 + k + exp2) << 23) | frac;
}

// OCP FP8 E4M3 ("E4M3FN"): bias 7, no infinities. Code 0x7F/0xFF is NaN in OCP; when
// max_is_finite is set it decodes to +-480 instead, as MLX's CPU/Metal decoder did up to
// v0.32.2 (the version Ollama pins).
inline uint32_t e4m3_to_f32(uint8_t b, bool max_is_finite) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t a = b & 0x7Fu;
  if (a == 0x7Fu) return sign | (max_is_finite ? 0x43F00000u : kF32QuietNaN);
  const uint32_t e = a >> 3, m = a & 7u;
  if (e == 0) return sign | small_times_pow2(m, -9);
  return sign | ((e + 120u) << 23) | (m << 20);
}

// OCP FP8 E5M2: IEEE-like, bias 15, exponent 31 = inf (m == 0) / NaN.
inline uint32_t e5m2_to_f32(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t e = (b >> 2) & 0x1Fu, m = b & 3u;
  if (e == 0x1Fu) return sign | (m ? kF32QuietNaN : kF32Inf);
  if (e == 0) return sign | small_times_pow2(m, -16);
  return sign | ((e + 112u) << 23) | (m << 21);
}

// E8M0 (OCP "E8M0FNU"): 2^(b-127), unsigned. Code 0xFF is NaN in OCP, +inf when ff_is_inf
// (MLX). Code 0x00 is 2^-127 (OCP, MLX), or 0.0 when zero_is_zero (mistral.rs MXFP4).
inline uint32_t e8m0_to_f32(uint8_t b, bool ff_is_inf, bool zero_is_zero) {
  if (b == 0xFFu) return ff_is_inf ? kF32Inf : kF32QuietNaN;
  if (b == 0) return zero_is_zero ? 0u : 0x00400000u;
  return static_cast<uint32_t>(b) << 23;
}

// FNUZ formats (AMD/Graphcore): no negative zero, 0x80 is the only NaN, no infinities.
inline uint32_t e4m3fnuz_to_f32(uint8_t b) {
  if (b == 0x80u) return 0xFFC00000u;
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t e = (b >> 3) & 0xFu, m = b & 7u;
  if (e == 0) return sign | small_times_pow2(m, -10);
  return sign | ((e + 119u) << 23) | (m << 20);
}
inline uint32_t e5m2fnuz_to_f32(uint8_t b) {
  if (b == 0x80u) return 0xFFC00000u;
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t e = (b >> 2) & 0x1Fu, m = b & 3u;
  if (e == 0) return sign | small_times_pow2(m, -17);
  return sign | ((e + 111u) << 23) | (m << 21);
}

// FP4 E2M1 (low 4 bits of c): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives; no NaN/inf.
inline uint32_t e2m1_to_f32(uint8_t c) {
  const uint32_t sign = static_cast<uint32_t>(c & 0x8u) << 28;
  const uint32_t e = (c >> 1) & 3u, m = c & 1u;
  if (e == 0) return m ? (sign | 0x3F000000u) : sign;
  return sign | ((e + 126u) << 23) | (m << 22);
}

// FP6 E2M3 / E3M2 (low 6 bits of c), OCP MX element types; no NaN/inf. Only the element
// decoding is defined here: the byte packing of safetensors F6_* tensors is not pinned by any
// source we trust, so no F6 scheme exists (see quant_desc.h).
inline uint32_t f6_e2m3_to_f32(uint8_t c) {
  const uint32_t sign = static_cast<uint32_t>(c & 0x20u) << 26;
  const uint32_t e = (c >> 3) & 3u, m = c & 7u;
  if (e == 0) return sign | small_times_pow2(m, -3);
  return sign | ((e + 126u) << 23) | (m << 20);
}
inline uint32_t f6_e3m2_to_f32(uint8_t c) {
  const uint32_t sign = static_cast<uint32_t>(c & 0x20u) << 26;
  const uint32_t e = (c >> 2) & 7u, m = c & 3u;
  if (e == 0) return sign | small_times_pow2(m, -4);
  return sign | ((e + 124u) << 23) | (m << 21);
}

}  // namespace dq
}  // namespace tblob
