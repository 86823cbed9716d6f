#include "core/limits.h"

#include <cstddef>

namespace tblob {

bool resolve_limits(const tblob_open_options *options, Limits *out) {
  *out = Limits{};
  if (!options) return true;
  const size_t n = options->struct_size;
  if (n < offsetof(tblob_open_options, max_header_bytes)) return false;
  auto has = [n](size_t offset, size_t size) { return offset + size <= n; };
#define TBLOB_TAKE(field)                                                     \
  if (has(offsetof(tblob_open_options, field), sizeof(options->field))) \
    out->field = options->field;
  TBLOB_TAKE(mode)
  TBLOB_TAKE(max_header_bytes)
  TBLOB_TAKE(max_tensors)
  TBLOB_TAKE(max_name_bytes)
  TBLOB_TAKE(max_rank)
  TBLOB_TAKE(max_json_depth)
  TBLOB_TAKE(max_files)
  TBLOB_TAKE(flags)
  TBLOB_TAKE(allocator)
#undef TBLOB_TAKE
  if (out->max_header_bytes > TBLOB_SAFETENSORS_MAX_HEADER)
    out->max_header_bytes = TBLOB_SAFETENSORS_MAX_HEADER;
  if (out->mode > TBLOB_OPEN_READ) return false;
  // The JSON walker keeps its container stack in a fixed bitset: 1024 levels at most, so
  // say so through the limit rather than quoting a number that cannot apply.
  if (out->max_json_depth > kMaxJsonDepth) out->max_json_depth = kMaxJsonDepth;
  // An allocator hook must be complete: half a hook is a caller bug, not a request for libc.
  const tblob_allocator *a = out->allocator;
  if (a && (a->struct_size < sizeof(tblob_allocator) || !a->alloc || !a->free)) return false;
  return true;
}

}  // namespace tblob
