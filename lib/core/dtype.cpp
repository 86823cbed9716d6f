#include "core/dtype.h"

#include <cstring>

#include "core/checked.h"

namespace tblob {

// Rows in enum order: entry i is dtype i (checked below).
const DtypeInfo kDtypeTable[TBLOB_DTYPE_COUNT_] = {
    {"", 0, 0},
#define TBLOB_DTYPE(id, number, name, bits) {name, sizeof(name) - 1, bits},
#include "core/dtype_list.def"
#undef TBLOB_DTYPE
};

namespace {
// Every row's number is the header's, and the rows are 1, 2, 3, ... with none missing.
constexpr uint32_t kListed[] = {
    0,
#define TBLOB_DTYPE(id, number, name, bits) (number),
#include "core/dtype_list.def"
#undef TBLOB_DTYPE
};
#define TBLOB_DTYPE(id, number, name, bits) \
  static_assert(TBLOB_DTYPE_##id == (number), #id " has another number in the header");
#include "core/dtype_list.def"
#undef TBLOB_DTYPE
static_assert(sizeof(kListed) / sizeof(kListed[0]) == TBLOB_DTYPE_COUNT_, "one row per dtype");
constexpr bool in_order() {
  for (uint32_t i = 0; i < TBLOB_DTYPE_COUNT_; ++i)
    if (kListed[i] != i) return false;
  return true;
}
static_assert(in_order(), "core/dtype_list.def rows are in enum order");
}  // namespace

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
#define TBLOB_DTYPE(id, number, name, bits) TBLOB_PN(name),
#include "core/dtype_list.def"
#undef TBLOB_DTYPE
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
