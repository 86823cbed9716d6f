// What every extern "C" entry point does first: refuse a caller diag too small to write into
// (TBLOB_E_INVALID_ARGUMENT: a struct from a mismatched header must not pass silently), take
// it (NULL is fine) and reset it; and the one message for a bad argument.
#pragma once
#include "core/status.h"
#include "core/struct_size.h"
#include "tensorblob.h"

namespace tblob {
namespace capi {

// The tblob_diag layout of 0.1 is the smallest any later version accepts.
inline bool bad_diag(const tblob_diag *out) {
  return out && out->struct_size < sizeof(tblob_diag);
}

inline Diag begin(tblob_diag *out) {
  Diag d;
  d.out = (out && out->struct_size >= sizeof(tblob_diag)) ? out : nullptr;
  d.reset();
  return d;
}

inline Status bad_arg(const Diag &d, const char *what) {
  return d.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: %s", what);
}

}  // namespace capi
}  // namespace tblob

// Opens an entry point that returns tblob_status: declares `Diag d` bound to the caller's diag.
#define TBLOB_CAPI_BEGIN(d, diag)                                     \
  if (::tblob::capi::bad_diag(diag)) return TBLOB_E_INVALID_ARGUMENT; \
  const ::tblob::Diag d = ::tblob::capi::begin(diag)
