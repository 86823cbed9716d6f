// The safetensors header as Go's writer lays it out (used by the Ollama import to write
// blobs the way `ollama create` does).
#include "formats/safetensors/st_writer.h"

#include <algorithm>
#include <cstring>

#include "core/checked.h"
#include "core/dtype.h"
#include "core/endian.h"

namespace tblob {

bool go_json_string(ByteBuf *b, const char *p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  if (!b->push('"')) return false;
  size_t run = 0;  // bytes copied verbatim
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(p[i]);
    const char *esc = nullptr;
    char u[7] = {'\\', 'u', '0', '0', 0, 0, 0};
    size_t skip = 1;
    if (c == '"') esc = "\\\"";
    else if (c == '\\') esc = "\\\\";
    else if (c == '\n') esc = "\\n";
    else if (c == '\r') esc = "\\r";
    else if (c == '\t') esc = "\\t";
    else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      u[4] = kHex[c >> 4];
      u[5] = kHex[c & 15];
      esc = u;
    } else if (c == 0xE2 && i + 2 < n && static_cast<unsigned char>(p[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(p[i + 2]) == 0xA8 || static_cast<unsigned char>(p[i + 2]) == 0xA9)) {
      esc = static_cast<unsigned char>(p[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      skip = 3;
    }
    if (!esc) {
      ++run;
      continue;
    }
    if (!b->append(p + i - run, run) || !b->append(esc)) return false;
    run = 0;
    i += skip - 1;
  }
  return b->append(p + n - run, run) && b->push('"');
}

bool go_writer_header(const HeaderTensor *ts, size_t n, ByteBuf *out, const char *const *meta_keys,
                      const char *const *meta_values, size_t meta_n) {
  const Allocator libc;
  PodVec<uint32_t> order(&libc);
  PodVec<uint64_t> begin(&libc);
  if (!order.reserve(n) || !begin.reserve(n)) return false;
  uint64_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    order.push(static_cast<uint32_t>(i));
    begin.push(at);
    if (!checked_add(at, ts[i].bytes, &at)) return false;
  }
  std::sort(order.data(), order.data() + n, [ts](uint32_t a, uint32_t b) {
    const size_t k = std::min(ts[a].name_len, ts[b].name_len);
    const int d = std::memcmp(ts[a].name, ts[b].name, k);
    return d != 0 ? d < 0 : ts[a].name_len < ts[b].name_len;
  });
  const size_t start = out->size();
  const uint8_t zero[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (!out->append(zero, 8) || !out->push('{')) return false;
  if (meta_n) {
    if (!out->append("\"__metadata__\":{")) return false;
    for (size_t k = 0; k < meta_n; ++k)
      if ((k && !out->push(',')) || !go_json_string(out, meta_keys[k], std::strlen(meta_keys[k])) ||
          !out->push(':') || !go_json_string(out, meta_values[k], std::strlen(meta_values[k])))
        return false;
    if (!out->push('}')) return false;
  }
  for (size_t k = 0; k < n; ++k) {
    const HeaderTensor &t = ts[order[k]];
    const DtypeInfo *info = dtype_info(t.dtype);
    if (!info) return false;
    if ((k || meta_n) && !out->push(',')) return false;
    if (!go_json_string(out, t.name, t.name_len) || !out->append(":{\"dtype\":\"") || !out->append(info->name) ||
        !out->append("\",\"shape\":["))
      return false;
    for (uint32_t d = 0; d < t.rank; ++d)
      if ((d && !out->push(',')) || !out->append_u64(t.shape[d])) return false;
    uint64_t end;
    if (!checked_add(begin[order[k]], t.bytes, &end)) return false;
    if (!out->append("],\"data_offsets\":[") || !out->append_u64(begin[order[k]]) || !out->push(',') ||
        !out->append_u64(end) || !out->append("]}"))
      return false;
  }
  if (!out->push('}')) return false;
  while ((out->size() - start - 8) % 8 != 0)
    if (!out->push(' ')) return false;
  const uint64_t len = out->size() - start - 8;
  store_le64(out->data() + start, len);
  return true;
}

}  // namespace tblob
