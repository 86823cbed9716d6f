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
};

// Bytes of one source element, 0 for a dtype the quantizers do not take.
inline uint32_t source_size(uint32_t dtype) {
  return dtype == TBLOB_DTYPE_F32 ? 4u : (dtype == TBLOB_DTYPE_F16 || dtype == TBLOB_DTYPE_BF16) ? 2u : 0u;
}

// True for a finite f32 (not NaN, not +-inf).
inline bool finite(float x) { return (dq::f32_bits(x) & 0x7F800000u) != 0x7F800000u; }

// Where the first refused input value is (TBLOB_E_QUANT_VALUE) and why (static text).
struct ValueError {
  uint64_t row = UINT64_MAX;
  uint64_t col = 0;
  const char *why = nullptr;
  bool set() const { return why != nullptr; }
  // Keeps the earliest error by (row, col): the report does not depend on the thread count.
  void keep(const ValueError &o) {
    if (o.set() && (!set() || o.row < row || (o.row == row && o.col < col))) *this = o;
  }
};

}  // namespace quant
}  // namespace tblob
