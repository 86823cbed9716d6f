// AVX2 row quantizers of the legacy types without importance (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0),
// compiled with -mavx2 -ffp-contract=off and chosen when the GGML kernel set in use is "avx2".
// Bit-exact with legacy.cpp: the same f32 operations per element (a multiply, then an add,
// never fused), CVTTPS2DQ's INT32_MIN for what does not convert (what q::trunc_i32 writes out),
// and the scalar scans' choice among equal values (the first value of the largest magnitude
// keeps its sign; +0 when the block is all zero; the first zero of either sign for a min or max
// of zero). With importance the scalar functions run.
// No inline function of a header shared with the scalar files is used here (an out-of-line copy
// compiled with -mavx2 could be the one the linker keeps for every caller): the f16 store uses
// F16C (round to nearest even, as q::fp16), with q::fp16's NaN rule, in this file.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "dequant/ggml/ggml.h"
#include "quant/ggml/quant_ggml.h"
#include "quant/ggml/quant_rows.h"

namespace tblob {
namespace ggml {

namespace {

inline void store_fp16(uint8_t *p, float f) {
  uint16_t h;
  if (f != f) {
    h = 0xFE00u;  // q::fp16's NaN
  } else {
    h = static_cast<uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0));
  }
  std::memcpy(p, &h, 2);
}
inline void store_u32(uint8_t *p, uint32_t v) { std::memcpy(p, &v, 4); }  // x86: little-endian

inline __m256 abs8(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}
inline float hmin(__m256 v) {
  __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_min_ps(m, _mm_movehl_ps(m, m));
  m = _mm_min_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

// The first of the 32 values equal (==) to v.
inline float first_equal(const __m256 x[4], const float *xb, float v) {
  const __m256 t = _mm256_set1_ps(v);
  for (int k = 0; k < 4; ++k) {
    const int m = _mm256_movemask_ps(_mm256_cmp_ps(x[k], t, _CMP_EQ_OQ));
    if (m) return xb[8 * k + __builtin_ctz(static_cast<unsigned>(m))];
  }
  return v;
}

// The value of largest magnitude, first of equals (legacy.cpp signed_absmax).
inline float signed_absmax(const __m256 x[4], const float *xb) {
  const float amax = hmax(_mm256_max_ps(_mm256_max_ps(abs8(x[0]), abs8(x[1])), _mm256_max_ps(abs8(x[2]), abs8(x[3]))));
  if (amax == 0.0f) return 0.0f;
  const __m256 t = _mm256_set1_ps(amax);
  for (int k = 0; k < 4; ++k) {
    const int m = _mm256_movemask_ps(_mm256_cmp_ps(abs8(x[k]), t, _CMP_EQ_OQ));
    if (m) return xb[8 * k + __builtin_ctz(static_cast<unsigned>(m))];
  }
  return amax;
}

// The low byte of each int32 lane, 8 lanes -> 8 bytes (truncation, as a C narrowing cast).
inline uint64_t low_bytes(__m256i v) {
  const __m256i sh = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                      0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i b = _mm256_shuffle_epi8(v, sh);
  const uint32_t lo = static_cast<uint32_t>(_mm256_extract_epi32(b, 0));
  const uint32_t hi = static_cast<uint32_t>(_mm256_extract_epi32(b, 4));
  return lo | (static_cast<uint64_t>(hi) << 32);
}

// (uint8_t)min(cap, (int8_t)trunc(v)) per lane, as int32 lanes.
inline __m256i capped_i8(__m256 v, int cap) {
  __m256i c = _mm256_cvttps_epi32(v);
  c = _mm256_srai_epi32(_mm256_slli_epi32(c, 24), 24);  // the int8 the cast keeps
  c = _mm256_min_epi32(c, _mm256_set1_epi32(cap));
  return _mm256_and_si256(c, _mm256_set1_epi32(0xFF));
}

// Codes of 32 values (int32 lanes, 0..255) into bytes L[32].
inline void store_codes(const __m256i c[4], uint8_t *L) {
  for (int k = 0; k < 4; ++k) {
    const uint64_t b = low_bytes(c[k]);
    std::memcpy(L + 8 * k, &b, 8);
  }
}

inline void pack_nibbles(const uint8_t *L, uint8_t *qs) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i *>(L));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i *>(L + 16));
  // (lo | hi << 4) kept to a byte: shift hi's bytes with a 16-bit shift and mask.
  const __m128i h4 = _mm_and_si128(_mm_slli_epi16(hi, 4), _mm_set1_epi8(static_cast<char>(0xF0)));
  _mm_storeu_si128(reinterpret_cast<__m128i *>(qs), _mm_or_si128(lo, h4));
}

inline void pack_five(const uint8_t *L, uint8_t *qh, uint8_t *qs) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i *>(L));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i *>(L + 16));
  const __m128i m0f = _mm_set1_epi8(0x0F);
  const __m128i h4 = _mm_slli_epi16(_mm_and_si128(hi, m0f), 4);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(qs), _mm_or_si128(_mm_and_si128(lo, m0f), h4));
  // Bit 4 of each code: moved to bit 7 and gathered by movemask.
  const uint32_t a = static_cast<uint32_t>(_mm_movemask_epi8(_mm_slli_epi16(lo, 3)));
  const uint32_t b = static_cast<uint32_t>(_mm_movemask_epi8(_mm_slli_epi16(hi, 3)));
  store_u32(qh, (a & 0xFFFFu) | ((b & 0xFFFFu) << 16));
}

inline void load4(const float *xb, __m256 x[4]) {
  for (int k = 0; k < 4; ++k) x[k] = _mm256_loadu_ps(xb + 8 * k);
}

// Symmetric: d = max / -half, code min(top, (int8)trunc(x*id + half + 0.5)).
inline float symmetric(const float *xb, int half, uint8_t *L) {
  __m256 x[4];
  load4(xb, x);
  const float max = signed_absmax(x, xb);
  const float d = max / static_cast<float>(-half);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const __m256 vid = _mm256_set1_ps(id), off = _mm256_set1_ps(static_cast<float>(half) + 0.5f);
  __m256i c[4];
  for (int k = 0; k < 4; ++k) c[k] = capped_i8(_mm256_add_ps(_mm256_mul_ps(x[k], vid), off), 2 * half - 1);
  store_codes(c, L);
  return d;
}

// Min/max: d = (max - min) / nmax, m = min; code (x - min)*id + 0.5 truncated (capped at 15
// after the int8 cast for Q4_1; the low byte for Q5_1).
inline float affine(const float *xb, int nmax, bool cap, float *m_out, uint8_t *L) {
  __m256 x[4];
  load4(xb, x);
  float min = hmin(_mm256_min_ps(_mm256_min_ps(x[0], x[1]), _mm256_min_ps(x[2], x[3])));
  float max = hmax(_mm256_max_ps(_mm256_max_ps(x[0], x[1]), _mm256_max_ps(x[2], x[3])));
  if (min == 0.0f) min = first_equal(x, xb, 0.0f);  // the sign of the first zero, as the scan
  if (max == 0.0f) max = first_equal(x, xb, 0.0f);
  const float d = (max - min) / static_cast<float>(nmax);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const __m256 vid = _mm256_set1_ps(id), vmin = _mm256_set1_ps(min), half = _mm256_set1_ps(0.5f);
  __m256i c[4];
  for (int k = 0; k < 4; ++k) {
    const __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(x[k], vmin), vid), half);
    c[k] = cap ? capped_i8(v, nmax) : _mm256_and_si256(_mm256_cvttps_epi32(v), _mm256_set1_epi32(0xFF));
  }
  store_codes(c, L);
  *m_out = min;
  return d;
}

// roundf (half away from zero) per lane: trunc, plus the sign where |x - trunc| >= 0.5.
inline __m256 round_away(__m256 v) {
  const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 frac = abs8(_mm256_sub_ps(v, t));
  const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(v, _mm256_set1_ps(-0.0f)));
  return _mm256_add_ps(t, _mm256_and_ps(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ), one));
}

void q4_0_avx2(const float *x, void *dst, int64_t cols, const float *importance) {
  if (importance) return quantize_row_q4_0(x, dst, cols, importance);
  uint8_t *y = static_cast<uint8_t *>(dst);
  for (int64_t ib = 0; ib < cols / 32; ++ib, y += 18) {
    uint8_t L[32];
    store_fp16(y, symmetric(x + ib * 32, 8, L));
    pack_nibbles(L, y + 2);
  }
}

void q5_0_avx2(const float *x, void *dst, int64_t cols, const float *importance) {
  if (importance) return quantize_row_q5_0(x, dst, cols, importance);
  uint8_t *y = static_cast<uint8_t *>(dst);
  for (int64_t ib = 0; ib < cols / 32; ++ib, y += 22) {
    uint8_t L[32];
    store_fp16(y, symmetric(x + ib * 32, 16, L));
    pack_five(L, y + 2, y + 6);
  }
}

void q4_1_avx2(const float *x, void *dst, int64_t cols, const float *importance) {
  if (importance) return quantize_row_q4_1(x, dst, cols, importance);
  uint8_t *y = static_cast<uint8_t *>(dst);
  for (int64_t ib = 0; ib < cols / 32; ++ib, y += 20) {
    uint8_t L[32];
    float m;
    store_fp16(y, affine(x + ib * 32, 15, true, &m, L));
    store_fp16(y + 2, m);
    pack_nibbles(L, y + 4);
  }
}

void q5_1_avx2(const float *x, void *dst, int64_t cols, const float *importance) {
  if (importance) return quantize_row_q5_1(x, dst, cols, importance);
  uint8_t *y = static_cast<uint8_t *>(dst);
  for (int64_t ib = 0; ib < cols / 32; ++ib, y += 24) {
    uint8_t L[32];
    float m;
    store_fp16(y, affine(x + ib * 32, 31, false, &m, L));
    store_fp16(y + 2, m);
    pack_five(L, y + 4, y + 8);
  }
}

void q8_0_avx2(const float *x, void *dst, int64_t cols, const float *) {
  uint8_t *y = static_cast<uint8_t *>(dst);
  for (int64_t ib = 0; ib < cols / 32; ++ib, y += 34) {
    __m256 v[4];
    load4(x + ib * 32, v);
    const float amax = hmax(_mm256_max_ps(_mm256_max_ps(abs8(v[0]), abs8(v[1])), _mm256_max_ps(abs8(v[2]), abs8(v[3]))));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_fp16(y, d);
    const __m256 vid = _mm256_set1_ps(id);
    for (int k = 0; k < 4; ++k) {
      const uint64_t b = low_bytes(_mm256_cvttps_epi32(round_away(_mm256_mul_ps(v[k], vid))));
      std::memcpy(y + 2 + 8 * k, &b, 8);
    }
  }
}

}  // namespace

RowQuantizeFn avx2_row_quantizer(uint32_t ggml_type) {
  switch (ggml_type) {
    case kTypeQ4_0: return q4_0_avx2;
    case kTypeQ4_1: return q4_1_avx2;
    case kTypeQ5_0: return q5_0_avx2;
    case kTypeQ5_1: return q5_1_avx2;
    case kTypeQ8_0: return q8_0_avx2;
    default: return nullptr;
  }
}

}  // namespace ggml
}  // namespace tblob
