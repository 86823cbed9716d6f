// Input rows of a quantizer: F32, F16 or BF16 values, little-endian, any alignment, read one
// element at a time as the exact f32 value (F16/BF16 widen exactly), so no quantizer needs a
// converted copy of the tensor: at most one group lives in a stack buffer.
#pragma once
#include <cstdint>

#include "core/endian.h"
#include "dequant/convert.h"
#include "tensorblob.h"

namespace tblob {
namespace quant {

struct Source {
  const uint8_t *p = nullptr;
  uint32_t dtype = TBLOB_DTYPE_F32;  // TBLOB_DTYPE_F32 / _F16 / _BF16
  uint64_t cols = 0;

  float at(uint64_t row, uint64_t col) const {
    const uint64_t i = row * cols + col;
    if (dtype == TBLOB_DTYPE_F32) return dq::f32_from_bits(load_le32(p + i * 4));
    if (dtype == TBLOB_DTYPE_F16) return dq::f32_from_bits(dq::f16_to_f32(load_le16(p + i * 2)));
    return dq::f32_from_bits(dq::bf16_to_f32(load_le16(p + i * 2)));
  }

  // Values [c0, c0 + n) of row `row` into x (the dtype switch once per span, not per value).
  void span(uint64_t row, uint64_t c0, uint32_t n, float *x) const {
    const uint64_t i0 = row * cols + c0;
    if (dtype == TBLOB_DTYPE_F32) {
      for (uint32_t j = 0; j < n; ++j) x[j] = dq::f32_from_bits(load_le32(p + (i0 + j) * 4));
    } else if (dtype == TBLOB_DTYPE_F16) {
      for (uint32_t j = 0; j < n; ++j) x[j] = dq::f32_from_bits(dq::f16_to_f32(load_le16(p + (i0 + j) * 2)));
    } else {
      for (uint32_t j = 0; j < n; ++j) x[j] = dq::f32_from_bits(dq::bf16_to_f32(load_le16(p + (i0 + j) * 2)));
    }
  }
};

// Round to nearest, ties to even, of a finite f32: std::rint's result in the default rounding
// mode (up to the sign of a zero) without a libm call. Below 2^23 in magnitude, adding and
// subtracting 2^23 with v's sign puts the sum on the integer grid (ulp 1 in [2^23, 2^24)), one
// correct rounding; from 2^23 on every f32 is an integer.
inline float rint_even(float v) {
  if (!(v > -8388608.0f && v < 8388608.0f)) return v;
  const float big = v < 0.0f ? -8388608.0f : 8388608.0f;
  return (v + big) - big;  // never reassociated: IEEE semantics (no -ffast-math)
}

// Bytes of one source element, 0 for a dtype the quantizers do not take.
inline uint32_t source_size(uint32_t dtype) {
  return dtype == TBLOB_DTYPE_F32 ? 4u : (dtype == TBLOB_DTYPE_F16 || dtype == TBLOB_DTYPE_BF16) ? 2u : 0u;
}

// True for a finite f32 (not NaN, not +-inf).
inline bool finite(float x) { return (dq::f32_bits(x) & 0x7F800000u) != 0x7F800000u; }

// The reason given for a NaN or infinite input value (TBLOB_E_QUANT_NONFINITE, the status every
// quantizer gives for one); any other reason is a group the scheme cannot encode
// (TBLOB_E_QUANT_VALUE). Inline: one object for every file, so the pointer compares equal.
inline constexpr char kNonFinite[] = "NaN or infinite value";

// Where the first refused input value is and why (static text).
struct ValueError {
  uint64_t row = UINT64_MAX;
  uint64_t col = 0;
  const char *why = nullptr;
  bool set() const { return why != nullptr; }
  bool nonfinite() const { return why == kNonFinite; }
  // Keeps the earliest error by (row, col): the report does not depend on the thread count.
  void keep(const ValueError &o) {
    if (o.set() && (!set() || o.row < row || (o.row == row && o.col < col))) *this = o;
  }
};

}  // namespace quant
}  // namespace tblob
