#include "numbers.h"

#include <cstring>

namespace tbcli {

bool parse_number(const char *s, size_t n, uint64_t max, uint64_t *out) {
  if (n == 0 || n > 20) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (v > max) return false;
  *out = v;
  return true;
}

bool parse_number(const char *s, uint64_t max, uint64_t *out) { return parse_number(s, std::strlen(s), max, out); }

size_t digit_prefix(const char *s) {
  size_t n = 0;
  while (n <= 20 && s[n] >= '0' && s[n] <= '9') ++n;
  return n;
}

}  // namespace tbcli
