#include "core/dtype.h"

#include <cstring>

#include "core/checked.h"

namespace tblob {

#define TBLOB_DT(name, bits) {name, sizeof(name) - 1, bits}
const DtypeInfo kDtypeTable[TBLOB_DTYPE_COUNT_] = {
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

namespace {
// A name as two words, byte i at bits 8*i: the same packing at compile time for the table
// and at run time for the input, so the comparison is two integer compares per entry.
constexpr uint64_t pack_word(const char *p, size_t len, size_t off) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && off + i < len; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(p[off + i])) << (8 * i);
  return v;
}
struct PackedName {
  uint64_t w0, w1;
  uint32_t len;
};
#define TBLOB_PN(s) {pack_word(s, sizeof(s) - 1, 0), pack_word(s, sizeof(s) - 1, 8), sizeof(s) - 1}
constexpr PackedName kPacked[TBLOB_DTYPE_COUNT_] = {
    {0, 0, 0},
    TBLOB_PN("BOOL"),        TBLOB_PN("U8"),          TBLOB_PN("I8"),
    TBLOB_PN("I16"),         TBLOB_PN("U16"),         TBLOB_PN("F16"),
    TBLOB_PN("BF16"),        TBLOB_PN("I32"),         TBLOB_PN("U32"),
    TBLOB_PN("F32"),         TBLOB_PN("F64"),         TBLOB_PN("I64"),
    TBLOB_PN("U64"),         TBLOB_PN("C64"),         TBLOB_PN("F8_E5M2"),
    TBLOB_PN("F8_E4M3"),     TBLOB_PN("F8_E8M0"),     TBLOB_PN("F8_E4M3FNUZ"),
    TBLOB_PN("F8_E5M2FNUZ"), TBLOB_PN("F4"),          TBLOB_PN("F6_E2M3"),
    TBLOB_PN("F6_E3M2"),
};
#undef TBLOB_PN
}  // namespace

uint32_t dtype_from_name(const char *name, size_t len) {
  if (len < 2 || len > 11) return TBLOB_DTYPE_INVALID;
  const uint64_t w0 = pack_word(name, len, 0);
  const uint64_t w1 = pack_word(name, len, 8);
  for (uint32_t i = 1; i < TBLOB_DTYPE_COUNT_; ++i)
    if (kPacked[i].w0 == w0 && kPacked[i].w1 == w1 && kPacked[i].len == len) return i;
  return TBLOB_DTYPE_INVALID;
}

}  // namespace tblob
