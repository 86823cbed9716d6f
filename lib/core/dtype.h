// The dtype table: every element type's name and bit width, in one place.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/checked.h"
#include "tensorblob.h"

namespace tblob {

struct DtypeInfo {
  const char *name;  // as the safetensors header spells it
  uint8_t name_len;
  uint8_t bits;      // per element: 1..64
};

// Indexed by tblob_dtype; entry 0 (TBLOB_DTYPE_INVALID) is empty.
extern const DtypeInfo kDtypeTable[TBLOB_DTYPE_COUNT_];

// nullptr for values outside the enum.
inline const DtypeInfo *dtype_info(uint32_t dtype) {
  if (dtype == TBLOB_DTYPE_INVALID || dtype >= TBLOB_DTYPE_COUNT_) return nullptr;
  return &kDtypeTable[dtype];
}

// The name tblob_dtype_name returns: nullptr for values outside the enum.
inline const char *dtype_name(uint32_t dtype) {
  const DtypeInfo *i = dtype_info(dtype);
  return i ? i->name : nullptr;
}

// The bits tblob_dtype_bits returns: 0 for values outside the enum.
inline uint32_t dtype_bits(uint32_t dtype) {
  const DtypeInfo *i = dtype_info(dtype);
  return i ? i->bits : 0;
}

// Exact, case-sensitive match of a decoded name. TBLOB_DTYPE_INVALID if unknown.
uint32_t dtype_from_name(const char *name, size_t len);

// Bytes per element of a whole-byte dtype (BOOL and U8 1, BF16 2, F32 4, ...); 0 for a
// sub-byte dtype (F4, F6_*) or a value outside the enum. The one element-size table.
inline uint32_t dtype_size(uint32_t dtype) {
  const DtypeInfo *info = dtype_info(dtype);
  return info && info->bits % 8 == 0 ? info->bits / 8u : 0u;
}

// Byte length of `elements` values of dtype; false on overflow or a bit count that is not
// a multiple of 8 (*misaligned set then). Inline: the header scanner calls it per tensor, and
// out of line its results came back through memory.
inline bool dtype_bytes(uint32_t dtype, uint64_t elements, uint64_t *bytes, bool *misaligned) {
  *misaligned = false;
  const DtypeInfo *info = dtype_info(dtype);
  if (!info) return false;
  uint64_t bits;
  if (!checked_mul(elements, info->bits, &bits)) return false;
  if (bits % 8 != 0) {
    *misaligned = true;
    return false;
  }
  *bytes = bits / 8;
  return true;
}

}  // namespace tblob
