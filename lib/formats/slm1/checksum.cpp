#include "formats/slm1/checksum.h"

namespace tblob {
namespace slm1 {

namespace {

constexpr uint64_t kPrime = 0x100000001b3ull;
constexpr uint64_t kFieldBegin = 100, kFieldEnd = 108;  // the checksum field, read as zero

inline uint64_t step(uint64_t c, uint64_t b, uint64_t i) {
  c ^= b | (i << 8);
  c = (c << 27) | (c >> 37);
  return c * kPrime;
}

}  // namespace

void ChecksumStream::update(const uint8_t *p, size_t n) {
  uint64_t c = c_, i = i_;
  size_t k = 0;
  // The few bytes before and inside the checksum field take the careful path.
  while (k < n && i < kFieldEnd) {
    c = step(c, (i >= kFieldBegin) ? 0 : p[k], i);
    ++k;
    ++i;
  }
  for (; k < n; ++k, ++i) c = step(c, p[k], i);
  c_ = c;
  i_ = i;
}

uint64_t checksum(const uint8_t *buf, uint64_t len) {
  ChecksumStream s;
  // len fits in size_t: it is the length of a buffer in memory.
  s.update(buf, static_cast<size_t>(len));
  return s.value();
}

}  // namespace slm1
}  // namespace tblob
