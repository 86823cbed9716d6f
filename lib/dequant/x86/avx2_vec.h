// AVX2 (+F16C) vector abstraction for vec_kernels.h: 8 lanes of 32 bits. Include only from a
// translation unit compiled with -mavx2 -mf16c (x86/avx2_kernels.cpp).
#pragma once
#include <immintrin.h>

#include <type_traits>

#include "dequant/x86/vec_kernels.h"
#include "dequant/x86/x86_stores.h"

namespace tblob {
namespace {
namespace vk {

struct Avx2Lut32 {
  __m256i pl[4];  // byte k of the 16 entries (plane k), in both 128-bit lanes
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
  // Two widening loads (vpmovzxbd from memory) rather than one load and a byte shift.
  static void load8x16(const uint8_t *p, U *q) {
    q[0] = load8(p);
    q[1] = load8(p + 8);
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
  static F subf(F a, F b) { return _mm256_sub_ps(a, b); }
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
  // Non-temporal forms: st128 / st256 (x86_stores.h).
  static void stream32(uint8_t *p, U x) { st256<true>(p, x); }
  // Low 16 bits of the lanes of a, then of b (lanes hold values < 65536): 16 outputs.
  template <bool NT>
  TBLOB_VK_INLINE static void store_n16x2(uint8_t *p, U a, U b) {
    st256<NT>(p, _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8));
  }
  static void stream_f16(uint8_t *p, U x) { st128<true>(p, _mm256_cvtps_ph(asf(x), kRne)); }
  static void stream_n16(uint8_t *p, U x) { st128<true>(p, narrow16(x)); }

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

  // mxfp8 -> f32, 32 codes at p with s256 = 256 * s exact and finite (hot_mxfp8): 16 codes per
  // vector as the f16 bits of E4M3 / 256, (c + (c & 0x80)) << 7 (the sign bit carried from bit
  // 14 into bit 15; E4M3 subnormals become f16 subnormals), OCP NaN codes as 0x7E00 exactly,
  // widened through a stack buffer (vcvtph2ps from memory, as expand4_h2f) and multiplied
  // once: the same single rounding of the same exact product as E4M3 * s. A NaN code widens
  // to the canonical 0x7FC00000, which the product with a finite s256 returns unchanged, so no
  // canonicalisation pass. 8 vector ALU ops per 8 outputs (OCP) against about 15.
  template <bool NT>
  TBLOB_VK_INLINE static void mxfp8_f32_x32(const uint8_t *p, U s256, bool ocp, uint8_t *dst) {
    alignas(32) uint8_t h[64];
    for (int k = 0; k < 2; ++k) {
      const __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p + 16 * k)));
      __m256i x = _mm256_slli_epi16(_mm256_add_epi16(w, _mm256_and_si256(w, _mm256_set1_epi16(0x80))), 7);
      if (ocp) {
        const __m256i nan = _mm256_cmpeq_epi16(_mm256_and_si256(w, _mm256_set1_epi16(0x7F)), _mm256_set1_epi16(0x7F));
        x = _mm256_blendv_epi8(x, _mm256_set1_epi16(0x7E00), nan);
      }
      _mm256_store_si256(reinterpret_cast<__m256i *>(h + 32 * k), x);
    }
    for (int i = 0; i < 4; ++i) st256<NT>(dst + 32 * i, asu(mul(asf(cvtph_mem(h + 16 * i)), asf(s256))));
  }

  // nvfp4 -> f32, two 16-code groups (16 bytes at p) with finite scales sa, sb: every FP4
  // value is an f16 whose low byte is zero, so one fixed 16-entry plane gives each code's f16
  // high byte; the f16 runs are widened from a stack buffer (as expand4_h2f) and multiplied
  // by the group's scale, the scalar's single rounding of the same exact product (then by the
  // global multiplier g when mul_g, the scalar's second product). 15 vector ALU ops per 32
  // outputs against about 40 for two expand4_perm_f32 groups.
  template <bool NT>
  TBLOB_VK_INLINE static void nvfp4_f32_x2(const uint8_t *p, U sa, U sb, bool mul_g, U g, uint8_t *dst) {
    // f16 high bytes of FP4 codes 0-15: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives
    const __m256i t = _mm256_setr_epi8(0, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46, -128, -72, -68, -66, -64, -62,
                                       -60, -58, 0, 0x38, 0x3C, 0x3E, 0x40, 0x42, 0x44, 0x46, -128, -72, -68, -66,
                                       -64, -62, -60, -58);
    // codes as in expand4_h2f: lane 0 holds group a's 16 codes in order, lane 1 group b's
    const __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
    const __m256i c = _mm256_and_si256(_mm256_or_si256(w, _mm256_slli_epi16(w, 4)), _mm256_set1_epi8(0x0F));
    const __m256i hi = _mm256_shuffle_epi8(t, c);
    alignas(32) uint8_t h[64];
    _mm256_store_si256(reinterpret_cast<__m256i *>(h), _mm256_unpacklo_epi8(_mm256_setzero_si256(), hi));  // a0-7 | b0-7
    _mm256_store_si256(reinterpret_cast<__m256i *>(h + 32), _mm256_unpackhi_epi8(_mm256_setzero_si256(), hi));  // a8-15 | b8-15
    const int src[4] = {0, 32, 16, 48};
    for (int i = 0; i < 4; ++i) {
      F v = mul(asf(cvtph_mem(h + src[i])), asf(i < 2 ? sa : sb));
      if (mul_g) v = mul(v, asf(g));
      st256<NT>(dst + 32 * i, asu(v));
    }
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
  TBLOB_VK_INLINE static Lut<OUT> make_lut(const U *v) {
    if constexpr (OUT == kOutF32) {
      // Transpose each lane's 4 entries into byte planes, then gather each plane's 4 dwords
      // (entries 0-3, 4-7, 8-11, 12-15) into one 16-byte table repeated in both lanes.
      const __m256i tr = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                          0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
      const __m256i a = _mm256_shuffle_epi8(v[0], tr), b = _mm256_shuffle_epi8(v[1], tr);
      const __m256i u = _mm256_unpacklo_epi32(a, b);  // P0(0-3) P0(8-11) P1(0-3) P1(8-11) | 4-7, 12-15
      const __m256i w = _mm256_unpackhi_epi32(a, b);  // the same for planes 2 and 3
      const __m256i even = _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5);
      const __m256i odd = _mm256_setr_epi32(2, 6, 3, 7, 2, 6, 3, 7);
      return Lut<OUT>{{_mm256_permutevar8x32_epi32(u, even), _mm256_permutevar8x32_epi32(u, odd),
                       _mm256_permutevar8x32_epi32(w, even), _mm256_permutevar8x32_epi32(w, odd)}};
    } else if constexpr (OUT == kOutF16) {
      // Entries 0-7 | 8-15 as f16, each lane split into its low and high bytes, then each
      // plane's two halves gathered into both lanes.
      const __m256i h = _mm256_set_m128i(_mm256_cvtps_ph(asf(v[1]), kRne), _mm256_cvtps_ph(asf(v[0]), kRne));
      const __m256i split = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                             0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
      const __m256i s = _mm256_shuffle_epi8(h, split);
      return Lut<OUT>{_mm256_permute4x64_epi64(s, 0x88), _mm256_permute4x64_epi64(s, 0xDD)};
    } else {
      // bf16 by the integer RNE of convert.h without its NaN rule: make() gives canonical NaNs
      // (0x7FC00000), which round to 0x7FC0, the NaN rule's result too. Bytes 2 and 3 of
      // x + 0x7FFF + lsb are the bf16's low and high bytes: one in-lane byte gather per
      // vector (4 entries per lane), then the planes' dwords into both lanes.
      const U r0 = add(v[0], add(set1(0x7FFFu), band(shr<16>(v[0]), set1(1))));
      const U r1 = add(v[1], add(set1(0x7FFFu), band(shr<16>(v[1]), set1(1))));
      const __m256i tr = _mm256_setr_epi8(2, 6, 10, 14, 3, 7, 11, 15, -1, -1, -1, -1, -1, -1, -1, -1,
                                          2, 6, 10, 14, 3, 7, 11, 15, -1, -1, -1, -1, -1, -1, -1, -1);
      const __m256i u = _mm256_unpacklo_epi32(_mm256_shuffle_epi8(r0, tr), _mm256_shuffle_epi8(r1, tr));
      return Lut<OUT>{_mm256_permutevar8x32_epi32(u, _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5)),
                      _mm256_permutevar8x32_epi32(u, _mm256_setr_epi32(2, 6, 3, 7, 2, 6, 3, 7))};
    }
  }

  // Two 16-entry 16-bit tables in one: group a's planes in lane 0, group b's in lane 1, for
  // pairs of 16-code groups (expand4x2).
  template <uint32_t OUT>
  TBLOB_VK_INLINE static Avx2Lut16 make_lut2(const U *a, const U *b) {
    static_assert(OUT != kOutF32, "16-bit outputs only");
    // Per group: low-byte plane of its 16 entries in lane 0, high-byte plane in lane 1.
    auto planes = [](const U *v) TBLOB_VK_INLINE {
      if constexpr (OUT == kOutF16) {
        const __m256i h = _mm256_set_m128i(_mm256_cvtps_ph(asf(v[1]), kRne), _mm256_cvtps_ph(asf(v[0]), kRne));
        const __m256i split = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                               0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
        return _mm256_permute4x64_epi64(_mm256_shuffle_epi8(h, split), 0xD8);
      } else {  // bf16 as in make_lut
        const U r0 = add(v[0], add(set1(0x7FFFu), band(shr<16>(v[0]), set1(1))));
        const U r1 = add(v[1], add(set1(0x7FFFu), band(shr<16>(v[1]), set1(1))));
        const __m256i tr = _mm256_setr_epi8(2, 6, 10, 14, 3, 7, 11, 15, -1, -1, -1, -1, -1, -1, -1, -1,
                                            2, 6, 10, 14, 3, 7, 11, 15, -1, -1, -1, -1, -1, -1, -1, -1);
        const __m256i u = _mm256_unpacklo_epi32(_mm256_shuffle_epi8(r0, tr), _mm256_shuffle_epi8(r1, tr));
        return _mm256_permutevar8x32_epi32(u, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      }
    };
    const __m256i pa = planes(a), pb = planes(b);
    return Avx2Lut16{_mm256_permute2x128_si256(pa, pb, 0x20), _mm256_permute2x128_si256(pa, pb, 0x31)};
  }
  // 32 codes at p, the first 16 through lane 0's table (group a), the next 16 through lane 1's.
  template <bool NT>
  TBLOB_VK_INLINE static void expand4x2(const uint8_t *p, const Avx2Lut16 &l, uint8_t *dst) {
    const __m256i pick = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, -1, -1, -1, -1, -1, -1, -1, -1,
                                          8, 9, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i m = _mm256_set1_epi8(0x0F);
    const __m256i x = _mm256_shuffle_epi8(
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))), pick);
    const __m256i c = _mm256_unpacklo_epi8(_mm256_and_si256(x, m), _mm256_and_si256(_mm256_srli_epi16(x, 4), m));
    const __m256i lo = _mm256_shuffle_epi8(l.plo, c), hi = _mm256_shuffle_epi8(l.phi, c);
    const __m256i w0 = _mm256_unpacklo_epi8(lo, hi);  // outputs 0-7 | 16-23
    const __m256i w1 = _mm256_unpackhi_epi8(lo, hi);  // outputs 8-15 | 24-31
    st256<NT>(dst, _mm256_permute2x128_si256(w0, w1, 0x20));
    st256<NT>(dst + 32, _mm256_permute2x128_si256(w0, w1, 0x31));
  }

  // Codes of 16 bytes in stream order: c0 = codes 0-15, c1 = codes 16-31.
  static void nibbles(__m128i x, __m128i *c0, __m128i *c1) {
    const __m128i m = _mm_set1_epi8(0x0F);
    const __m128i lo = _mm_and_si128(x, m);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), m);
    *c0 = _mm_unpacklo_epi8(lo, hi);
    *c1 = _mm_unpackhi_epi8(lo, hi);
  }
  // 32 codes from 16 bytes x (both lanes hold them) as byte indices, lane 0 holding the codes
  // of outputs 0-3, 8-11, 16-19, 24-27 and lane 1 those of 4-7, 12-15, 20-23, 28-31, so that
  // the byte-plane lookups interleave back into whole 8-output runs without crossing lanes.
  // Each byte is duplicated into a 16-bit word; the low byte keeps the low nibble, the high
  // byte takes the word shifted right by 4 (its own high nibble).
  static __m256i codes32_f32(__m256i x) {
    const __m256i dup = _mm256_setr_epi8(0, 0, 1, 1, 4, 4, 5, 5, 8, 8, 9, 9, 12, 12, 13, 13,
                                         2, 2, 3, 3, 6, 6, 7, 7, 10, 10, 11, 11, 14, 14, 15, 15);
    const __m256i y = _mm256_shuffle_epi8(x, dup);
    const __m256i hi = _mm256_set1_epi16(static_cast<short>(0xFF00));
    return _mm256_and_si256(_mm256_blendv_epi8(y, _mm256_srli_epi16(y, 4), hi), _mm256_set1_epi8(0x0F));
  }
  // Looks up 32 codes (codes32_f32 order) in the planes; stores outputs 0-31 (f32).
  template <bool NT>
  TBLOB_VK_INLINE static void lut32_f32(uint8_t *dst, __m256i c, const Avx2Lut32 &l) {
    const __m256i b0 = _mm256_shuffle_epi8(l.pl[0], c), b1 = _mm256_shuffle_epi8(l.pl[1], c);
    const __m256i b2 = _mm256_shuffle_epi8(l.pl[2], c), b3 = _mm256_shuffle_epi8(l.pl[3], c);
    const __m256i lo01 = _mm256_unpacklo_epi8(b0, b1), hi01 = _mm256_unpackhi_epi8(b0, b1);
    const __m256i lo23 = _mm256_unpacklo_epi8(b2, b3), hi23 = _mm256_unpackhi_epi8(b2, b3);
    st256<NT>(dst, _mm256_unpacklo_epi16(lo01, lo23));
    st256<NT>(dst + 32, _mm256_unpackhi_epi16(lo01, lo23));
    st256<NT>(dst + 64, _mm256_unpacklo_epi16(hi01, hi23));
    st256<NT>(dst + 96, _mm256_unpackhi_epi16(hi01, hi23));
  }

  // f32 outputs of short groups (16 / 32 codes, hot_lut4): no table transposition, the 16
  // results v[0] (entries 0-7) and v[1] (8-15) are looked up directly, 8 outputs at a time.
  // 8 codes are one little-endian dword: broadcast it, shift each lane's code to the bottom
  // (vpermps reads the low 3 bits) and its bit 3 to the top (vblendvps reads the sign bit).
  template <bool NT>
  TBLOB_VK_INLINE static void expand4_perm_f32(const uint8_t *p, uint64_t n, const U *v, uint8_t *dst) {
    const __m256i sr = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    const __m256i sl = _mm256_setr_epi32(28, 24, 20, 16, 12, 8, 4, 0);
    const __m256 lo = asf(v[0]), hi = asf(v[1]);
    for (uint64_t k = 0; k < n; k += 8, p += 4, dst += 32) {
      uint32_t d;  // codes may sit at any byte: a memcpy, not a float load (UBSan: alignment)
      std::memcpy(&d, p, 4);
      const __m256i w = _mm256_set1_epi32(static_cast<int>(d));
      const __m256i i = _mm256_srlv_epi32(w, sr);
      const __m256 sel = _mm256_castsi256_ps(_mm256_sllv_epi32(w, sl));
      st256<NT>(dst, _mm256_castps_si256(_mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, i),
                                                          _mm256_permutevar8x32_ps(hi, i), sel)));
    }
  }

  // f32 outputs of a table of f16 values (Lut<kOutF16>, for groups whose 16 results are f16
  // values: f16-scale affine): the two byte planes looked up as for f16 output, then widened
  // by vcvtph2ps (exact). Per 32 codes: 12 vector ALU ops (4 for the codes, 2 lookups, 2
  // interleaves, 4 widenings) against the f32 planes' 17, and the table is 2 conversions
  // (which also do the last rounding) and 4 shuffles against 8 shuffles after the rounding.
  // The looked-up f16 runs go through a stack buffer so the widening reads memory (vcvtph2ps
  // ymm, m128: no shuffle uop; the register form needs a vextracti128 for the high halves,
  // i.e. two more shuffle uops where shuffles have one port; equal speed on the Xeon here).
  template <bool NT>
  TBLOB_VK_INLINE static void expand4_h2f(const uint8_t *p, uint64_t n, const Avx2Lut16 &l, uint8_t *dst) {
    const __m256i m = _mm256_set1_epi8(0x0F);
    alignas(32) uint8_t h[64];
    uint64_t k = 0;
    for (; k + 32 <= n; k += 32, p += 16, dst += 128) {
      // Byte b widened to a word: (w | w << 4) & 0x0F0F holds b's low nibble (code 2i) in the
      // low byte and its high nibble (code 2i + 1) in the high byte; lane 0 has codes 0-15.
      const __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
      const __m256i c = _mm256_and_si256(_mm256_or_si256(w, _mm256_slli_epi16(w, 4)), m);
      const __m256i lo = _mm256_shuffle_epi8(l.plo, c), hi = _mm256_shuffle_epi8(l.phi, c);
      _mm256_store_si256(reinterpret_cast<__m256i *>(h), _mm256_unpacklo_epi8(lo, hi));  // f16 of 0-7 | 16-23
      _mm256_store_si256(reinterpret_cast<__m256i *>(h + 32), _mm256_unpackhi_epi8(lo, hi));  // 8-15 | 24-31
      st256<NT>(dst, cvtph_mem(h));
      st256<NT>(dst + 32, cvtph_mem(h + 32));
      st256<NT>(dst + 64, cvtph_mem(h + 16));
      st256<NT>(dst + 96, cvtph_mem(h + 48));
    }
    if (k < n) {  // 16 codes left
      __m128i c0, c1;
      nibbles(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)), &c0, &c1);
      const __m128i lo = _mm_shuffle_epi8(_mm256_castsi256_si128(l.plo), c0);
      const __m128i hi = _mm_shuffle_epi8(_mm256_castsi256_si128(l.phi), c0);
      st256<NT>(dst, _mm256_castps_si256(_mm256_cvtph_ps(_mm_unpacklo_epi8(lo, hi))));
      st256<NT>(dst + 32, _mm256_castps_si256(_mm256_cvtph_ps(_mm_unpackhi_epi8(lo, hi))));
    }
  }
  // vcvtph2ps with its memory operand (asm: the compiler would otherwise forward the buffer's
  // store to the conversion through registers, i.e. extract the high half with a shuffle).
  TBLOB_VK_INLINE static __m256i cvtph_mem(const uint8_t *p) {
    __m256 r;
    __asm__("vcvtph2ps %1, %0" : "=x"(r) : "m"(*reinterpret_cast<const __m128i *>(p)));
    return _mm256_castps_si256(r);
  }

  // Expands n codes (n a multiple of 16) starting at p through the table.
  template <uint32_t OUT, bool NT = false>
  TBLOB_VK_INLINE static void expand4(const uint8_t *p, uint64_t n, const Lut<OUT> &l, uint8_t *dst) {
    uint64_t k = 0;
    if constexpr (OUT == kOutF32) {
      for (; k + 32 <= n; k += 32, p += 16, dst += 128) {
        lut32_f32<NT>(dst, codes32_f32(_mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)))), l);
      }
      if (k < n) {  // 16 codes left (8 bytes): outputs 0-15 are the first two stores of a full run
        const __m256i c = codes32_f32(_mm256_broadcastsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p))));
        const __m256i lo01 = _mm256_unpacklo_epi8(_mm256_shuffle_epi8(l.pl[0], c), _mm256_shuffle_epi8(l.pl[1], c));
        const __m256i lo23 = _mm256_unpacklo_epi8(_mm256_shuffle_epi8(l.pl[2], c), _mm256_shuffle_epi8(l.pl[3], c));
        st256<NT>(dst, _mm256_unpacklo_epi16(lo01, lo23));
        st256<NT>(dst + 32, _mm256_unpackhi_epi16(lo01, lo23));
      }
    } else {
      // Bytes 0-3 and 8-11 to lane 0, 4-7 and 12-15 to lane 1, then split into nibbles: the
      // code bytes of lane 0 are those of outputs 0-7 and 16-23, lane 1 8-15 and 24-31, so
      // interleaving the two looked-up byte planes gives outputs 0-15 and 16-31 in order.
      const __m256i pick = _mm256_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, -1, -1, -1, -1, -1, -1, -1, -1,
                                            4, 5, 6, 7, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1);
      const __m256i m = _mm256_set1_epi8(0x0F);
      for (; k + 32 <= n; k += 32, p += 16, dst += 64) {
        const __m256i x = _mm256_shuffle_epi8(
            _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))), pick);
        const __m256i c = _mm256_unpacklo_epi8(_mm256_and_si256(x, m), _mm256_and_si256(_mm256_srli_epi16(x, 4), m));
        const __m256i lo = _mm256_shuffle_epi8(l.plo, c);
        const __m256i hi = _mm256_shuffle_epi8(l.phi, c);
        st256<NT>(dst, _mm256_unpacklo_epi8(lo, hi));
        st256<NT>(dst + 32, _mm256_unpackhi_epi8(lo, hi));
      }
      if (k < n) {
        __m128i c0, c1;
        nibbles(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)), &c0, &c1);
        const __m128i lo = _mm_shuffle_epi8(_mm256_castsi256_si128(l.plo), c0);
        const __m128i hi = _mm_shuffle_epi8(_mm256_castsi256_si128(l.phi), c0);
        st128<NT>(dst, _mm_unpacklo_epi8(lo, hi));
        st128<NT>(dst + 16, _mm_unpackhi_epi8(lo, hi));
      }
    }
  }
};

}  // namespace vk
}  // namespace
}  // namespace tblob
