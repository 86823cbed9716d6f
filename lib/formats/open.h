// Content-based container detection and the open entry points every format plugs into.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/limits.h"
#include "table/model.h"
#include "core/status.h"

namespace tblob {

Status open_path(const char *path, const Limits &limits, tblob_model **out, const Diag &diag);
Status open_memory(const void *buf, size_t len, const Limits &limits, tblob_model **out,
                   const Diag &diag);
// Takes ownership of `source` (closed exactly once: at model close, or before returning an error).
Status open_source(const tblob_byte_source *source, const Limits &limits, tblob_model **out, const Diag &diag);

}  // namespace tblob
