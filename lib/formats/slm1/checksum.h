// The SLM1 whole-file checksum, our interpretation (docs/slm1.md section 10): start at the
// FNV-1a 64 offset basis; per byte i (bytes 100-107 read as 0):
//   c ^= byte | (i << 8);  c = rotl64(c, 27);  c *= 0x100000001b3.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tblob {
namespace slm1 {

// Incremental form: bytes are fed in file order, from file offset 0.
class ChecksumStream {
 public:
  void update(const uint8_t *p, size_t n);
  uint64_t value() const { return c_; }
  uint64_t position() const { return i_; }

 private:
  uint64_t c_ = 0xcbf29ce484222325ull;
  uint64_t i_ = 0;
};

uint64_t checksum(const uint8_t *buf, uint64_t len);

}  // namespace slm1
}  // namespace tblob
