// The streaming-store fill the benchmarks measure themselves against: non-temporal stores of
// a non-zero pattern (some machines write zero lines faster), 128 bytes a step, then a fence;
// the tail past the last whole step is memset. AVX2 where the CPU has it (checked at run
// time: the build has no -mavx2), SSE2 otherwise on x86-64, memset elsewhere. dst: 32-byte
// aligned.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bench {

#if defined(__x86_64__)
__attribute__((target("avx2"))) inline size_t stream_fill_avx2(uint8_t *dst, size_t n) {
  const __m256i z = _mm256_set1_epi32(0x3F800000);
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i), z);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i + 32), z);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i + 64), z);
    _mm256_stream_si256(reinterpret_cast<__m256i *>(dst + i + 96), z);
  }
  return i;
}

inline size_t stream_fill_sse2(uint8_t *dst, size_t n) {
  const __m128i z = _mm_set1_epi32(0x3F800000);
  size_t i = 0;
  for (; i + 128 <= n; i += 128)
    for (size_t k = 0; k < 128; k += 16) _mm_stream_si128(reinterpret_cast<__m128i *>(dst + i + k), z);
  return i;
}
#endif

inline void stream_fill(uint8_t *dst, size_t n) {
  size_t done = 0;
#if defined(__x86_64__)
  done = __builtin_cpu_supports("avx2") ? stream_fill_avx2(dst, n) : stream_fill_sse2(dst, n);
  _mm_sfence();
#endif
  if (done < n) std::memset(dst + done, 0x3F, n - done);
}

}  // namespace bench
