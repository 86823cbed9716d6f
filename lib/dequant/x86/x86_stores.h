// Plain or non-temporal (NT: the address aligned to the store's width) stores of 16 and 32
// bytes, shared by the AVX2 and AVX-512 vector abstractions. Include only from a translation
// unit compiled with -mavx2 or wider; internal linkage, as vec_kernels.h explains.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace tblob {
namespace {
namespace vk {

template <bool NT>
inline void st128(uint8_t *p, __m128i x) {
  if constexpr (NT) {
    _mm_stream_si128(reinterpret_cast<__m128i *>(p), x);
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), x);
  }
}

template <bool NT>
inline void st256(uint8_t *p, __m256i x) {
  if constexpr (NT) {
    _mm256_stream_si256(reinterpret_cast<__m256i *>(p), x);
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), x);
  }
}

}  // namespace vk
}  // namespace
}  // namespace tblob
