// The NEON kernel set (AArch64 baseline): x86/vec_kernels.h instantiated with VNeon.
// Compiled with -ffp-contract=off (GCC would otherwise fuse vmulq/vaddq into FMLA).
#include <cstring>

#include "dequant/arm/neon_kernels.h"
#include "dequant/arm/neon_vec.h"

namespace tblob {
void neon_fill_kernels(KernelTable *t) { vk::fill_table<vk::VNeon>(t); }

void neon_stream_copy(void *dst, const void *src, size_t n) {
  uint8_t *d = static_cast<uint8_t *>(dst);
  const uint8_t *s = static_cast<const uint8_t *>(src);
  size_t head = (32u - (reinterpret_cast<uintptr_t>(d) & 31u)) & 31u;
  if (head > n) head = n;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= 32; n -= 32, d += 32, s += 32) {
    const uint8x16_t a = vld1q_u8(s);
    const uint8x16_t b = vld1q_u8(s + 16);
    __asm__ volatile("stnp %q0, %q1, [%2]" : : "w"(a), "w"(b), "r"(d) : "memory");
  }
  std::memcpy(d, s, n);
}

}  // namespace tblob
