// The dtype table: every element type's name and bit width, in one place.
#pragma once
#include <cstddef>
#include <cstdint>

#include "tensorblob.h"

namespace tblob {

struct DtypeInfo {
  const char *name;  // as the safetensors header spells it
  uint8_t name_len;
  uint8_t bits;      // per element: 1..64
};

// nullptr for values outside the enum.
const DtypeInfo *dtype_info(uint32_t dtype);

// Exact, case-sensitive match of a decoded name. TBLOB_DTYPE_INVALID if unknown.
uint32_t dtype_from_name(const char *name, size_t len);

// Byte length of `elements` values of dtype; false on overflow or a bit count that is not
// a multiple of 8 (*misaligned set then).
bool dtype_bytes(uint32_t dtype, uint64_t elements, uint64_t *bytes, bool *misaligned);

}  // namespace tblob
