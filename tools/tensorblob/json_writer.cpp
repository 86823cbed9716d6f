#include "json_writer.h"

#include <cstring>

namespace tbcli {

void JsonWriter::str(const char *p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  buf_ += '"';
  size_t start = 0;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(p[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    buf_.append(p + start, i - start);
    start = i + 1;
    switch (c) {
      case '"': buf_ += "\\\""; break;
      case '\\': buf_ += "\\\\"; break;
      case '\n': buf_ += "\\n"; break;
      case '\r': buf_ += "\\r"; break;
      case '\t': buf_ += "\\t"; break;
      case '\b': buf_ += "\\b"; break;
      case '\f': buf_ += "\\f"; break;
      default: {
        char e[7] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15], 0};
        buf_ += e;
      }
    }
  }
  buf_.append(p + start, n - start);
  buf_ += '"';
}

void JsonWriter::str(const char *s) { str(s, std::strlen(s)); }

void JsonWriter::u64(uint64_t v) {
  char tmp[24];
  int i = 23;
  tmp[i] = '\0';
  do {
    tmp[--i] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  buf_.append(tmp + i, 23 - i);
}

}  // namespace tbcli
