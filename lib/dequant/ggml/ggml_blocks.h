// Field helpers shared by the GGML kernel sets (header-only, no ISA-specific code).
#pragma once
#include <cstdint>
#include <cstring>

#include "core/endian.h"
#include "dequant/convert.h"
#include "dequant/ggml/ggml.h"

namespace tblob {
namespace ggml {

// An f16 field, widened exactly.
inline float half(const uint8_t *p) { return dq::f32_from_bits(dq::f16_to_f32(load_le16(p))); }
// True when an f16 field is inf or NaN.
inline bool half_nonfinite(const uint8_t *p) { return (load_le16(p) & 0x7C00u) == 0x7C00u; }

// The twelve block types in slot order (after the three float types), as X(fn, slot) for the
// kernel sets' wrapper structs and tables: one list, so a set cannot miss or reorder a type.
#define TBLOB_GGML_BLOCK_TYPES(X)                                                              \
  X(q4_0, kSlotQ4_0) X(q4_1, kSlotQ4_1) X(q5_0, kSlotQ5_0) X(q5_1, kSlotQ5_1) X(q8_0, kSlotQ8_0) \
  X(q8_1, kSlotQ8_1) X(q2_k, kSlotQ2_K) X(q3_k, kSlotQ3_K) X(q4_k, kSlotQ4_K) X(q5_k, kSlotQ5_K) \
  X(q6_k, kSlotQ6_K) X(q8_k, kSlotQ8_K)
// The newer block types, in slot order after the list above: every one has an AVX2 kernel.
// (ggml_neon.cpp has its own list of the newer types, at present all of them; a slot it lacks
// takes scalar_rows<slot>.)
#define TBLOB_GGML_AVX2_TYPES(X)                                                                   \
  X(iq4_nl, kSlotIQ4_NL) X(iq4_xs, kSlotIQ4_XS) X(tq2_0, kSlotTQ2_0) X(mxfp4, kSlotMXFP4)          \
  X(tq1_0, kSlotTQ1_0) X(iq2_xxs, kSlotIQ2_XXS) X(iq2_xs, kSlotIQ2_XS) X(iq2_s, kSlotIQ2_S)          \
  X(iq3_xxs, kSlotIQ3_XXS) X(iq3_s, kSlotIQ3_S) X(iq1_s, kSlotIQ1_S) X(iq1_m, kSlotIQ1_M)            \
  X(nvfp4, kSlotNVFP4) X(q1_0, kSlotQ1_0)
// Block types that no SIMD set decodes itself (each takes scalar_rows<slot>), last in slot
// order: none at present. The sets' tables list it, so a type added here needs no table edit.
#define TBLOB_GGML_SCALAR_ONLY_TYPES(X)
#define TBLOB_GGML_SCALAR_ENTRY(fn, slot) scalar_rows<slot>,
#define TBLOB_GGML_COUNT_ONE(fn, slot) +1
static_assert(3 TBLOB_GGML_BLOCK_TYPES(TBLOB_GGML_COUNT_ONE) TBLOB_GGML_AVX2_TYPES(TBLOB_GGML_COUNT_ONE)
                      TBLOB_GGML_SCALAR_ONLY_TYPES(TBLOB_GGML_COUNT_ONE) ==
                  kSlotCount,
              "a block type is missing from the lists");
#undef TBLOB_GGML_COUNT_ONE

// IQ4_NL / IQ4_XS non-linear 4-bit grid (ggml's kvalues_iq4nl).
inline constexpr int8_t kIq4Grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
// MXFP4: E2M1 codes doubled (so they are integers); the E8M0 scale is halved to match.
inline constexpr int8_t kMxfp4Grid[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// NVFP4's UE4M3 scale byte as an f32 holding half its value, as ggml decodes it: 4 exponent
// bits (bias 7), 3 mantissa bits, bit 7 ignored; 0x00 and 0x7F decode to 0. Always finite.
inline float ue4m3_half(uint8_t x) {
  if (x == 0 || x == 0x7F) return 0.0f;
  const uint32_t e = (x >> 3) & 0xFu, m = x & 7u;
  // e = 0: m * 2^-9 / 2; else (1 + m/8) * 2^(e-7) / 2, whose f32 exponent field is e + 119.
  return e == 0 ? static_cast<float>(m) * 0.0009765625f : dq::f32_from_bits(((e + 119u) << 23) | (m << 20));
}

// E8M0 byte e as an f32 holding 2^(e-127) / 2: exponent field e - 1, or a subnormal for e < 2.
inline float e8m0_half(uint8_t e) {
  return dq::f32_from_bits(e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23);
}

// ggml get_scale_min_k4: 6-bit scale and min number j (0..7) of a Q4_K/Q5_K block.
inline void scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// The eight 6-bit scales and eight 6-bit mins of a Q4_K/Q5_K block (12 bytes at b + 4), four
// at a time (get_scale_min_k4 per 32-bit word), as 16 bytes: u bytes 0-7 are sc 0-7, 8-15 are
// m 0-7. sc 0-3 are the low 6 bits of bytes 0-3, m 0-3 of bytes 4-7; sc 4-7 = low nibble of
// bytes 8-11 | (top 2 bits of bytes 0-3) << 4; m 4-7 = high nibble of bytes 8-11 | (top 2
// bits of bytes 4-7) << 4.
inline void k4_scale_bytes(const uint8_t *b, uint32_t u[4]) {
  uint32_t w[3];
  std::memcpy(w, b + 4, 12);
  u[0] = w[0] & 0x3F3F3F3Fu;
  u[1] = (w[2] & 0x0F0F0F0Fu) | (((w[0] >> 6) & 0x03030303u) << 4);
  u[2] = w[1] & 0x3F3F3F3Fu;
  u[3] = ((w[2] >> 4) & 0x0F0F0F0Fu) | (((w[1] >> 6) & 0x03030303u) << 4);
}

// The 16 six-bit scales of a Q3_K block (unsigned 0..63; subtract 32 to use).
inline void q3k_scales(const uint8_t *b, int8_t *out) {
  for (int t = 0; t < 16; ++t) {
    const uint32_t low = t < 8 ? (b[t] & 0xFu) : (b[t - 8] >> 4);
    const uint32_t high = (b[8 + t % 4] >> (2 * (t / 4))) & 3u;
    out[t] = static_cast<int8_t>(low | (high << 4));
  }
}

// IQ1_M's f16 d, kept in the top nibbles of the four u16 scale words at bytes 48-55.
inline uint32_t iq1m_d_bits(const uint8_t *b) {
  return (b[49] >> 4) | (b[51] & 0xF0u) | ((b[53] & 0xF0u) << 4) | ((b[55] & 0xF0u) << 8);
}

// True when the block's scale fields are all finite (the SIMD fast paths require it).
inline bool block_finite(uint32_t slot, const uint8_t *b) {
  switch (slot) {
    case kSlotQ4_0: case kSlotQ5_0: case kSlotQ8_0: return !half_nonfinite(b);
    case kSlotQ4_1: case kSlotQ5_1: case kSlotQ4_K: case kSlotQ5_K:
      return !half_nonfinite(b) && !half_nonfinite(b + 2);
    case kSlotQ8_1: return !half_nonfinite(b);
    case kSlotQ2_K: return !half_nonfinite(b + 80) && !half_nonfinite(b + 82);
    case kSlotQ3_K: return !half_nonfinite(b + 108);
    case kSlotQ6_K: return !half_nonfinite(b + 208);
    case kSlotQ8_K: return (load_le32(b) & 0x7F800000u) != 0x7F800000u;
    case kSlotIQ4_NL: case kSlotIQ4_XS: return !half_nonfinite(b);
    case kSlotTQ2_0: return !half_nonfinite(b + 64);
    case kSlotTQ1_0: return !half_nonfinite(b + 52);
    case kSlotIQ2_XXS: case kSlotIQ2_XS: case kSlotIQ2_S: case kSlotIQ3_XXS: case kSlotIQ3_S: case kSlotIQ1_S:
    case kSlotQ1_0:
      return !half_nonfinite(b);
    case kSlotIQ1_M: return (iq1m_d_bits(b) & 0x7C00u) != 0x7C00u;
    default: return true;  // float types, MXFP4 and NVFP4 (their byte scales are always finite)
  }
}

// The block loop of every SIMD set: blocks with finite scales through the set's body(b, y),
// the others through the scalar definition (which canonicalises NaN).
template <uint32_t SLOT, class Body>
inline void for_each_block(const uint8_t *src, size_t nblocks, float *dst, const Body &body) {
  const TypeInfo *t = type_info_by_slot(SLOT);
  const size_t bb = t->block_bytes, be = t->block_elems;
  for (size_t i = 0; i < nblocks; ++i) {
    const uint8_t *b = src + i * bb;
    if (__builtin_expect(block_finite(SLOT, b), 1))
      body(b, dst + i * be);
    else
      scalar_block(SLOT, b, dst + i * be);
  }
}

}  // namespace ggml
}  // namespace tblob
