// AVX-512 (F + BW + VL) vector abstraction for vec_kernels.h: 16 lanes of 32 bits. Include
// only from a translation unit compiled with -mavx512f -mavx512bw -mavx512vl
// (x86/avx512_kernels.cpp). AVX512_BF16's conversions flush subnormal inputs, so they cannot
// match convert.h's f32_to_bf16 in general: only x86/avx512ext_kernels.cpp uses them, for
// groups whose arithmetic provably stays normal.
#pragma once
#include <immintrin.h>

#include <type_traits>

#include "dequant/x86/vec_kernels.h"
#include "dequant/x86/x86_stores.h"

namespace tblob {
namespace {
namespace vk {

struct Avx512Lut32 {
  __m512 t;  // 16 f32 entries
};
struct Avx512Lut16 {
  __m512i t;  // 16 u16 entries in the low 256 bits
};

constexpr int kRne512 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

struct VAvx512 {
  static constexpr int W = 16;
  static constexpr bool kPairs = true;  // make_pair / expand4_pair: two groups per table
  using Lut16 = Avx512Lut16;
  using U = __m512i;
  using F = __m512;
  using M = __mmask16;

  static U zero() { return _mm512_setzero_si512(); }
  static U set1(uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }
  static U load8(const uint8_t *p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
  }
  static U load16(const uint8_t *p) {
    return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
  }
  static U load32(const uint8_t *p) { return _mm512_loadu_si512(p); }
  static void load8x16(const uint8_t *p, U *q) { q[0] = load8(p); }
  static void load8x16s(const uint8_t *p, U *q) {  // 16 signed bytes, sign-extended
    q[0] = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
  }
  static U band(U a, U b) { return _mm512_and_si512(a, b); }
  static U bor(U a, U b) { return _mm512_or_si512(a, b); }
  static U add(U a, U b) { return _mm512_add_epi32(a, b); }
  template <int N>
  static U shl(U a) { return _mm512_slli_epi32(a, N); }
  template <int N>
  static U shr(U a) { return _mm512_srli_epi32(a, N); }
  static U shrv(U a, U n) { return _mm512_srlv_epi32(a, n); }
  static M eq(U a, U b) { return _mm512_cmpeq_epi32_mask(a, b); }
  static M gt(U a, U b) { return _mm512_cmpgt_epi32_mask(a, b); }
  static U sel(M m, U a, U b) { return _mm512_mask_blend_epi32(m, b, a); }
  static F asf(U a) { return _mm512_castsi512_ps(a); }
  static U asu(F a) { return _mm512_castps_si512(a); }
  static F cvt(U a) { return _mm512_cvtepi32_ps(a); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F addf(F a, F b) { return _mm512_add_ps(a, b); }
  static F subf(F a, F b) { return _mm512_sub_ps(a, b); }
  static M isnan(F a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static uint32_t lane0(U a) { return static_cast<uint32_t>(_mm_cvtsi128_si32(_mm512_castsi512_si128(a))); }

  static U h2f_fast(U h) { return _mm512_castps_si512(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(h))); }
  static U round_f16(U x) { return _mm512_castps_si512(_mm512_cvtph_ps(_mm512_cvtps_ph(asf(x), kRne512))); }

  static void store32(uint8_t *p, U x) { _mm512_storeu_si512(p, x); }
  static void store_f16(uint8_t *p, U x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), _mm512_cvtps_ph(asf(x), kRne512));
  }
  static void store_n16(uint8_t *p, U x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), _mm512_cvtepi32_epi16(x));
  }
  // Non-temporal forms (p aligned to the store's width).
  template <bool NT>
  static void st512(uint8_t *p, __m512i x) {
    if constexpr (NT) {
      _mm512_stream_si512(reinterpret_cast<__m512i *>(p), x);
    } else {
      _mm512_storeu_si512(p, x);
    }
  }
  static void stream32(uint8_t *p, U x) { st512<true>(p, x); }
  static void stream_f16(uint8_t *p, U x) { st256<true>(p, _mm512_cvtps_ph(asf(x), kRne512)); }
  static void stream_n16(uint8_t *p, U x) { st256<true>(p, _mm512_cvtepi32_epi16(x)); }

  // 16 E4M3 codes -> their value / 256 as f32 bits (exact: E4M3 bits shifted into an f16,
  // then the hardware f16 -> f32 widening). ocp: codes 0x7F/0xFF give a quiet NaN.
  static void e4m3_div256x16(const uint8_t *p, U *out, bool ocp) {
    const __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
    const __m256i sign = _mm256_and_si256(_mm256_slli_epi16(w, 8), _mm256_set1_epi16(static_cast<short>(0x8000)));
    __m256i h = _mm256_ternarylogic_epi32(_mm256_slli_epi16(w, 7), sign, _mm256_set1_epi16(0x3F80), 0xEC);
    if (ocp) {
      const __mmask16 nan = _mm256_cmpeq_epi16_mask(_mm256_and_si256(w, _mm256_set1_epi16(0x7F)), _mm256_set1_epi16(0x7F));
      h = _mm256_mask_mov_epi16(h, nan, _mm256_or_si256(sign, _mm256_set1_epi16(0x7E00)));
    }
    out[0] = _mm512_castps_si512(_mm512_cvtph_ps(h));
  }

  // mxfp8 to bf16 by bit assembly, for a scale 2^k with sexp = k + 127 in 10..246: every
  // E4M3 value (2^-9 <= |x| <= 480, at most 4 significant bits) times 2^k is then a normal
  // bf16, exact. A normal code (exponent field E >= 1, mantissa m) is (E + 120 + k) << 7 |
  // m << 4, i.e. (code & 0x7F) << 4 plus (sexp - 7) << 7; a subnormal one (m * 2^-9) comes
  // from an 8-entry table of m * 2^-9's bits plus k << 7 (0 stays 0); then the sign; OCP NaN
  // codes (ocp: 0x7F / 0xFF) give the canonical NaN 0x7FC0 as the NaN rule does. 32 codes at p.
  static constexpr bool kMx8Bits = true;
  template <bool NT>
  TBLOB_VK_INLINE static void mxfp8_bf16_x32(const uint8_t *p, uint32_t sexp, bool ocp, uint8_t *dst) {
    const __m512i w = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
    const __m512i m4 = _mm512_and_si512(_mm512_slli_epi16(w, 4), _mm512_set1_epi16(0x07F0));  // (code & 0x7F) << 4
    __m512i r = _mm512_add_epi16(m4, _mm512_set1_epi16(static_cast<short>((sexp - 7u) << 7)));
    const __m512i sub_base = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x3C60,
                                              0x3C40, 0x3C20, 0x3C00, 0x3BC0, 0x3B80, 0x3B00, 0);
    const __m512i sub = _mm512_maskz_add_epi16(0xFEu, sub_base, _mm512_set1_epi16(static_cast<short>(static_cast<uint16_t>((sexp - 127u) << 7))));
    // subnormal lanes (E = 0): w's bits 0-4 are m, the table index
    r = _mm512_mask_permutexvar_epi16(r, _mm512_cmplt_epu16_mask(m4, _mm512_set1_epi16(0x80)), w, sub);
    r = _mm512_ternarylogic_epi32(r, _mm512_slli_epi16(w, 8), _mm512_set1_epi16(static_cast<short>(0x8000)), 0xF8);  // r | sign
    if (ocp) r = _mm512_mask_mov_epi16(r, _mm512_cmpeq_epi16_mask(m4, _mm512_set1_epi16(0x07F0)), _mm512_set1_epi16(0x7FC0));
    st512<NT>(dst, r);
  }

  static U gather2(const uint8_t *w, U off) {
    const __m512i win = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i *>(w)));
    const __m512i ctrl = _mm512_add_epi32(_mm512_add_epi32(_mm512_slli_epi32(off, 8), off), set1(0x80800100u));
    return _mm512_shuffle_epi8(win, ctrl);
  }

  template <uint32_t OUT>
  using Lut = typename std::conditional<OUT == kOutF32, Avx512Lut32, Avx512Lut16>::type;

  template <uint32_t OUT>
  TBLOB_VK_INLINE static Lut<OUT> make_lut(const U *v) {
    if constexpr (OUT == kOutF32) {
      return Lut<OUT>{asf(v[0])};
    } else if constexpr (OUT == kOutF16) {
      return Lut<OUT>{_mm512_castsi256_si512(_mm512_cvtps_ph(asf(v[0]), kRne512))};
    } else {
      // make() NaNs are canonical (0x7FC00000), which the integer RNE maps to 0x7FC0 like
      // convert.h's NaN rule: no NaN select.
      return Lut<OUT>{_mm512_castsi256_si512(_mm512_cvtepi32_epi16(Ops<VAvx512>::to_bf16<false>(v[0])))};
    }
  }

  // Two 16-entry 16-bit tables in one: group a's in the low 256 bits, group b's in the high.
  template <uint32_t OUT>
  TBLOB_VK_INLINE static Avx512Lut16 make_lut2(const U *a, const U *b) {
    static_assert(OUT != kOutF32, "16-bit outputs only");
    const Avx512Lut16 la = make_lut<OUT>(a), lb = make_lut<OUT>(b);
    return Avx512Lut16{_mm512_inserti64x4(la.t, _mm512_castsi512_si256(lb.t), 1)};
  }
  // The same from values given as f32 bits (canonical NaN) whose bf16 is their top half when
  // kExact (the low 16 bits are zero: exact products of FP4 values and power-of-two or
  // 4-significant-bit scales), else rounded first (the integer RNE keeps 0x7FC00000 and
  // infinities); one vpermt2w then picks both groups' top halves, in place of two narrowings.
  template <uint32_t OUT, bool kExact>
  TBLOB_VK_INLINE static Avx512Lut16 make_pair(const U *a, const U *b) {
    if constexpr (OUT == kOutBF16) {
      U x = a[0], y = b[0];
      if (!kExact) {
        x = Ops<VAvx512>::round_bf16<false>(x);
        y = Ops<VAvx512>::round_bf16<false>(y);
      }
      return Avx512Lut16{_mm512_permutex2var_epi16(x, odd_words(), y)};
    } else {
      return make_lut2<OUT>(a, b);
    }
  }
  static __m512i odd_words() {  // word i: 2i + 1 (the first table), 32 + 2i + 1 (the second)
    return _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29, 27, 25, 23,
                            21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  }
  // vpermw indices of the 32 4-bit codes in the 16 bytes at p, in output order: byte b
  // zero-extended to a dword, (b | b << 12) & 0x000F000F holds its low nibble in the low word
  // and its high nibble in the high word. vpermw reads bits 0-4 of each word, so bit 4 (the
  // table's upper 16 entries) is set by the caller where wanted.
  TBLOB_VK_INLINE static __m512i nib_idx(const uint8_t *p) {
    const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
    return _mm512_ternarylogic_epi32(b, _mm512_slli_epi32(b, 12), _mm512_set1_epi32(0x000F000F), 0xA8);  // (b|c)&m
  }
  // 32 codes at p, the first 16 through group a's table, the next 16 through group b's.
  template <bool NT>
  TBLOB_VK_INLINE static void expand4x2(const uint8_t *p, const Avx512Lut16 &l, uint8_t *dst) {
    const __m512i hi = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(16), 1);
    st512<NT>(dst, _mm512_permutexvar_epi16(_mm512_or_si512(nib_idx(p), hi), l.t));
  }
  // gsize (a multiple of 32) codes at p through group a's table, then gsize through group b's.
  template <bool NT>
  TBLOB_VK_INLINE static void expand4_pair(const uint8_t *p, uint64_t gsize, const Avx512Lut16 &l, uint8_t *dst) {
    for (uint64_t k = 0; k < gsize; k += 32, p += 16, dst += 64) {
      st512<NT>(dst, _mm512_permutexvar_epi16(nib_idx(p), l.t));
    }
    const __m512i hi = _mm512_set1_epi16(16);
    for (uint64_t k = 0; k < gsize; k += 32, p += 16, dst += 64) {
      st512<NT>(dst, _mm512_permutexvar_epi16(_mm512_or_si512(nib_idx(p), hi), l.t));
    }
  }

  static void nibbles(__m128i x, __m128i *c0, __m128i *c1) {
    const __m128i m = _mm_set1_epi8(0x0F);
    const __m128i lo = _mm_and_si128(x, m);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), m);
    *c0 = _mm_unpacklo_epi8(lo, hi);
    *c1 = _mm_unpackhi_epi8(lo, hi);
  }

  template <uint32_t OUT, bool NT = false>
  TBLOB_VK_INLINE static void expand4(const uint8_t *p, uint64_t n, const Lut<OUT> &l, uint8_t *dst) {
    uint64_t k = 0;
    if constexpr (OUT == kOutF32) {
      for (; k + 32 <= n; k += 32, p += 16, dst += 128) {
        __m128i c0, c1;
        nibbles(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)), &c0, &c1);
        st512<NT>(dst, _mm512_castps_si512(_mm512_permutexvar_ps(_mm512_cvtepu8_epi32(c0), l.t)));
        st512<NT>(dst + 64, _mm512_castps_si512(_mm512_permutexvar_ps(_mm512_cvtepu8_epi32(c1), l.t)));
      }
      if (k < n) {
        __m128i c0, c1;
        nibbles(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)), &c0, &c1);
        st512<NT>(dst, _mm512_castps_si512(_mm512_permutexvar_ps(_mm512_cvtepu8_epi32(c0), l.t)));
      }
    } else {
      for (; k + 32 <= n; k += 32, p += 16, dst += 64) {
        st512<NT>(dst, _mm512_permutexvar_epi16(nib_idx(p), l.t));
      }
      if (k < n) {
        __m128i c0, c1;
        nibbles(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)), &c0, &c1);
        const __m256i idx = _mm256_cvtepu8_epi16(c0);
        st256<NT>(dst, _mm256_permutexvar_epi16(idx, _mm512_castsi512_si256(l.t)));
      }
    }
  }
};

}  // namespace vk
}  // namespace
}  // namespace tblob
