// The container format names tblob_format_name returns, for messages below the C boundary too,
// from the one list of formats (core/format_list.def).
#pragma once
#include <cstdint>

#include "tensorblob.h"

namespace tblob {

// nullptr for a number that is no format.
inline const char *format_name(uint32_t format) {
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"  // a header enumerator missing from the list fails the build
  switch (static_cast<tblob_format>(format)) {
#define TBLOB_FORMAT(id, number, name, built)                                                \
  case TBLOB_FORMAT_##id:                                                                    \
    static_assert(TBLOB_FORMAT_##id == (number), #id " has another number in the header"); \
    return name;
#include "core/format_list.def"
#undef TBLOB_FORMAT
    case TBLOB_FORMAT_UNKNOWN: return nullptr;
  }
#pragma GCC diagnostic pop
  return nullptr;
}

}  // namespace tblob
