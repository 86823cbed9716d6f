// The C entry points for a status's name, message and family: wrappers around the one list
// in lib/core (core/status_list.def, core/status_text.cpp).
#include <cstring>

#include "core/status.h"
#include "tensorblob.h"

namespace {
// A C caller may pass any int as a tblob_status. In C++ a value outside the enumerators' range
// is undefined behaviour to load as the enum, so the argument is read as the int it is.
int as_int(const tblob_status &arg) {
  static_assert(sizeof(tblob_status) == sizeof(int), "tblob_status is int-sized");
  int s;
  std::memcpy(&s, &arg, sizeof(s));
  return s;
}
}  // namespace

extern "C" {

TBLOB_API const char *tblob_status_name(tblob_status status) noexcept {
  return tblob::status_name(as_int(status));
}

TBLOB_API const char *tblob_status_message(tblob_status status) noexcept {
  return tblob::status_message(as_int(status));
}

TBLOB_API uint32_t tblob_status_family(tblob_status status) noexcept {
  return tblob::status_family(as_int(status));
}

TBLOB_API const char *tblob_family_name(uint32_t family) noexcept { return tblob::family_name(family); }

}  // extern "C"
