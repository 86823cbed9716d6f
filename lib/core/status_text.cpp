// Names, messages and families of every status, from the one list (core/status_list.def).
// The C API's tblob_status_name / _message / _family only wrap these, so the library's own
// layers (core, io, formats) never call up into lib/capi for a status's text.
#include <cstring>

#include "core/status.h"

namespace tblob {
namespace {

// The list agrees with the header's enum, checked by the compiler both ways: every row's
// number is the enumerator's (static_assert), and the switch below, with no default, names
// every enumerator, so an enumerator missing from the list is an error (-Wswitch), as is a
// row the header lacks (undeclared name) or a row listed twice (duplicate case).
#define TBLOB_STATUS(name, number, family, message) \
  static_assert(static_cast<int>(name) == (number), #name " has another number in the header");
#include "core/status_list.def"
#undef TBLOB_STATUS

#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
constexpr bool listed(tblob_status s) {
  switch (s) {
#define TBLOB_STATUS(name, number, family, message) case name:
#include "core/status_list.def"
#undef TBLOB_STATUS
    return true;
    case TBLOB_STATUS_MIN_: return false;
  }
  return false;
}
#pragma GCC diagnostic pop
static_assert(listed(TBLOB_OK), "the list names TBLOB_OK");

struct StatusText {
  int number;
  uint32_t family;
  const char *name;
  const char *message;
};
constexpr StatusText kStatusText[] = {
#define TBLOB_STATUS(name, number, family, message) {number, TBLOB_FAMILY_##family, #name, message},
#include "core/status_list.def"
#undef TBLOB_STATUS
};

const StatusText *find(int s) {
  for (const StatusText &t : kStatusText)
    if (t.number == s) return &t;
  return nullptr;
}

constexpr const char *kFamilyNames[] = {"unknown", "ok", "argument", "memory", "io", "not-found",
                                        "format", "limit", "digest", "dequant", "unsupported",
                                        "cancelled"};
static_assert(sizeof(kFamilyNames) / sizeof(kFamilyNames[0]) == TBLOB_FAMILY_COUNT_, "one name per family");

}  // namespace

bool status_known(int s) { return find(s) != nullptr; }

const char *status_name(int s) {
  const StatusText *t = find(s);
  return t ? t->name : "TBLOB_E_UNKNOWN_STATUS";
}

const char *status_message(int s) {
  const StatusText *t = find(s);
  return t ? t->message : "unknown status";
}

uint32_t status_family(int s) {
  const StatusText *t = find(s);
  return t ? t->family : static_cast<uint32_t>(TBLOB_FAMILY_UNKNOWN);
}

const char *family_name(uint32_t family) {
  return family < TBLOB_FAMILY_COUNT_ ? kFamilyNames[family] : nullptr;
}

}  // namespace tblob
