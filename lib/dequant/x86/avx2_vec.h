// AVX2 (+F16C) vector abstraction for vec_kernels.h: 8 lanes of 32 bits. Include only from a
// translation unit compiled with -mavx2 -mf16c (x86/avx2_kernels.cpp).
#pragma once
#include <immintrin.h>

#include <type_traits>

#include "dequant/x86/vec_kernels.h"

namespace tblob {
namespace {
namespace vk {

struct Avx2Lut32 {
  __m256 lo, hi;  // entries 0-7 and 8-15
};
struct Avx2Lut16 {
  __m256i plo, phi;  // low / high bytes of the 16 entries, in both 128-bit lanes
};

constexpr int kRne = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

struct VAvx2 {
  static constexpr int W = 8;
  using U = __m256i;
  using F = __m256;
  using M = __m256i;

  static U zero() { return _mm256_setzero_si256(); }
  static U set1(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
  static U load8(const uint8_t *p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)));
  }
  static U load16(const uint8_t *p) {
    return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
  }
  static U load32(const uint8_t *p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)); }
  static void load8x16(const uint8_t *p, U *q) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    q[0] = _mm256_cvtepu8_epi32(x);
    q[1] = _mm256_cvtepu8_epi32(_mm_srli_si128(x, 8));
  }
  // 16 signed bytes -> sign-extended int32 lanes.
  static void load8x16s(const uint8_t *p, U *q) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    q[0] = _mm256_cvtepi8_epi32(x);
    q[1] = _mm256_cvtepi8_epi32(_mm_srli_si128(x, 8));
  }
  static U band(U a, U b) { return _mm256_and_si256(a, b); }
  static U bor(U a, U b) { return _mm256_or_si256(a, b); }
  static U add(U a, U b) { return _mm256_add_epi32(a, b); }
  template <int N>
  static U shl(U a) { return _mm256_slli_epi32(a, N); }
  template <int N>
  static U shr(U a) { return _mm256_srli_epi32(a, N); }
  static U shrv(U a, U n) { return _mm256_srlv_epi32(a, n); }
  static M eq(U a, U b) { return _mm256_cmpeq_epi32(a, b); }
  static M gt(U a, U b) { return _mm256_cmpgt_epi32(a, b); }
  static U sel(M m, U a, U b) { return _mm256_blendv_epi8(b, a, m); }
  static F asf(U a) { return _mm256_castsi256_ps(a); }
  static U asu(F a) { return _mm256_castps_si256(a); }
  static F cvt(U a) { return _mm256_cvtepi32_ps(a); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F addf(F a, F b) { return _mm256_add_ps(a, b); }
  static M isnan(F a) { return _mm256_castps_si256(_mm256_cmp_ps(a, a, _CMP_UNORD_Q)); }
  static uint32_t lane0(U a) { return static_cast<uint32_t>(_mm_cvtsi128_si32(_mm256_castsi256_si128(a))); }

  // Low 16 bits of each lane -> 8 x u16 (lanes hold values < 65536).
  static __m128i narrow16(U a) {
    const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, a), 0x08);
    return _mm256_castsi256_si128(p);
  }
  static U h2f_fast(U h) { return _mm256_castps_si256(_mm256_cvtph_ps(narrow16(h))); }
  static U round_f16(U x) { return _mm256_castps_si256(_mm256_cvtph_ps(_mm256_cvtps_ph(asf(x), kRne))); }

  static void store32(uint8_t *p, U x) { _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), x); }
  static void store_f16(uint8_t *p, U x) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p), _mm256_cvtps_ph(asf(x), kRne));
  }
  static void store_n16(uint8_t *p, U x) { _mm_storeu_si128(reinterpret_cast<__m128i *>(p), narrow16(x)); }

  // 16 E4M3 codes -> their value / 256 as f32 bits (exact: E4M3 bits shifted into an f16,
  // then the F16C widening). ocp: codes 0x7F/0xFF give a quiet NaN.
  static U e4m3_div256x8(__m128i w, bool ocp) {  // w: 8 codes as u16
    const __m128i sign = _mm_and_si128(_mm_slli_epi16(w, 8), _mm_set1_epi16(static_cast<short>(0x8000)));
    __m128i h = _mm_or_si128(_mm_and_si128(_mm_slli_epi16(w, 7), _mm_set1_epi16(0x3F80)), sign);
    if (ocp) {
      const __m128i nan = _mm_cmpeq_epi16(_mm_and_si128(w, _mm_set1_epi16(0x7F)), _mm_set1_epi16(0x7F));
      h = _mm_blendv_epi8(h, _mm_or_si128(sign, _mm_set1_epi16(0x7E00)), nan);
    }
    return _mm256_castps_si256(_mm256_cvtph_ps(h));
  }
  static void e4m3_div256x16(const uint8_t *p, U *out, bool ocp) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    out[0] = e4m3_div256x8(_mm_cvtepu8_epi16(x), ocp);
    out[1] = e4m3_div256x8(_mm_cvtepu8_epi16(_mm_srli_si128(x, 8)), ocp);
  }

  // Per lane: w[off] | w[off + 1] << 8 (off <= 15; index 16 reads w[0], masked by callers).
  static U gather2(const uint8_t *w, U off) {
    const __m256i win = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(w)));
    const __m256i ctrl = _mm256_add_epi32(_mm256_add_epi32(_mm256_slli_epi32(off, 8), off), set1(0x80800100u));
    return _mm256_shuffle_epi8(win, ctrl);
  }

  // ---- 4-bit lookup tables (hand-written expansion) ----
  template <uint32_t OUT>
  using Lut = typename std::conditional<OUT == kOutF32, Avx2Lut32, Avx2Lut16>::type;

  template <uint32_t OUT>
  static Lut<OUT> make_lut(const U *v) {
    if constexpr (OUT == kOutF32) {
      return Lut<OUT>{asf(v[0]), asf(v[1])};
    } else {
      __m128i a, b;
      if constexpr (OUT == kOutF16) {
        a = _mm256_cvtps_ph(asf(v[0]), kRne);
        b = _mm256_cvtps_ph(asf(v[1]), kRne);
      } else {
        a = narrow16(Ops<VAvx2>::to_bf16(v[0]));
        b = narrow16(Ops<VAvx2>::to_bf16(v[1]));
      }
      const __m128i split = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
      a = _mm_shuffle_epi8(a, split);
      b = _mm_shuffle_epi8(b, split);
      return Lut<OUT>{_mm256_broadcastsi128_si256(_mm_unpacklo_epi64(a, b)),
                      _mm256_broadcastsi128_si256(_mm_unpackhi_epi64(a, b))};
    }
  }

  // Codes of 16 bytes in stream order: c0 = codes 0-15, c1 = codes 16-31.
  static void nibbles(__m128i x, __m128i *c0, __m128i *c1) {
    const __m128i m = _mm_set1_epi8(0x0F);
    const __m128i lo = _mm_and_si128(x, m);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), m);
    *c0 = _mm_unpacklo_epi8(lo, hi);
    *c1 = _mm_unpackhi_epi8(lo, hi);
  }
  static void lut8_f32(uint8_t *dst, __m128i c, const Avx2Lut32 &l) {
    const __m256i idx = _mm256_cvtepu8_epi32(c);
    const __m256 r = _mm256_blendv_ps(_mm256_permutevar8x32_ps(l.lo, idx),
                                      _mm256_permutevar8x32_ps(l.hi, idx),
                                      _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28)));
    _mm256_storeu_ps(reinterpret_cast<float *>(dst), r);
  }

  // Expands n codes (n a multiple of 16) starting at p through the table.
  template <uint32_t OUT>
  static void expand4(const uint8_t *p, uint64_t n, const Lut<OUT> &l, uint8_t *dst) {
    uint64_t k = 0;
    if constexpr (OUT == kOutF32) {
      for (; k + 32 <= n; k += 32, p += 16, dst += 128) {
        __m128i c0, c1;
        nibbles(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)), &c0, &c1);
        lut8_f32(dst, c0, l);
        lut8_f32(dst + 32, _mm_srli_si128(c0, 8), l);
        lut8_f32(dst + 64, c1, l);
        lut8_f32(dst + 96, _mm_srli_si128(c1, 8), l);
      }
      if (k < n) {
        __m128i c0, c1;
        nibbles(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)), &c0, &c1);
        lut8_f32(dst, c0, l);
        lut8_f32(dst + 32, _mm_srli_si128(c0, 8), l);
      }
    } else {
      for (; k + 32 <= n; k += 32, p += 16, dst += 64) {
        __m128i c0, c1;
        nibbles(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)), &c0, &c1);
        const __m256i c = _mm256_set_m128i(c1, c0);
        const __m256i lo = _mm256_shuffle_epi8(l.plo, c);
        const __m256i hi = _mm256_shuffle_epi8(l.phi, c);
        const __m256i w0 = _mm256_unpacklo_epi8(lo, hi);  // outputs 0-7 | 16-23
        const __m256i w1 = _mm256_unpackhi_epi8(lo, hi);  // outputs 8-15 | 24-31
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst), _mm256_permute2x128_si256(w0, w1, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + 32), _mm256_permute2x128_si256(w0, w1, 0x31));
      }
      if (k < n) {
        __m128i c0, c1;
        nibbles(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)), &c0, &c1);
        const __m128i lo = _mm_shuffle_epi8(_mm256_castsi256_si128(l.plo), c0);
        const __m128i hi = _mm_shuffle_epi8(_mm256_castsi256_si128(l.phi), c0);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst), _mm_unpacklo_epi8(lo, hi));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 16), _mm_unpackhi_epi8(lo, hi));
      }
    }
  }
};

}  // namespace vk
}  // namespace
}  // namespace tblob
