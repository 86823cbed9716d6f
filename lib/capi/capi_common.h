// What every extern "C" entry point does first: take the caller's diag (ignored when NULL or
// when its struct_size is too small to write into) and reset it; and the one message for a
// bad argument. Shared by lib/capi and the formats' C API files.
#pragma once
#include "core/status.h"
#include "tensorblob.h"

namespace tblob {
namespace capi {

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
