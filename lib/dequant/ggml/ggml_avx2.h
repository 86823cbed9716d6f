// Building blocks of the AVX2 GGML kernels, shared by the translation units of the AVX2 set
// (ggml_avx2.cpp: the table and the non-grid types; ggml_avx2_grid.cpp: the IQ lattice types).
// Include only from files compiled with -mavx2 -mfma -mf16c -ffp-contract=off.
#pragma once
#include <immintrin.h>

#include "dequant/ggml/ggml_blocks.h"

namespace tblob {
namespace ggml {

// The AVX2 whole-row kernel of a block slot. Each is defined and instantiated in the file that
// holds its block body; ggml_avx2.cpp's table lists them all.
template <uint32_t SLOT>
void avx2_rows(const uint8_t *src, size_t nblocks, float *dst, uint32_t flags);
#define TBLOB_GGML_AVX2_DECLARE(fn, slot) \
  template <>                              \
  void avx2_rows<slot>(const uint8_t *, size_t, float *, uint32_t);
TBLOB_GGML_BLOCK_TYPES(TBLOB_GGML_AVX2_DECLARE)
TBLOB_GGML_AVX2_TYPES(TBLOB_GGML_AVX2_DECLARE)
#undef TBLOB_GGML_AVX2_DECLARE

namespace avx2 {

// ---- stores: ordinary (any alignment) or non-temporal (32- or 16-byte aligned dst) --------
enum StoreMode { kPlain = 0, kNt32 = 1, kNt16 = 2 };

template <int M>
inline void st(float *p, __m256 v) {
  if (M == kNt32) {
    _mm256_stream_ps(p, v);
  } else if (M == kNt16) {
    _mm_stream_ps(p, _mm256_castps256_ps128(v));
    _mm_stream_ps(p + 4, _mm256_extractf128_ps(v, 1));
  } else {
    _mm256_storeu_ps(p, v);
  }
}

inline float f16s(const uint8_t *p) { return _cvtsh_ss(load_le16(p)); }
// 8 bytes at p zero-extended to 8 x i32 (unaligned).
inline __m256i u8x8(const uint8_t *p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p))); }
inline __m256i i8x8(const uint8_t *p) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p))); }
inline __m256 cvt(__m256i v) { return _mm256_cvtepi32_ps(v); }

// 32 signed bytes widened to 4 x 8 f32.
inline void widen32s(__m256i v, __m256 out[4]) {
  const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
  out[0] = cvt(_mm256_cvtepi8_epi32(lo));
  out[1] = cvt(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)));
  out[2] = cvt(_mm256_cvtepi8_epi32(hi));
  out[3] = cvt(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)));
}

// 16 signed bytes widened to 2 x 8 f32.
inline void widen16s(__m128i v, __m256 out[2]) {
  out[0] = cvt(_mm256_cvtepi8_epi32(v));
  out[1] = cvt(_mm256_cvtepi8_epi32(_mm_srli_si128(v, 8)));
}

// ---- row drivers ----------------------------------------------------------------------------
// B<M>::run(block, y) decodes one block with finite scales, storing with mode M.
template <uint32_t SLOT, template <int> class B, int M>
void run_blocks(const uint8_t *src, size_t nblocks, float *dst) {
  for_each_block<SLOT>(src, nblocks, dst, [](const uint8_t *b, float *y) { B<M>::run(b, y); });
}

// Non-temporal stores when the dispatcher asks for them (kStream) and dst allows them.
template <uint32_t SLOT, template <int> class B>
void rows(const uint8_t *src, size_t nblocks, float *dst, uint32_t flags) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst);
  if ((flags & kStream) && (a & 31u) == 0) {
    run_blocks<SLOT, B, kNt32>(src, nblocks, dst);
    _mm_sfence();
  } else if ((flags & kStream) && (a & 15u) == 0) {
    run_blocks<SLOT, B, kNt16>(src, nblocks, dst);
    _mm_sfence();
  } else {
    run_blocks<SLOT, B, kPlain>(src, nblocks, dst);
  }
}

}  // namespace avx2

// Defines avx2_rows<slot> with block body fn<M> (use in namespace tblob::ggml, outside any
// anonymous namespace, after the body).
#define TBLOB_GGML_AVX2_ROWS(fn, slot)                                                    \
  namespace {                                                                             \
  template <int M>                                                                        \
  struct fn##_t {                                                                         \
    static void run(const uint8_t *b, float *y) { fn<M>(b, y); }                          \
  };                                                                                      \
  }                                                                                       \
  template <>                                                                             \
  void avx2_rows<slot>(const uint8_t *src, size_t nblocks, float *dst, uint32_t flags) {  \
    avx2::rows<slot, fn##_t>(src, nblocks, dst, flags);                                   \
  }

}  // namespace ggml
}  // namespace tblob
