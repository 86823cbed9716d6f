// The AVX-512 kernel set (F + BW + VL): vec_kernels.h instantiated with VAvx512. Compiled with
// -mavx512f -mavx512bw -mavx512vl -ffp-contract=off (AVX-512F has FMA; contraction must stay
// off so products and sums round separately, as MLX and scalar/ do).
#include <cstring>

#include "dequant/x86/avx512_vec.h"
#include "dequant/x86/x86_kernels.h"

namespace tblob {
void avx512_fill_kernels(KernelTable *t) { vk::fill_table<vk::VAvx512>(t); }

void avx512_stream_copy(void *dst, const void *src, size_t n) {
  uint8_t *d = static_cast<uint8_t *>(dst);
  const uint8_t *s = static_cast<const uint8_t *>(src);
  size_t head = (64u - (reinterpret_cast<uintptr_t>(d) & 63u)) & 63u;
  if (head > n) head = n;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= 256; n -= 256, d += 256, s += 256) {
    const __m512i a = _mm512_loadu_si512(s);
    const __m512i b = _mm512_loadu_si512(s + 64);
    const __m512i c = _mm512_loadu_si512(s + 128);
    const __m512i e = _mm512_loadu_si512(s + 192);
    _mm512_stream_si512(reinterpret_cast<__m512i *>(d), a);
    _mm512_stream_si512(reinterpret_cast<__m512i *>(d + 64), b);
    _mm512_stream_si512(reinterpret_cast<__m512i *>(d + 128), c);
    _mm512_stream_si512(reinterpret_cast<__m512i *>(d + 192), e);
  }
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i *>(d), _mm512_loadu_si512(s));
  }
  std::memcpy(d, s, n);
}

}  // namespace tblob
