#include "core/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace tblob {

Status Diag::fail(Status s, uint64_t offset, int64_t tensor, const char *fmt, ...) const {
  if (!out || out->struct_size < sizeof(tblob_diag)) return s;
  if (out->status != TBLOB_OK) return s;  // keep the first error
  out->status = s;
  out->offset = offset;
  out->tensor_index = tensor;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(out->message, sizeof(out->message), fmt, ap);
  va_end(ap);
  return s;
}

Status Diag::fail_plain(Status s) const {
  return fail(s, TBLOB_NO_OFFSET, -1, "%s", ::tblob::status_message(s));
}

int clip_name(size_t name_len, const char **ellipsis) {
  const size_t kMax = 96;
  if (name_len > kMax) {
    *ellipsis = "...";
    return static_cast<int>(kMax);
  }
  *ellipsis = "";
  return static_cast<int>(name_len);
}

ShownName::ShownName(const void *name, size_t name_len) {
  const char *clipped = "";
  const size_t n = static_cast<size_t>(clip_name(name_len, &clipped));
  size_t o = name ? escape_name(name, n, text, sizeof(text) - 3) : 0;
  for (const char *c = clipped; *c; ++c) text[o++] = *c;
  text[o] = '\0';
  len = static_cast<int>(o);
}

}  // namespace tblob
