// Helpers shared by the scalar reference kernels: the row bit-stream code
// extractor, rounding to a scale dtype and the output stores. Header-only, no state.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/endian.h"
#include "dequant/convert.h"
#include "dequant/kernel_table.h"
#include "dequant/minifloat.h"
#include "dequant/quant_desc.h"

namespace tblob {
namespace dq {


// Element `index` of a little-endian F32/F16/BF16 array, as an (exact) f32.
template <uint32_t DT>
inline float load_float(const uint8_t *base, uint64_t index) {
  if (DT == TBLOB_DTYPE_F32) return f32_from_bits(load_le32(base + index * 4));
  if (DT == TBLOB_DTYPE_F16) return f32_from_bits(f16_to_f32(load_le16(base + index * 2)));
  return f32_from_bits(bf16_to_f32(load_le16(base + index * 2)));
}

// Rounds an f32 to the dtype DT (identity for F32), returned as f32.
template <uint32_t DT>
inline float round_to(float x) {
  if (DT == TBLOB_DTYPE_F16) return round_to_f16(x);
  if (DT == TBLOB_DTYPE_BF16) return round_to_bf16(x);
  return x;
}

// Code j (b bits, 1 <= b <= 8) of a row's little-endian, LSB-first bit stream. Reads the
// second byte only when the code extends into it.
inline uint32_t extract_code(const uint8_t *row, uint64_t j, uint32_t b) {
  const uint64_t bit = j * b;
  const uint8_t *p = row + (bit >> 3);
  const uint32_t sh = static_cast<uint32_t>(bit & 7u);
  uint32_t v = static_cast<uint32_t>(p[0]) >> sh;
  if (sh + b > 8) v |= static_cast<uint32_t>(p[1]) << (8 - sh);
  return v & ((1u << b) - 1u);
}

// NaN from scheme arithmetic -> the canonical quiet NaN (ISA independent).
inline uint32_t canon_nan(uint32_t v) {
  return (v & 0x7FFFFFFFu) > 0x7F800000u ? kF32QuietNaN : v;
}

// Stores output element i (f32 bits given) into dst in the output dtype, host byte order.
template <uint32_t OUT>
inline void store_out(uint8_t *dst, uint64_t i, uint32_t f32) {
  if (OUT == kOutF32) {
    std::memcpy(dst + i * 4, &f32, 4);
  } else if (OUT == kOutF16) {
    const uint16_t h = f32_to_f16(f32);
    std::memcpy(dst + i * 2, &h, 2);
  } else {
    const uint16_t h = f32_to_bf16(f32);
    std::memcpy(dst + i * 2, &h, 2);
  }
}

// Rounding of a value computed "in the output dtype" (MLX's fp modes).
template <uint32_t OUT>
inline float round_out(float x) {
  if (OUT == kOutF16) return round_to_f16(x);
  if (OUT == kOutBF16) return round_to_bf16(x);
  return x;
}

}  // namespace dq

// Kernel entry points (one template per family, instantiated for the three outputs).
namespace scalar {
template <uint32_t OUT> void affine_rows(const QuantDesc &, uint64_t, uint64_t, void *);
template <uint32_t OUT> void mxfp4_rows(const QuantDesc &, uint64_t, uint64_t, void *);
template <uint32_t OUT> void mxfp8_rows(const QuantDesc &, uint64_t, uint64_t, void *);
template <uint32_t OUT> void nvfp4_rows(const QuantDesc &, uint64_t, uint64_t, void *);
template <uint32_t SCHEME, uint32_t OUT> void plain_rows(const QuantDesc &, uint64_t, uint64_t, void *);
template <uint32_t OUT> void slm1_q8_rows(const QuantDesc &, uint64_t, uint64_t, void *);  // slm1.cpp
template <uint32_t OUT> void slm1_q4_rows(const QuantDesc &, uint64_t, uint64_t, void *);
}  // namespace scalar

}  // namespace tblob
