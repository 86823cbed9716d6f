// Checked size arithmetic: the only place sizes from untrusted input are combined.
// Every helper returns false on overflow and leaves *out unspecified.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tblob {

inline bool checked_add(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
inline bool checked_mul(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
// Rounds a up to a multiple of align (a power of two).
inline bool checked_align_up(uint64_t a, uint64_t align, uint64_t *out) {
  uint64_t t;
  if (!checked_add(a, align - 1, &t)) return false;
  *out = t & ~(align - 1);
  return true;
}
// ceil(a / b) for b > 0, without the a + b - 1 overflow.
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

// 64-bit value -> size_t for this platform.
inline bool to_size(uint64_t v, size_t *out) {
  if (v > SIZE_MAX) return false;
  *out = static_cast<size_t>(v);
  return true;
}

// True when [offset, offset + length) lies inside [0, total).
inline bool range_inside(uint64_t offset, uint64_t length, uint64_t total) {
  uint64_t end;
  return checked_add(offset, length, &end) && end <= total;
}

}  // namespace tblob
