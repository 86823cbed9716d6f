// The AVX2 kernel set: vec_kernels.h instantiated with VAvx2. Compiled with -mavx2 -mf16c
// -ffp-contract=off (no FMA: MLX's affine arithmetic rounds the product and the sum apart).
#include <cstring>

#include "dequant/x86/avx2_vec.h"
#include "dequant/x86/x86_kernels.h"

namespace tblob {

void avx2_fill_kernels(KernelTable *t) {
  vk::fill_table<vk::VAvx2>(t);
}

void avx2_stream_copy(void *dst, const void *src, size_t n) {
  uint8_t *d = static_cast<uint8_t *>(dst);
  const uint8_t *s = static_cast<const uint8_t *>(src);
  size_t head = (32u - (reinterpret_cast<uintptr_t>(d) & 31u)) & 31u;
  if (head > n) head = n;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= 128; n -= 128, d += 128, s += 128) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + 64));
    const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i *>(d), a);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(d + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(d + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(d + 96), e);
  }
  for (; n >= 32; n -= 32, d += 32, s += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i *>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s)));
  }
  std::memcpy(d, s, n);
}

}  // namespace tblob
