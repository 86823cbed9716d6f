#include "core/dtype.h"

#include <cstring>

#include "core/checked.h"

namespace tblob {

namespace {
#define TBLOB_DT(name, bits) {name, sizeof(name) - 1, bits}
// Indexed by tblob_dtype.
const DtypeInfo kDtypes[TBLOB_DTYPE_COUNT_] = {
    {"", 0, 0},
    TBLOB_DT("BOOL", 8),         TBLOB_DT("U8", 8),           TBLOB_DT("I8", 8),
    TBLOB_DT("I16", 16),         TBLOB_DT("U16", 16),         TBLOB_DT("F16", 16),
    TBLOB_DT("BF16", 16),        TBLOB_DT("I32", 32),         TBLOB_DT("U32", 32),
    TBLOB_DT("F32", 32),         TBLOB_DT("F64", 64),         TBLOB_DT("I64", 64),
    TBLOB_DT("U64", 64),         TBLOB_DT("C64", 64),         TBLOB_DT("F8_E5M2", 8),
    TBLOB_DT("F8_E4M3", 8),      TBLOB_DT("F8_E8M0", 8),      TBLOB_DT("F8_E4M3FNUZ", 8),
    TBLOB_DT("F8_E5M2FNUZ", 8),  TBLOB_DT("F4", 4),           TBLOB_DT("F6_E2M3", 6),
    TBLOB_DT("F6_E3M2", 6),
};
#undef TBLOB_DT
}  // namespace

const DtypeInfo *dtype_info(uint32_t dtype) {
  if (dtype == TBLOB_DTYPE_INVALID || dtype >= TBLOB_DTYPE_COUNT_) return nullptr;
  return &kDtypes[dtype];
}

uint32_t dtype_from_name(const char *name, size_t len) {
  if (len < 2 || len > 11) return TBLOB_DTYPE_INVALID;
  for (uint32_t i = 1; i < TBLOB_DTYPE_COUNT_; ++i) {
    if (kDtypes[i].name_len == len && std::memcmp(kDtypes[i].name, name, len) == 0) return i;
  }
  return TBLOB_DTYPE_INVALID;
}

bool dtype_bytes(uint32_t dtype, uint64_t elements, uint64_t *bytes, bool *misaligned) {
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
