// AVX2 + FMA + F16C GGML kernels (compiled with -mavx2 -mfma -mf16c -ffp-contract=off, chosen
// at run time). Bit-exact with ggml_scalar.cpp: every product below is exact in f32 for finite
// scales (see ggml.h), so fused multiply-add/subtract rounds exactly like the scalar
// multiply-then-add; blocks with non-finite scales go to the scalar block decoder.
// Hand-tuned: Q4_0, Q8_0, Q4_K, Q6_K. The others use the same building blocks; IQ4_NL, IQ4_XS,
// MXFP4 and NVFP4 look their values up with a byte shuffle. This file also holds the set's
// table; the IQ lattice types are in ggml_avx2_grid.cpp.
#include <cstring>

#include "dequant/ggml/ggml_avx2.h"
#include "dequant/kernel_set.h"

namespace tblob {
namespace ggml {
namespace {

using namespace avx2;

// ---- per-type block bodies (finite scales), templated on the store mode -------------------
template <int M>
inline void q4_0(const uint8_t *b, float *y) {
  const __m256 d = _mm256_set1_ps(f16s(b));
  const __m256i a = u8x8(b + 2), c = u8x8(b + 10);
  const __m256i m15 = _mm256_set1_epi32(15), k8 = _mm256_set1_epi32(8);
  st<M>(y + 0, _mm256_mul_ps(cvt(_mm256_sub_epi32(_mm256_and_si256(a, m15), k8)), d));
  st<M>(y + 8, _mm256_mul_ps(cvt(_mm256_sub_epi32(_mm256_and_si256(c, m15), k8)), d));
  st<M>(y + 16, _mm256_mul_ps(cvt(_mm256_sub_epi32(_mm256_srli_epi32(a, 4), k8)), d));
  st<M>(y + 24, _mm256_mul_ps(cvt(_mm256_sub_epi32(_mm256_srli_epi32(c, 4), k8)), d));
}

template <int M>
inline void q4_1(const uint8_t *b, float *y) {
  const __m256 d = _mm256_set1_ps(f16s(b)), m = _mm256_set1_ps(f16s(b + 2));
  const __m256i a = u8x8(b + 4), c = u8x8(b + 12);
  const __m256i m15 = _mm256_set1_epi32(15);
  st<M>(y + 0, _mm256_fmadd_ps(cvt(_mm256_and_si256(a, m15)), d, m));
  st<M>(y + 8, _mm256_fmadd_ps(cvt(_mm256_and_si256(c, m15)), d, m));
  st<M>(y + 16, _mm256_fmadd_ps(cvt(_mm256_srli_epi32(a, 4)), d, m));
  st<M>(y + 24, _mm256_fmadd_ps(cvt(_mm256_srli_epi32(c, 4)), d, m));
}

// Q5_0 / Q5_1: the 32 five-bit codes of a block as 32 bytes: nibbles (qs low nibbles are
// elements 0-15, high nibbles 16-31) merged with the qh bit of each element (bit j of the
// little-endian u32 -> byte j, spread by a byte shuffle and tested against a bit mask).
inline __m256i q5_codes(const uint8_t *qs, const uint8_t *qhp) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i *>(qs));
  const __m128i m15 = _mm_set1_epi8(0x0F);
  const __m256i nib = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m15), _mm_and_si128(q, m15));
  const uint32_t qh = load_le32(qhp);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(qh)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bits = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bits), bits);
  return _mm256_or_si256(nib, _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
}

template <int M>
inline void q5_0(const uint8_t *b, float *y) {
  const __m256 d = _mm256_set1_ps(f16s(b));
  __m256 f[4];
  widen32s(_mm256_sub_epi8(q5_codes(b + 6, b + 2), _mm256_set1_epi8(16)), f);
  for (int k = 0; k < 4; ++k) st<M>(y + 8 * k, _mm256_mul_ps(f[k], d));
}

template <int M>
inline void q5_1(const uint8_t *b, float *y) {
  const __m256 d = _mm256_set1_ps(f16s(b)), m = _mm256_set1_ps(f16s(b + 2));
  __m256 f[4];
  widen32s(q5_codes(b + 8, b + 4), f);  // codes 0..31: positive as signed bytes
  for (int k = 0; k < 4; ++k) st<M>(y + 8 * k, _mm256_fmadd_ps(f[k], d, m));
}

template <int M>
inline void q8_x(const uint8_t *qs, float dd, float *y) {
  const __m256 d = _mm256_set1_ps(dd);
  st<M>(y + 0, _mm256_mul_ps(cvt(i8x8(qs + 0)), d));
  st<M>(y + 8, _mm256_mul_ps(cvt(i8x8(qs + 8)), d));
  st<M>(y + 16, _mm256_mul_ps(cvt(i8x8(qs + 16)), d));
  st<M>(y + 24, _mm256_mul_ps(cvt(i8x8(qs + 24)), d));
}
template <int M>
inline void q8_0(const uint8_t *b, float *y) { q8_x<M>(b + 2, f16s(b), y); }
template <int M>
inline void q8_1(const uint8_t *b, float *y) { q8_x<M>(b + 4, f16s(b), y); }
template <int M>
inline void q8_k(const uint8_t *b, float *y) {
  const float d = load_le_f32(b);
  for (int i = 0; i < 256; i += 32) q8_x<M>(b + 4 + i, d, y + i);
}

// Q2_K: dl = d*(sc&15), ml = dmin*(sc>>4) per 16 outputs; y = dl*q - ml.
template <int M>
inline void q2_k(const uint8_t *b, float *y) {
  alignas(32) float dl[16], ml[16];
  {
    const __m256 d = _mm256_set1_ps(f16s(b + 80)), dm = _mm256_set1_ps(f16s(b + 82));
    const __m256i m15 = _mm256_set1_epi32(15);
    for (int i = 0; i < 16; i += 8) {
      const __m256i s = u8x8(b + i);
      _mm256_store_ps(dl + i, _mm256_mul_ps(d, cvt(_mm256_and_si256(s, m15))));
      _mm256_store_ps(ml + i, _mm256_mul_ps(dm, cvt(_mm256_srli_epi32(s, 4))));
    }
  }
  const uint8_t *q = b + 16;
  const __m256i m3 = _mm256_set1_epi32(3);
  int is = 0;
  for (int n = 0; n < 2; ++n, q += 32) {
    const __m256i v0 = u8x8(q), v1 = u8x8(q + 8), v2 = u8x8(q + 16), v3 = u8x8(q + 24);
    for (int s = 0; s < 8; s += 2) {
      const __m128i sh = _mm_cvtsi32_si128(s);
      const __m256 da = _mm256_broadcast_ss(dl + is), ma = _mm256_broadcast_ss(ml + is);
      const __m256 db = _mm256_broadcast_ss(dl + is + 1), mb = _mm256_broadcast_ss(ml + is + 1);
      st<M>(y + 0, _mm256_fmsub_ps(da, cvt(_mm256_and_si256(_mm256_srl_epi32(v0, sh), m3)), ma));
      st<M>(y + 8, _mm256_fmsub_ps(da, cvt(_mm256_and_si256(_mm256_srl_epi32(v1, sh), m3)), ma));
      st<M>(y + 16, _mm256_fmsub_ps(db, cvt(_mm256_and_si256(_mm256_srl_epi32(v2, sh), m3)), mb));
      st<M>(y + 24, _mm256_fmsub_ps(db, cvt(_mm256_and_si256(_mm256_srl_epi32(v3, sh), m3)), mb));
      y += 32;
      is += 2;
    }
  }
}

// Q3_K: dl = d*(scale-32); y = dl * (((q>>s)&3) - (hmask bit ? 0 : 4)).
template <int M>
inline void q3_k(const uint8_t *b, float *y) {
  alignas(32) float dl[16];
  {
    alignas(16) int8_t sc[16];
    q3k_scales(b + 96, sc);
    const __m256 d = _mm256_set1_ps(f16s(b + 108));
    const __m256i k32 = _mm256_set1_epi32(32);
    for (int i = 0; i < 16; i += 8)
      _mm256_store_ps(dl + i, _mm256_mul_ps(d, cvt(_mm256_sub_epi32(i8x8(reinterpret_cast<const uint8_t *>(sc) + i), k32))));
  }
  const uint8_t *hm = b, *q = b + 32;
  const __m256i h0 = u8x8(hm), h1 = u8x8(hm + 8), h2 = u8x8(hm + 16), h3 = u8x8(hm + 24);
  const __m256i m3 = _mm256_set1_epi32(3), one = _mm256_set1_epi32(1), k4 = _mm256_set1_epi32(4);
  int is = 0, bit = 0;
  for (int n = 0; n < 2; ++n, q += 32) {
    const __m256i v0 = u8x8(q), v1 = u8x8(q + 8), v2 = u8x8(q + 16), v3 = u8x8(q + 24);
    for (int s = 0; s < 8; s += 2, ++bit) {
      const __m128i sh = _mm_cvtsi32_si128(s), hb = _mm_cvtsi32_si128(bit);
      const __m256 da = _mm256_broadcast_ss(dl + is), db = _mm256_broadcast_ss(dl + is + 1);
#define TBLOB_Q3(V, H) \
  cvt(_mm256_sub_epi32(_mm256_or_si256(_mm256_and_si256(_mm256_srl_epi32(V, sh), m3), \
                                       _mm256_slli_epi32(_mm256_and_si256(_mm256_srl_epi32(H, hb), one), 2)), k4))
      st<M>(y + 0, _mm256_mul_ps(da, TBLOB_Q3(v0, h0)));
      st<M>(y + 8, _mm256_mul_ps(da, TBLOB_Q3(v1, h1)));
      st<M>(y + 16, _mm256_mul_ps(db, TBLOB_Q3(v2, h2)));
      st<M>(y + 24, _mm256_mul_ps(db, TBLOB_Q3(v3, h3)));
#undef TBLOB_Q3
      y += 32;
      is += 2;
    }
  }
}

// Scales and mins of a Q4_K/Q5_K block as floats: ds[j] = d*sc_j, ms[j] = dmin*m_j.
inline void k4_scales(const uint8_t *b, float *ds, float *ms) {
  uint32_t u[4];
  k4_scale_bytes(b, u);
  const uint8_t *ub = reinterpret_cast<const uint8_t *>(u);
  _mm256_store_ps(ds, _mm256_mul_ps(_mm256_set1_ps(f16s(b)), cvt(u8x8(ub))));
  _mm256_store_ps(ms, _mm256_mul_ps(_mm256_set1_ps(f16s(b + 2)), cvt(u8x8(ub + 8))));
}

template <int M>
inline void q4_k(const uint8_t *b, float *y) {
  alignas(32) float ds[8], ms[8];
  k4_scales(b, ds, ms);
  const uint8_t *q = b + 16;
  const __m256i m15 = _mm256_set1_epi32(15);
  for (int c = 0; c < 4; ++c, q += 32, y += 64) {
    const __m256 d1 = _mm256_broadcast_ss(ds + 2 * c), m1 = _mm256_broadcast_ss(ms + 2 * c);
    const __m256 d2 = _mm256_broadcast_ss(ds + 2 * c + 1), m2 = _mm256_broadcast_ss(ms + 2 * c + 1);
    const __m256i v0 = u8x8(q), v1 = u8x8(q + 8), v2 = u8x8(q + 16), v3 = u8x8(q + 24);
    st<M>(y + 0, _mm256_fmsub_ps(d1, cvt(_mm256_and_si256(v0, m15)), m1));
    st<M>(y + 8, _mm256_fmsub_ps(d1, cvt(_mm256_and_si256(v1, m15)), m1));
    st<M>(y + 16, _mm256_fmsub_ps(d1, cvt(_mm256_and_si256(v2, m15)), m1));
    st<M>(y + 24, _mm256_fmsub_ps(d1, cvt(_mm256_and_si256(v3, m15)), m1));
    st<M>(y + 32, _mm256_fmsub_ps(d2, cvt(_mm256_srli_epi32(v0, 4)), m2));
    st<M>(y + 40, _mm256_fmsub_ps(d2, cvt(_mm256_srli_epi32(v1, 4)), m2));
    st<M>(y + 48, _mm256_fmsub_ps(d2, cvt(_mm256_srli_epi32(v2, 4)), m2));
    st<M>(y + 56, _mm256_fmsub_ps(d2, cvt(_mm256_srli_epi32(v3, 4)), m2));
  }
}

// 32 bytes (values < 256) widened to 4 x 8 i32 and converted: the four f32 vectors of
// bytes 0-7, 8-15, 16-23, 24-31.
inline void widen32(__m256i v, __m256 out[4]) {
  const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
  out[0] = cvt(_mm256_cvtepu8_epi32(lo));
  out[1] = cvt(_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)));
  out[2] = cvt(_mm256_cvtepu8_epi32(hi));
  out[3] = cvt(_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)));
}

// Bit b (0..7) of every byte of h moved to bit 4 (0x10 or 0). 16-bit shifts: the bits that
// cross into the neighbouring byte are masked away.
template <int B>
inline __m256i bit_to_16(__m256i h) {
  const __m256i m = _mm256_set1_epi8(0x10);
  if (B <= 4) return _mm256_and_si256(_mm256_slli_epi16(h, 4 - B), m);
  return _mm256_and_si256(_mm256_srli_epi16(h, B - 4), m);
}

// Q5_K: nibbles and fifth bits are merged 32 bytes at a time, then widened.
template <int M, int C>
inline void q5_k_chunk(const uint8_t *q, __m256i h, const float *ds, const float *ms, float *y) {
  const __m256i m15 = _mm256_set1_epi8(0x0F);
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q));
  const __m256i lo = _mm256_or_si256(_mm256_and_si256(v, m15), bit_to_16<2 * C>(h));
  const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4), m15), bit_to_16<2 * C + 1>(h));
  const __m256 d1 = _mm256_broadcast_ss(ds + 2 * C), m1 = _mm256_broadcast_ss(ms + 2 * C);
  const __m256 d2 = _mm256_broadcast_ss(ds + 2 * C + 1), m2 = _mm256_broadcast_ss(ms + 2 * C + 1);
  __m256 f[4];
  widen32(lo, f);
  for (int k = 0; k < 4; ++k) st<M>(y + 8 * k, _mm256_fmsub_ps(d1, f[k], m1));
  widen32(hi, f);
  for (int k = 0; k < 4; ++k) st<M>(y + 32 + 8 * k, _mm256_fmsub_ps(d2, f[k], m2));
}

template <int M>
inline void q5_k(const uint8_t *b, float *y) {
  alignas(32) float ds[8], ms[8];
  k4_scales(b, ds, ms);
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b + 16));
  const uint8_t *q = b + 48;
  q5_k_chunk<M, 0>(q, h, ds, ms, y);
  q5_k_chunk<M, 1>(q + 32, h, ds, ms, y + 64);
  q5_k_chunk<M, 2>(q + 64, h, ds, ms, y + 128);
  q5_k_chunk<M, 3>(q + 96, h, ds, ms, y + 192);
}

template <int M>
inline void q6_k(const uint8_t *b, float *y) {
  alignas(32) float ds[16];
  {
    const __m256 d = _mm256_set1_ps(f16s(b + 208));
    _mm256_store_ps(ds, _mm256_mul_ps(d, cvt(i8x8(b + 192))));
    _mm256_store_ps(ds + 8, _mm256_mul_ps(d, cvt(i8x8(b + 200))));
  }
  const uint8_t *ql = b, *qh = b + 128;
  const __m256i m15 = _mm256_set1_epi32(15), m48 = _mm256_set1_epi32(48), k32 = _mm256_set1_epi32(32);
  for (int n = 0; n < 2; ++n, ql += 64, qh += 32, y += 128) {
    const float *sc = ds + 8 * n;
    for (int l = 0; l < 32; l += 8) {
      const int is = l / 16;
      const __m256i a = u8x8(ql + l), c = u8x8(ql + l + 32), h = u8x8(qh + l);
      // ((qh >> k) & 3) << 4 == (qh << (4 - k)) & 48 for k = 0, 2, 4 and (qh >> 2) & 48 for k = 6
      const __m256i q1 = _mm256_or_si256(_mm256_and_si256(a, m15), _mm256_and_si256(_mm256_slli_epi32(h, 4), m48));
      const __m256i q2 = _mm256_or_si256(_mm256_and_si256(c, m15), _mm256_and_si256(_mm256_slli_epi32(h, 2), m48));
      const __m256i q3 = _mm256_or_si256(_mm256_srli_epi32(a, 4), _mm256_and_si256(h, m48));
      const __m256i q4 = _mm256_or_si256(_mm256_srli_epi32(c, 4), _mm256_and_si256(_mm256_srli_epi32(h, 2), m48));
      st<M>(y + l, _mm256_mul_ps(_mm256_broadcast_ss(sc + is), cvt(_mm256_sub_epi32(q1, k32))));
      st<M>(y + l + 32, _mm256_mul_ps(_mm256_broadcast_ss(sc + is + 2), cvt(_mm256_sub_epi32(q2, k32))));
      st<M>(y + l + 64, _mm256_mul_ps(_mm256_broadcast_ss(sc + is + 4), cvt(_mm256_sub_epi32(q3, k32))));
      st<M>(y + l + 96, _mm256_mul_ps(_mm256_broadcast_ss(sc + is + 6), cvt(_mm256_sub_epi32(q4, k32))));
    }
  }
}

// ---- IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4, NVFP4, Q1_0: one rounding (scale * exact value)
// per element, exact for finite scales --------------------------------------------------------
// 16 bytes of nibbles looked up in a 16-entry signed table: low nibbles -> y[0..15], high
// nibbles -> y[16..31], each times s.
template <int M>
inline void nibble_lut32(const uint8_t *qs, __m128i lut, __m256 s, float *y) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i *>(qs));
  const __m128i m15 = _mm_set1_epi8(0x0F);
  __m256 f[2];
  widen16s(_mm_shuffle_epi8(lut, _mm_and_si128(q, m15)), f);
  st<M>(y + 0, _mm256_mul_ps(s, f[0]));
  st<M>(y + 8, _mm256_mul_ps(s, f[1]));
  widen16s(_mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(q, 4), m15)), f);
  st<M>(y + 16, _mm256_mul_ps(s, f[0]));
  st<M>(y + 24, _mm256_mul_ps(s, f[1]));
}

inline __m128i lut16(const int8_t *t) { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(t)); }

template <int M>
inline void iq4_nl(const uint8_t *b, float *y) {
  nibble_lut32<M>(b + 2, lut16(kIq4Grid), _mm256_set1_ps(f16s(b)), y);
}

template <int M>
inline void iq4_xs(const uint8_t *b, float *y) {
  const float d = f16s(b);
  const uint32_t sh = load_le16(b + 2);
  const __m128i lut = lut16(kIq4Grid);
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xFu) | (((sh >> (2 * ib)) & 3u) << 4);
    const float dl = d * static_cast<float>(static_cast<int>(ls) - 32);
    nibble_lut32<M>(b + 8 + 16 * ib, lut, _mm256_set1_ps(dl), y + 32 * ib);
  }
}

template <int M>
inline void tq2_0(const uint8_t *b, float *y) {
  const __m256 d = _mm256_set1_ps(f16s(b + 64));
  const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
  for (int j = 0; j < 2; ++j) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b + 32 * j));
    for (int l = 0; l < 4; ++l) {
      // bits 2l..2l+1 of each byte (a 16-bit shift: the mask drops what crossed a byte)
      const __m256i t = _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(q, 2 * l), m3), one);
      __m256 f[4];
      widen32s(t, f);
      for (int k = 0; k < 4; ++k) st<M>(y + 128 * j + 32 * l + 8 * k, _mm256_mul_ps(d, f[k]));
    }
  }
}

template <int M>
inline void mxfp4(const uint8_t *b, float *y) {
  nibble_lut32<M>(b + 1, lut16(kMxfp4Grid), _mm256_set1_ps(e8m0_half(b[0])), y);
}

// TQ1_0: base-3 digit n of each byte is ((byte * 3^n) mod 256 * 3) >> 8. x16 holds 16 bytes
// zero-extended to u16 lanes, pow the 3^n of each lane; the 16 digits minus 1 times d go to y.
template <int M>
inline void tq1_digits16(__m256i x16, __m256i pow, __m256 d, float *y) {
  const __m256i x = _mm256_and_si256(_mm256_mullo_epi16(x16, pow), _mm256_set1_epi16(0xFF));
  const __m256i t = _mm256_sub_epi16(_mm256_srli_epi16(_mm256_mullo_epi16(x, _mm256_set1_epi16(3)), 8),
                                     _mm256_set1_epi16(1));
  st<M>(y, _mm256_mul_ps(d, cvt(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(t)))));
  st<M>(y + 8, _mm256_mul_ps(d, cvt(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(t, 1)))));
}

// qs[0..31]: digit n -> y[32n + m]; qs[32..47]: digit n -> y[160 + 16n + m]; qh[0..3] (bytes
// 48-51): digit n (n < 4) -> y[240 + 4n + m]; d at byte 52.
template <int M>
inline void tq1_0(const uint8_t *b, float *y) {
  const __m256 d = _mm256_set1_ps(f16s(b + 52));
  const __m256i a0 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(b)));
  const __m256i a1 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(b + 16)));
  const __m256i a2 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(b + 32)));
  static constexpr int16_t kPow3[5] = {1, 3, 9, 27, 81};
  for (int n = 0; n < 5; ++n) {
    const __m256i p = _mm256_set1_epi16(kPow3[n]);
    tq1_digits16<M>(a0, p, d, y + 32 * n);
    tq1_digits16<M>(a1, p, d, y + 32 * n + 16);
    tq1_digits16<M>(a2, p, d, y + 160 + 16 * n);
  }
  // The four qh bytes repeated four times, digit n = lane / 4.
  const __m256i h = _mm256_cvtepu8_epi16(_mm_set1_epi32(static_cast<int>(load_le32(b + 48))));
  tq1_digits16<M>(h, _mm256_setr_epi16(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27), d, y + 240);
}

// NVFP4: the 32 code bytes looked up (low nibbles and high nibbles); sub-block s is bytes
// 8s..8s+7 of the low lookup followed by the same bytes of the high one.
template <int M>
inline void nvfp4(const uint8_t *b, float *y) {
  const __m128i lut = lut16(kMxfp4Grid), m15 = _mm_set1_epi8(0x0F);
  for (int h = 0; h < 2; ++h) {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i *>(b + 4 + 16 * h));
    const __m128i lo = _mm_shuffle_epi8(lut, _mm_and_si128(q, m15));
    const __m128i hi = _mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(q, 4), m15));
    __m256 f[2];
    const __m256 s0 = _mm256_set1_ps(ue4m3_half(b[2 * h])), s1 = _mm256_set1_ps(ue4m3_half(b[2 * h + 1]));
    widen16s(_mm_unpacklo_epi64(lo, hi), f);
    st<M>(y + 32 * h, _mm256_mul_ps(s0, f[0]));
    st<M>(y + 32 * h + 8, _mm256_mul_ps(s0, f[1]));
    widen16s(_mm_unpackhi_epi64(lo, hi), f);
    st<M>(y + 32 * h + 16, _mm256_mul_ps(s1, f[0]));
    st<M>(y + 32 * h + 24, _mm256_mul_ps(s1, f[1]));
  }
}

// Q1_0: each bit shifted into its lane's sign bit selects d (set) or -d (clear).
template <int M>
inline void q1_0(const uint8_t *b, float *y) {
  const float d = f16s(b);
  const __m256 pos = _mm256_set1_ps(d), neg = _mm256_set1_ps(-d);
  const __m256i sh0 = _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24), k8 = _mm256_set1_epi32(8);
  for (int k = 0; k < 4; ++k) {
    const __m256i w = _mm256_set1_epi32(static_cast<int>(load_le32(b + 2 + 4 * k)));
    __m256i sh = sh0;
    for (int q = 0; q < 4; ++q, sh = _mm256_sub_epi32(sh, k8))
      st<M>(y + 32 * k + 8 * q, _mm256_blendv_ps(neg, pos, _mm256_castsi256_ps(_mm256_sllv_epi32(w, sh))));
  }
}

}  // namespace

// The row kernels of the block types above.
TBLOB_GGML_BLOCK_TYPES(TBLOB_GGML_AVX2_ROWS)
TBLOB_GGML_AVX2_ROWS(iq4_nl, kSlotIQ4_NL)
TBLOB_GGML_AVX2_ROWS(iq4_xs, kSlotIQ4_XS)
TBLOB_GGML_AVX2_ROWS(tq2_0, kSlotTQ2_0)
TBLOB_GGML_AVX2_ROWS(mxfp4, kSlotMXFP4)
TBLOB_GGML_AVX2_ROWS(tq1_0, kSlotTQ1_0)
TBLOB_GGML_AVX2_ROWS(nvfp4, kSlotNVFP4)
TBLOB_GGML_AVX2_ROWS(q1_0, kSlotQ1_0)

namespace {

// Float "types" (block of one element).
void rows_f32(const uint8_t *src, size_t n, float *dst, uint32_t) { std::memcpy(dst, src, n * 4); }

void rows_f16(const uint8_t *src, size_t n, float *dst, uint32_t) {
  size_t i = 0;
  const __m128i absmask = _mm_set1_epi16(0x7FFF), inf = _mm_set1_epi16(0x7C00);
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 2 * i));
    // vcvtph2ps quiets signalling NaNs; the definition keeps payload bits as they are.
    if (_mm_movemask_epi8(_mm_cmpgt_epi16(_mm_and_si128(h, absmask), inf))) {
      for (size_t k = 0; k < 8; ++k) scalar_block(kSlotF16, src + 2 * (i + k), dst + i + k);
      continue;
    }
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) scalar_block(kSlotF16, src + 2 * i, dst + i);
}

void rows_bf16(const uint8_t *src, size_t n, float *dst, uint32_t) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 2 * i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + i), _mm256_slli_epi32(w, 16));
  }
  for (; i < n; ++i) scalar_block(kSlotBF16, src + 2 * i, dst + i);
}

void to_f16(const float *src, size_t n, uint16_t *dst) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  scalar_kernels().to_f16(src + i, n - i, dst + i);
}

void to_bf16(const float *src, size_t n, uint16_t *dst) {
  size_t i = 0;
  const __m256i abs = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
  const __m256i one = _mm256_set1_epi32(1), r = _mm256_set1_epi32(0x7FFF), q = _mm256_set1_epi32(0x40);
  for (; i + 16 <= n; i += 16) {
    __m256i out[2];
    for (int h = 0; h < 2; ++h) {
      const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i + 8 * h));
      const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs), inf);
      const __m256i rnd = _mm256_srli_epi32(
          _mm256_add_epi32(_mm256_add_epi32(u, r), _mm256_and_si256(_mm256_srli_epi32(u, 16), one)), 16);
      const __m256i qn = _mm256_or_si256(_mm256_srli_epi32(u, 16), q);
      out[h] = _mm256_blendv_epi8(rnd, qn, nan);
    }
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(out[0], out[1]), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + i), packed);
  }
  scalar_kernels().to_bf16(src + i, n - i, dst + i);
}

#define TBLOB_ROWS_ENTRY(fn, slot) avx2_rows<slot>,
const Kernels kAvx2 = {
    kSetAvx2,
    {rows_f32, rows_f16, rows_bf16,
     TBLOB_GGML_BLOCK_TYPES(TBLOB_ROWS_ENTRY) TBLOB_GGML_AVX2_TYPES(TBLOB_ROWS_ENTRY)
         TBLOB_GGML_SCALAR_ONLY_TYPES(TBLOB_GGML_SCALAR_ENTRY)},
    to_f16,
    to_bf16,
};
#undef TBLOB_ROWS_ENTRY

}  // namespace

const Kernels *avx2_kernels() { return &kAvx2; }

}  // namespace ggml
}  // namespace tblob
