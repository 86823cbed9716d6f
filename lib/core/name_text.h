// The one escaping of names (tensor names, metadata keys, layer names) for text: library
// messages and the CLI's text output both use it, so a NUL inside a name never cuts the line
// and two different names never print alike. Control bytes become \0, \t, \n, \r or \xHH
// and a backslash is doubled; every other byte (UTF-8 included) is kept. Header-only and
// dependency-free so the CLI, which links only the public API, shares it.
#pragma once
#include <cstddef>

namespace tblob {

// Writes the escaped name into out (cap bytes, always NUL-terminated when cap > 0), stopping
// before an escape that would not fit whole; returns the length written.
inline size_t escape_name(const void *name, size_t name_len, char *out, size_t cap) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto *p = static_cast<const unsigned char *>(name);
  size_t o = 0;
  if (cap == 0) return 0;
  for (size_t i = 0; i < name_len; ++i) {
    const unsigned char c = p[i];
    char e[4];
    size_t k = 0;
    if (c == '\\') {
      e[k++] = '\\';
      e[k++] = '\\';
    } else if (c == 0 || c == '\t' || c == '\n' || c == '\r') {
      e[k++] = '\\';
      e[k++] = c == 0 ? '0' : c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
    } else if (c < 0x20 || c == 0x7f) {
      e[0] = '\\';
      e[1] = 'x';
      e[2] = kHex[c >> 4];
      e[3] = kHex[c & 15];
      k = 4;
    } else {
      e[k++] = static_cast<char>(c);
    }
    if (o + k >= cap) break;
    for (size_t j = 0; j < k; ++j) out[o++] = e[j];
  }
  out[o] = '\0';
  return o;
}

}  // namespace tblob
