// NEON GGML kernels (AArch64 baseline: ARMv8.0-A Advanced SIMD, nothing optional; compiled
// with -ffp-contract=off and chosen with the process-wide dequant kernel choice "neon").
// Bit-exact with ggml_scalar.cpp: the multiply-adds below are fused only where the product is
// exact in f32 for finite scales (Q4_1, Q5_1: code x f16; Q2_K, Q4_K, Q5_K: code x (d*sc), see
// ggml.h), so the fused result is the scalar multiply-then-add; everything else is one
// multiply (or Q3_K/Q6_K's two, in the scalar order). Blocks with non-finite scales go to the
// scalar block decoder.
//
// Codes are prepared 16 bytes at a time as signed bytes; TBL moves byte k of a vector into the
// top byte of lane k (the other bytes 0), and SCVTF with 24 fraction bits turns q * 2^24 back
// into q exactly: one TBL and one convert per 4 outputs, no widening chain.
// Hand-tuned: Q4_0, Q8_0, Q4_K, Q6_K. The others use the same building blocks; the IQ types
// gather lattice rows from iq_grids.h (the scalar set's copy: inline variables) 8 or 4 bytes
// at a time and apply sign bits as byte masks.
#include <arm_neon.h>

#include <cstring>

#include "dequant/ggml/ggml_blocks.h"
#include "dequant/ggml/iq_grids.h"
#include "dequant/kernel_set.h"

namespace tblob {
namespace ggml {
namespace {

// ---- stores: ordinary (any alignment) or non-temporal pairs (STNP, any alignment) --------
enum StoreMode { kPlain = 0, kNt = 1 };

struct F8 {
  float v[8];
};

template <int M>
inline void st8(float *p, float32x4_t a, float32x4_t b) {
  if (M == kNt) {
    __asm__ volatile("stnp %q1, %q2, %0" : "=Q"(*reinterpret_cast<F8 *>(p)) : "w"(a), "w"(b));
  } else {
    vst1q_f32(p, a);
    vst1q_f32(p + 4, b);
  }
}

inline float f16s(const uint8_t *p) {
  __fp16 h;
  std::memcpy(&h, p, 2);
  return static_cast<float>(h);  // FCVT: exact, subnormals included (FZ16 does not apply)
}

// TBL indices: byte 4k..4k+3 of the result = {0, 0, 0, src[base + k]}.
alignas(16) constexpr uint8_t kTop[4][16] = {
    {255, 255, 255, 0, 255, 255, 255, 1, 255, 255, 255, 2, 255, 255, 255, 3},
    {255, 255, 255, 4, 255, 255, 255, 5, 255, 255, 255, 6, 255, 255, 255, 7},
    {255, 255, 255, 8, 255, 255, 255, 9, 255, 255, 255, 10, 255, 255, 255, 11},
    {255, 255, 255, 12, 255, 255, 255, 13, 255, 255, 255, 14, 255, 255, 255, 15},
};

struct Idx {
  uint8x16_t i0, i1, i2, i3;
  Idx() : i0(vld1q_u8(kTop[0])), i1(vld1q_u8(kTop[1])), i2(vld1q_u8(kTop[2])), i3(vld1q_u8(kTop[3])) {}
};

// 16 signed bytes to 4 x 4 f32 (exact).
inline void widen16(const Idx &x, uint8x16_t v, float32x4_t f[4]) {
  f[0] = vcvtq_n_f32_s32(vreinterpretq_s32_u8(vqtbl1q_u8(v, x.i0)), 24);
  f[1] = vcvtq_n_f32_s32(vreinterpretq_s32_u8(vqtbl1q_u8(v, x.i1)), 24);
  f[2] = vcvtq_n_f32_s32(vreinterpretq_s32_u8(vqtbl1q_u8(v, x.i2)), 24);
  f[3] = vcvtq_n_f32_s32(vreinterpretq_s32_u8(vqtbl1q_u8(v, x.i3)), 24);
}

// y[0..15] = q * s (q: 16 signed bytes).
template <int M>
inline void mul16(const Idx &x, uint8x16_t q, float32x4_t s, float *y) {
  float32x4_t f[4];
  widen16(x, q, f);
  st8<M>(y, vmulq_f32(f[0], s), vmulq_f32(f[1], s));
  st8<M>(y + 8, vmulq_f32(f[2], s), vmulq_f32(f[3], s));
}
// y[0..15] = q * s + a (q * s exact).
template <int M>
inline void fma16(const Idx &x, uint8x16_t q, float32x4_t s, float32x4_t a, float *y) {
  float32x4_t f[4];
  widen16(x, q, f);
  st8<M>(y, vfmaq_f32(a, f[0], s), vfmaq_f32(a, f[1], s));
  st8<M>(y + 8, vfmaq_f32(a, f[2], s), vfmaq_f32(a, f[3], s));
}

// ---- per-type block bodies (finite scales) -------------------------------------------------
template <int M>
inline void q4_0(const Idx &x, const uint8_t *b, float *y) {
  const float32x4_t d = vdupq_n_f32(f16s(b));
  const uint8x16_t q = vld1q_u8(b + 2);
  const uint8x16_t k8 = vdupq_n_u8(8);
  mul16<M>(x, vsubq_u8(vandq_u8(q, vdupq_n_u8(15)), k8), d, y);
  mul16<M>(x, vsubq_u8(vshrq_n_u8(q, 4), k8), d, y + 16);
}

template <int M>
inline void q4_1(const Idx &x, const uint8_t *b, float *y) {
  const float32x4_t d = vdupq_n_f32(f16s(b)), m = vdupq_n_f32(f16s(b + 2));
  const uint8x16_t q = vld1q_u8(b + 4);
  fma16<M>(x, vandq_u8(q, vdupq_n_u8(15)), d, m, y);
  fma16<M>(x, vshrq_n_u8(q, 4), d, m, y + 16);
}

// Q5_0 / Q5_1: bit j of the little-endian u32 qh is bit 4 of element j; element j < 16 is the
// low nibble of qs[j], element j + 16 the high nibble.
inline void q5_codes(const uint8_t *qs, const uint8_t *qhp, uint8x16_t *lo, uint8x16_t *hi) {
  const uint32_t qh = load_le32(qhp);
  alignas(16) static constexpr uint8_t kSpreadLo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  alignas(16) static constexpr uint8_t kSpreadHi[16] = {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};
  alignas(16) static constexpr uint8_t kBits[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t h = vreinterpretq_u8_u32(vdupq_n_u32(qh));
  const uint8x16_t bits = vld1q_u8(kBits), k16 = vdupq_n_u8(16);
  const uint8x16_t q = vld1q_u8(qs);
  const uint8x16_t hl = vandq_u8(vtstq_u8(vqtbl1q_u8(h, vld1q_u8(kSpreadLo)), bits), k16);
  const uint8x16_t hh = vandq_u8(vtstq_u8(vqtbl1q_u8(h, vld1q_u8(kSpreadHi)), bits), k16);
  *lo = vorrq_u8(vandq_u8(q, vdupq_n_u8(15)), hl);
  *hi = vorrq_u8(vshrq_n_u8(q, 4), hh);
}

template <int M>
inline void q5_0(const Idx &x, const uint8_t *b, float *y) {
  const float32x4_t d = vdupq_n_f32(f16s(b));
  uint8x16_t lo, hi;
  q5_codes(b + 6, b + 2, &lo, &hi);
  const uint8x16_t k16 = vdupq_n_u8(16);
  mul16<M>(x, vsubq_u8(lo, k16), d, y);
  mul16<M>(x, vsubq_u8(hi, k16), d, y + 16);
}

template <int M>
inline void q5_1(const Idx &x, const uint8_t *b, float *y) {
  const float32x4_t d = vdupq_n_f32(f16s(b)), m = vdupq_n_f32(f16s(b + 2));
  uint8x16_t lo, hi;
  q5_codes(b + 8, b + 4, &lo, &hi);  // 0..31: positive as signed bytes
  fma16<M>(x, lo, d, m, y);
  fma16<M>(x, hi, d, m, y + 16);
}

template <int M>
inline void q8_x(const Idx &x, const uint8_t *qs, float dd, float *y) {
  const float32x4_t d = vdupq_n_f32(dd);
  const uint8x16_t a = vld1q_u8(qs), c = vld1q_u8(qs + 16);
  mul16<M>(x, a, d, y);
  mul16<M>(x, c, d, y + 16);
}
template <int M>
inline void q8_0(const Idx &x, const uint8_t *b, float *y) { q8_x<M>(x, b + 2, f16s(b), y); }
template <int M>
inline void q8_1(const Idx &x, const uint8_t *b, float *y) { q8_x<M>(x, b + 4, f16s(b), y); }
template <int M>
inline void q8_k(const Idx &x, const uint8_t *b, float *y) {
  const float d = load_le_f32(b);
  for (int i = 0; i < 256; i += 32) q8_x<M>(x, b + 4 + i, d, y + i);
}

// 8 unsigned bytes to 8 f32 (exact): scale tables.
inline void u8x8_f32(uint8x8_t v, float32x4_t *lo, float32x4_t *hi) {
  const uint16x8_t w = vmovl_u8(v);
  *lo = vcvtq_f32_u32(vmovl_u16(vget_low_u16(w)));
  *hi = vcvtq_f32_u32(vmovl_high_u16(w));
}

// Q2_K: dl = d*(sc&15), ml = dmin*(sc>>4) per 16 outputs; y = dl*q - ml.
template <int M>
inline void q2_k(const Idx &x, const uint8_t *b, float *y) {
  alignas(16) float dl[16], nml[16];
  {
    const float32x4_t d = vdupq_n_f32(f16s(b + 80)), dm = vdupq_n_f32(-f16s(b + 82));
    const uint8x16_t s = vld1q_u8(b);
    const uint8x16_t lo = vandq_u8(s, vdupq_n_u8(15)), hi = vshrq_n_u8(s, 4);
    float32x4_t a, c;
    u8x8_f32(vget_low_u8(lo), &a, &c);
    vst1q_f32(dl, vmulq_f32(d, a));
    vst1q_f32(dl + 4, vmulq_f32(d, c));
    u8x8_f32(vget_high_u8(lo), &a, &c);
    vst1q_f32(dl + 8, vmulq_f32(d, a));
    vst1q_f32(dl + 12, vmulq_f32(d, c));
    u8x8_f32(vget_low_u8(hi), &a, &c);  // -(dmin*m) == (-dmin)*m exactly
    vst1q_f32(nml, vmulq_f32(dm, a));
    vst1q_f32(nml + 4, vmulq_f32(dm, c));
    u8x8_f32(vget_high_u8(hi), &a, &c);
    vst1q_f32(nml + 8, vmulq_f32(dm, a));
    vst1q_f32(nml + 12, vmulq_f32(dm, c));
  }
  const uint8_t *q = b + 16;
  const uint8x16_t m3 = vdupq_n_u8(3);
  int is = 0;
  for (int n = 0; n < 2; ++n, q += 32) {
    uint8x16_t v0 = vld1q_u8(q), v1 = vld1q_u8(q + 16);
    for (int s = 0; s < 4; ++s) {
      fma16<M>(x, vandq_u8(v0, m3), vld1q_dup_f32(dl + is), vld1q_dup_f32(nml + is), y);
      fma16<M>(x, vandq_u8(v1, m3), vld1q_dup_f32(dl + is + 1), vld1q_dup_f32(nml + is + 1), y + 16);
      v0 = vshrq_n_u8(v0, 2);
      v1 = vshrq_n_u8(v1, 2);
      y += 32;
      is += 2;
    }
  }
}

// Q3_K: dl = d*(scale-32); y = dl * (((q>>s)&3) - (hmask bit ? 0 : 4)).
template <int M>
inline void q3_k(const Idx &x, const uint8_t *b, float *y) {
  alignas(16) float dl[16];
  {
    alignas(16) int8_t sc[16];
    q3k_scales(b + 96, sc);
    const float32x4_t d = vdupq_n_f32(f16s(b + 108));
    const int16x8_t k32 = vdupq_n_s16(32);
    const int8x16_t s = vld1q_s8(sc);
    const int16x8_t lo = vsubq_s16(vmovl_s8(vget_low_s8(s)), k32), hi = vsubq_s16(vmovl_high_s8(s), k32);
    vst1q_f32(dl, vmulq_f32(d, vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)))));
    vst1q_f32(dl + 4, vmulq_f32(d, vcvtq_f32_s32(vmovl_high_s16(lo))));
    vst1q_f32(dl + 8, vmulq_f32(d, vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)))));
    vst1q_f32(dl + 12, vmulq_f32(d, vcvtq_f32_s32(vmovl_high_s16(hi))));
  }
  const uint8x16_t h0 = vld1q_u8(b), h1 = vld1q_u8(b + 16);
  const uint8_t *q = b + 32;
  const uint8x16_t m3 = vdupq_n_u8(3), k4 = vdupq_n_u8(4);
  int is = 0;
  uint8x16_t bit = vdupq_n_u8(1);
  for (int n = 0; n < 2; ++n, q += 32) {
    uint8x16_t v0 = vld1q_u8(q), v1 = vld1q_u8(q + 16);
    for (int s = 0; s < 4; ++s) {
      const uint8x16_t a = vsubq_u8(vorrq_u8(vandq_u8(v0, m3), vandq_u8(vtstq_u8(h0, bit), k4)), k4);
      const uint8x16_t c = vsubq_u8(vorrq_u8(vandq_u8(v1, m3), vandq_u8(vtstq_u8(h1, bit), k4)), k4);
      mul16<M>(x, a, vld1q_dup_f32(dl + is), y);
      mul16<M>(x, c, vld1q_dup_f32(dl + is + 1), y + 16);
      v0 = vshrq_n_u8(v0, 2);
      v1 = vshrq_n_u8(v1, 2);
      bit = vshlq_n_u8(bit, 1);
      y += 32;
      is += 2;
    }
  }
}

// Scales and mins of a Q4_K/Q5_K block as floats: ds[j] = d*sc_j, nms[j] = -(dmin*m_j).
inline void k4_scales(const uint8_t *b, float *ds, float *nms) {
  uint32_t u[4];
  k4_scale_bytes(b, u);
  const uint8x16_t v = vreinterpretq_u8_u32(vld1q_u32(u));
  const float32x4_t d = vdupq_n_f32(f16s(b)), dm = vdupq_n_f32(-f16s(b + 2));
  float32x4_t a, c;
  u8x8_f32(vget_low_u8(v), &a, &c);
  vst1q_f32(ds, vmulq_f32(d, a));
  vst1q_f32(ds + 4, vmulq_f32(d, c));
  u8x8_f32(vget_high_u8(v), &a, &c);
  vst1q_f32(nms, vmulq_f32(dm, a));
  vst1q_f32(nms + 4, vmulq_f32(dm, c));
}

template <int M>
inline void q4_k(const Idx &x, const uint8_t *b, float *y) {
  alignas(16) float ds[8], nms[8];
  k4_scales(b, ds, nms);
  const uint8_t *q = b + 16;
  const uint8x16_t m15 = vdupq_n_u8(15);
  for (int c = 0; c < 4; ++c, q += 32, y += 64) {
    const uint8x16_t v0 = vld1q_u8(q), v1 = vld1q_u8(q + 16);
    const float32x4_t d1 = vld1q_dup_f32(ds + 2 * c), m1 = vld1q_dup_f32(nms + 2 * c);
    const float32x4_t d2 = vld1q_dup_f32(ds + 2 * c + 1), m2 = vld1q_dup_f32(nms + 2 * c + 1);
    fma16<M>(x, vandq_u8(v0, m15), d1, m1, y);
    fma16<M>(x, vandq_u8(v1, m15), d1, m1, y + 16);
    fma16<M>(x, vshrq_n_u8(v0, 4), d2, m2, y + 32);
    fma16<M>(x, vshrq_n_u8(v1, 4), d2, m2, y + 48);
  }
}

template <int M>
inline void q5_k(const Idx &x, const uint8_t *b, float *y) {
  alignas(16) float ds[8], nms[8];
  k4_scales(b, ds, nms);
  const uint8x16_t h0 = vld1q_u8(b + 16), h1 = vld1q_u8(b + 32);
  const uint8_t *q = b + 48;
  const uint8x16_t m15 = vdupq_n_u8(15), k16 = vdupq_n_u8(16);
  uint8x16_t u1 = vdupq_n_u8(1);
  for (int c = 0; c < 4; ++c, q += 32, y += 64) {
    const uint8x16_t u2 = vshlq_n_u8(u1, 1);
    const uint8x16_t v0 = vld1q_u8(q), v1 = vld1q_u8(q + 16);
    const float32x4_t d1 = vld1q_dup_f32(ds + 2 * c), m1 = vld1q_dup_f32(nms + 2 * c);
    const float32x4_t d2 = vld1q_dup_f32(ds + 2 * c + 1), m2 = vld1q_dup_f32(nms + 2 * c + 1);
    fma16<M>(x, vorrq_u8(vandq_u8(v0, m15), vandq_u8(vtstq_u8(h0, u1), k16)), d1, m1, y);
    fma16<M>(x, vorrq_u8(vandq_u8(v1, m15), vandq_u8(vtstq_u8(h1, u1), k16)), d1, m1, y + 16);
    fma16<M>(x, vorrq_u8(vshrq_n_u8(v0, 4), vandq_u8(vtstq_u8(h0, u2), k16)), d2, m2, y + 32);
    fma16<M>(x, vorrq_u8(vshrq_n_u8(v1, 4), vandq_u8(vtstq_u8(h1, u2), k16)), d2, m2, y + 48);
    u1 = vshlq_n_u8(u1, 2);
  }
}

// Q6_K: q = (4 bits of ql) | (2 bits of qh) << 4, minus 32, times (d*sc) per 16 outputs.
// SLI/SRI merge the two fields in two instructions per 16 codes.
template <int M>
inline void q6_k(const Idx &x, const uint8_t *b, float *y) {
  alignas(16) float ds[16];
  {
    const float32x4_t d = vdupq_n_f32(f16s(b + 208));
    const int8x16_t s = vld1q_s8(reinterpret_cast<const int8_t *>(b + 192));
    const int16x8_t lo = vmovl_s8(vget_low_s8(s)), hi = vmovl_high_s8(s);
    vst1q_f32(ds, vmulq_f32(d, vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)))));
    vst1q_f32(ds + 4, vmulq_f32(d, vcvtq_f32_s32(vmovl_high_s16(lo))));
    vst1q_f32(ds + 8, vmulq_f32(d, vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)))));
    vst1q_f32(ds + 12, vmulq_f32(d, vcvtq_f32_s32(vmovl_high_s16(hi))));
  }
  const uint8_t *ql = b, *qh = b + 128;
  const uint8x16_t m63 = vdupq_n_u8(63), m48 = vdupq_n_u8(48), k32 = vdupq_n_u8(32);
  for (int n = 0; n < 2; ++n, ql += 64, qh += 32, y += 128) {
    const float *sc = ds + 8 * n;
    for (int l = 0; l < 32; l += 16) {
      const int is = l / 16;
      const uint8x16_t a = vld1q_u8(ql + l), c = vld1q_u8(ql + l + 32), h = vld1q_u8(qh + l);
      const uint8x16_t q1 = vandq_u8(vsliq_n_u8(a, h, 4), m63);                     // (a&15) | (h&3)<<4
      const uint8x16_t q2 = vandq_u8(vsliq_n_u8(c, vshrq_n_u8(h, 2), 4), m63);      // (c&15) | (h>>2&3)<<4
      const uint8x16_t q3 = vsriq_n_u8(vandq_u8(h, m48), a, 4);                     // a>>4 | (h>>4&3)<<4
      const uint8x16_t q4 = vsriq_n_u8(vandq_u8(vshrq_n_u8(h, 2), m48), c, 4);      // c>>4 | (h>>6)<<4
      mul16<M>(x, vsubq_u8(q1, k32), vld1q_dup_f32(sc + is), y + l);
      mul16<M>(x, vsubq_u8(q2, k32), vld1q_dup_f32(sc + is + 2), y + l + 32);
      mul16<M>(x, vsubq_u8(q3, k32), vld1q_dup_f32(sc + is + 4), y + l + 64);
      mul16<M>(x, vsubq_u8(q4, k32), vld1q_dup_f32(sc + is + 6), y + l + 96);
    }
  }
}

// ---- IQ4_NL, IQ4_XS, MXFP4, NVFP4: a 16-entry signed table looked up by nibble (TBL) --------------
// y[0..15] = lut[low nibbles of qs] * s, y[16..31] = lut[high nibbles] * s.
template <int M>
inline void lut32(const Idx &x, const uint8_t *qs, const int8_t *table, float32x4_t s, float *y) {
  const uint8x16_t q = vld1q_u8(qs), lut = vreinterpretq_u8_s8(vld1q_s8(table));
  mul16<M>(x, vqtbl1q_u8(lut, vandq_u8(q, vdupq_n_u8(15))), s, y);
  mul16<M>(x, vqtbl1q_u8(lut, vshrq_n_u8(q, 4)), s, y + 16);
}

template <int M>
inline void iq4_nl(const Idx &x, const uint8_t *b, float *y) {
  lut32<M>(x, b + 2, kIq4Grid, vdupq_n_f32(f16s(b)), y);
}

template <int M>
inline void iq4_xs(const Idx &x, const uint8_t *b, float *y) {
  const float d = f16s(b);
  const uint32_t sh = load_le16(b + 2);
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xFu) | (((sh >> (2 * ib)) & 3u) << 4);
    lut32<M>(x, b + 8 + 16 * ib, kIq4Grid, vdupq_n_f32(d * static_cast<float>(static_cast<int>(ls) - 32)), y + 32 * ib);
  }
}

template <int M>
inline void mxfp4(const Idx &x, const uint8_t *b, float *y) {
  lut32<M>(x, b + 1, kMxfp4Grid, vdupq_n_f32(e8m0_half(b[0])), y);
}

// NVFP4: 16 code bytes give two sub-blocks: bytes 0-7 hold elements 0-7 (low nibbles) and
// 8-15 (high nibbles) of the first, bytes 8-15 those of the second; one scale each.
template <int M>
inline void nvfp4(const Idx &x, const uint8_t *b, float *y) {
  const uint8x16_t lut = vreinterpretq_u8_s8(vld1q_s8(kMxfp4Grid));
  for (int h = 0; h < 2; ++h, y += 32) {
    const uint8x16_t q = vld1q_u8(b + 4 + 16 * h);
    const uint8x16_t lo = vqtbl1q_u8(lut, vandq_u8(q, vdupq_n_u8(15))), hi = vqtbl1q_u8(lut, vshrq_n_u8(q, 4));
    mul16<M>(x, vcombine_u8(vget_low_u8(lo), vget_low_u8(hi)), vdupq_n_f32(ue4m3_half(b[2 * h])), y);
    mul16<M>(x, vcombine_u8(vget_high_u8(lo), vget_high_u8(hi)), vdupq_n_f32(ue4m3_half(b[2 * h + 1])), y + 16);
  }
}

// ---- Q1_0: one bit per value, +1 or -1 times d (exact, so the scalar d / -d) --------------
// Bytes 2k and 2k + 1 spread over lanes 0-7 and 8-15, each lane testing its own bit.
template <int M>
inline void q1_0(const Idx &x, const uint8_t *b, float *y) {
  alignas(16) static constexpr uint8_t kSpread[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  alignas(16) static constexpr uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const float32x4_t d = vdupq_n_f32(f16s(b));
  const uint8x16_t v = vld1q_u8(b + 2), bits = vld1q_u8(kBit), one = vdupq_n_u8(1), minus = vdupq_n_u8(0xFF);
  uint8x16_t idx = vld1q_u8(kSpread);
  for (int k = 0; k < 8; ++k, y += 16, idx = vaddq_u8(idx, vdupq_n_u8(2))) {
    const uint8x16_t set = vtstq_u8(vqtbl1q_u8(v, idx), bits);
    mul16<M>(x, vbslq_u8(set, one, minus), d, y);
  }
}

// ---- TQ2_0, TQ1_0: ternary codes times d ----------------------------------------------------
template <int M>
inline void tq2_0(const Idx &x, const uint8_t *b, float *y) {
  const float32x4_t d = vdupq_n_f32(f16s(b + 64));
  const uint8x16_t m3 = vdupq_n_u8(3), one = vdupq_n_u8(1);
  for (int j = 0; j < 2; ++j) {
    uint8x16_t v0 = vld1q_u8(b + 32 * j), v1 = vld1q_u8(b + 32 * j + 16);
    for (int l = 0; l < 4; ++l, y += 32) {
      mul16<M>(x, vsubq_u8(vandq_u8(v0, m3), one), d, y);
      mul16<M>(x, vsubq_u8(vandq_u8(v1, m3), one), d, y + 16);
      v0 = vshrq_n_u8(v0, 2);
      v1 = vshrq_n_u8(v1, 2);
    }
  }
}

// Base-3 digit n of each byte, minus 1: x = byte * 3^n mod 256 (MUL on bytes), and
// (x * 3) >> 8 is 0, 1 or 2 as x < 86, < 171 or more; each CMHS mask is -1 when true.
inline uint8x16_t tq1_digits(uint8x16_t v, uint8x16_t pow3) {
  const uint8x16_t t = vmulq_u8(v, pow3);
  return vsubq_u8(vsubq_u8(vdupq_n_u8(0xFF), vcgeq_u8(t, vdupq_n_u8(86))), vcgeq_u8(t, vdupq_n_u8(171)));
}

template <int M>
inline void tq1_0(const Idx &x, const uint8_t *b, float *y) {
  alignas(16) static constexpr uint8_t kQhPow[16] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};
  const float32x4_t d = vdupq_n_f32(f16s(b + 52));
  const uint8x16_t a = vld1q_u8(b), c = vld1q_u8(b + 16), e = vld1q_u8(b + 32);
  uint8x16_t p = vdupq_n_u8(1);
  for (int n = 0; n < 5; ++n, p = vmulq_u8(p, vdupq_n_u8(3))) {
    mul16<M>(x, tq1_digits(a, p), d, y + 32 * n);
    mul16<M>(x, tq1_digits(c, p), d, y + 32 * n + 16);
    mul16<M>(x, tq1_digits(e, p), d, y + 160 + 16 * n);
  }
  // qh: lane 4n + m is digit n of byte 48 + m (elements 240..255).
  const uint8x16_t h = vreinterpretq_u8_u32(vdupq_n_u32(load_le32(b + 48)));
  mul16<M>(x, tq1_digits(h, vld1q_u8(kQhPow)), d, y + 240);
}

// ---- IQ2_*, IQ3_*: unsigned lattice values, sign bits, one scale per 16 or 32 ----------------
// The scalar order is (db * g) * sign; db * (sign * g) is the same f32 (rounding to nearest is
// symmetric, and no grid value is 0, so no signed zero differs).
// A 7-bit sign pattern completed with the bit that makes the count of set bits even (a table:
// one load instead of a popcount through the vector unit).
struct SignTable {
  uint8_t v[128];
  constexpr SignTable() : v{} {
    for (uint32_t i = 0; i < 128; ++i) {
      uint32_t p = 0;
      for (uint32_t b = i; b; b >>= 1) p ^= b & 1u;
      v[i] = static_cast<uint8_t>(i | (p << 7));
    }
  }
};
constexpr SignTable kSigns{};
inline uint32_t ksign(uint32_t i7) { return kSigns.v[i7]; }

// 16 lattice values (two rows of 8, or four of 4, already in v) with lanes 0-7 negated where
// the bits of s0 are set and lanes 8-15 where those of s1 are, times db.
template <int M>
inline void signed16(const Idx &x, uint8x16_t v, uint32_t s0, uint32_t s1, float32x4_t db, float *y) {
  alignas(16) static constexpr uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t m = vtstq_u8(vcombine_u8(vdup_n_u8(static_cast<uint8_t>(s0)), vdup_n_u8(static_cast<uint8_t>(s1))),
                                vld1q_u8(kBit));
  mul16<M>(x, vsubq_u8(veorq_u8(v, m), m), db, y);  // (v ^ -1) - -1 == -v
}
inline uint8x16_t rows8(const uint8_t *g0, const uint8_t *g1) { return vcombine_u8(vld1_u8(g0), vld1_u8(g1)); }
inline uint8x16_t rows4(const uint8_t (*grid)[4], uint32_t i0, uint32_t i1, uint32_t i2, uint32_t i3) {
  uint32_t w[4];
  std::memcpy(w, grid[i0], 4);
  std::memcpy(w + 1, grid[i1], 4);
  std::memcpy(w + 2, grid[i2], 4);
  std::memcpy(w + 3, grid[i3], 4);
  return vreinterpretq_u8_u32(vld1q_u32(w));
}
// IQ2_* scale d * (0.5 + s) / 4 and IQ3_XXS's d * (0.5 + s) / 2, rounded in the scalar order.
inline float half_step(float d, uint32_t s, float k) { return dq::no_contract(d * (0.5f + static_cast<float>(s))) * k; }
// IQ2_XS / IQ2_S: the 16 scales (one per 16 outputs: nibble k % 2 of byte k / 2 of sc) as
// half_step(d, s, 0.25f), four at a time.
inline void iq2_scales(float d, const uint8_t *sc, float *out) {
  const uint8x8_t v = vld1_u8(sc);
  const uint8x8x2_t z = vzip_u8(vand_u8(v, vdup_n_u8(15)), vshr_n_u8(v, 4));
  const float32x4_t dv = vdupq_n_f32(d), half = vdupq_n_f32(0.5f), quarter = vdupq_n_f32(0.25f);
  for (int k = 0; k < 2; ++k) {
    float32x4_t a, c;
    u8x8_f32(z.val[k], &a, &c);
    vst1q_f32(out + 8 * k, vmulq_f32(vmulq_f32(dv, vaddq_f32(half, a)), quarter));
    vst1q_f32(out + 8 * k + 4, vmulq_f32(vmulq_f32(dv, vaddq_f32(half, c)), quarter));
  }
}

template <int M>
inline void iq2_xxs(const Idx &x, const uint8_t *b, float *y) {
  const float d = f16s(b);
  for (const uint8_t *q = b + 2; q < b + 66; q += 8, y += 32) {
    const uint32_t a = load_le32(q + 4);
    const float32x4_t db = vdupq_n_f32(half_step(d, a >> 28, 0.25f));
    for (int l = 0; l < 4; l += 2)
      signed16<M>(x, rows8(kIq2xxsGrid[q[l]], kIq2xxsGrid[q[l + 1]]), ksign((a >> (7 * l)) & 127u),
                  ksign((a >> (7 * l + 7)) & 127u), db, y + 8 * l);
  }
}

template <int M>
inline void iq2_xs(const Idx &x, const uint8_t *b, float *y) {
  alignas(16) float ds[16];
  iq2_scales(f16s(b), b + 66, ds);
  for (int i = 0; i < 32; i += 2, y += 16) {
    const uint32_t q0 = load_le16(b + 2 + 2 * i), q1 = load_le16(b + 4 + 2 * i);
    signed16<M>(x, rows8(kIq2xsGrid[q0 & 511u], kIq2xsGrid[q1 & 511u]), ksign(q0 >> 9), ksign(q1 >> 9),
                vld1q_dup_f32(ds + i / 2), y);
  }
}

template <int M>
inline void iq2_s(const Idx &x, const uint8_t *b, float *y) {
  alignas(16) float ds[16];
  iq2_scales(f16s(b), b + 74, ds);
  const uint8_t *qs = b + 2, *sn = b + 34;
  // The 32 10-bit grid indices, qs[i] | ((qh[i / 4] >> 2 * (i % 4)) & 3) << 8, 16 at a time:
  // TBL repeats each qh byte four times, USHL by 0, -2, -4, -6 brings its fields down.
  alignas(16) uint16_t ix[32];
  {
    alignas(16) static constexpr uint8_t kRep[16] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
    alignas(16) static constexpr int8_t kShr[16] = {0, -2, -4, -6, 0, -2, -4, -6, 0, -2, -4, -6, 0, -2, -4, -6};
    const uint8x16_t h = vcombine_u8(vld1_u8(b + 66), vdup_n_u8(0));
    for (int k = 0; k < 2; ++k) {
      const uint8x16_t rep = vqtbl1q_u8(h, vaddq_u8(vld1q_u8(kRep), vdupq_n_u8(static_cast<uint8_t>(4 * k))));
      const uint8x16_t f = vandq_u8(vshlq_u8(rep, vld1q_s8(kShr)), vdupq_n_u8(3));
      const uint8x16_t q = vld1q_u8(qs + 16 * k);
      vst1q_u16(ix + 16 * k, vorrq_u16(vmovl_u8(vget_low_u8(q)), vshll_n_u8(vget_low_u8(f), 8)));
      vst1q_u16(ix + 16 * k + 8, vorrq_u16(vmovl_high_u8(q), vshll_high_n_u8(f, 8)));
    }
  }
  for (int i = 0; i < 32; i += 2, y += 16)
    signed16<M>(x, rows8(kIq2sGrid[ix[i]], kIq2sGrid[ix[i + 1]]), sn[i], sn[i + 1], vld1q_dup_f32(ds + i / 2), y);
}

template <int M>
inline void iq3_xxs(const Idx &x, const uint8_t *b, float *y) {
  const float d = f16s(b);
  const uint8_t *q = b + 2;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t a = load_le32(b + 66 + 4 * ib);
    const float32x4_t db = vdupq_n_f32(half_step(d, a >> 28, 0.5f));
    for (int l = 0; l < 4; l += 2, q += 4, y += 16)
      signed16<M>(x, rows4(kIq3xxsGrid, q[0], q[1], q[2], q[3]), ksign((a >> (7 * l)) & 127u),
                  ksign((a >> (7 * l + 7)) & 127u), db, y);
  }
}

template <int M>
inline void iq3_s(const Idx &x, const uint8_t *b, float *y) {
  const float d = f16s(b);
  const uint8_t *qs = b + 2, *qh = b + 66, *sn = b + 74, *sc = b + 106;
  for (int ib = 0; ib < 8; ++ib) {
    const float32x4_t db = vdupq_n_f32(d * static_cast<float>(1u + 2u * ((sc[ib / 2] >> (4 * (ib % 2))) & 0xFu)));
    // The eight 9-bit grid indices of this sub-block: qs bytes | (bit j of qh[ib]) << 8.
    alignas(16) static constexpr uint8_t kBit8[8] = {1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x8_t hi = vand_u8(vtst_u8(vdup_n_u8(qh[ib]), vld1_u8(kBit8)), vdup_n_u8(1));
    alignas(16) uint16_t ix[8];
    vst1q_u16(ix, vorrq_u16(vmovl_u8(vld1_u8(qs + 8 * ib)), vshll_n_u8(hi, 8)));
    for (int k = 0; k < 8; k += 4, y += 16)
      signed16<M>(x, rows4(kIq3sGrid, ix[k], ix[k + 1], ix[k + 2], ix[k + 3]), sn[4 * ib + k / 2],
                  sn[4 * ib + k / 2 + 1], db, y);
  }
}

// ---- IQ1_S, IQ1_M: dl * (g +- 1/8), g in -1..1 ----------------------------------------------
// Computed as (dl / 8) * (8g +- 1): both factors are exact (dl is a finite f16 times an odd
// integer below 16, far from f32 underflow) and their product is the same real number as the
// scalar dl * (g +- 0.125), so one rounding gives the same f32 (8g +- 1 is odd: no signed zero).
// i0, i1: grid rows of lanes 0-7 and 8-15; e0, e1: their delta signs (+1 or -1).
template <int M>
inline void iq1_16(const Idx &x, uint32_t i0, uint32_t i1, int8_t e0, int8_t e1, float32x4_t dl8, float *y) {
  const int8x16_t g = vcombine_s8(vld1_s8(kIq1sGrid[i0]), vld1_s8(kIq1sGrid[i1]));
  const int8x16_t c = vaddq_s8(vshlq_n_s8(g, 3), vcombine_s8(vdup_n_s8(e0), vdup_n_s8(e1)));
  mul16<M>(x, vreinterpretq_u8_s8(c), dl8, y);
}

template <int M>
inline void iq1_s(const Idx &x, const uint8_t *b, float *y) {
  const float d = f16s(b);
  const uint8_t *qs = b + 2;
  for (int ib = 0; ib < 8; ++ib, qs += 4) {
    const uint32_t h = load_le16(b + 34 + 2 * ib);
    const float32x4_t dl8 = vdupq_n_f32(d * static_cast<float>(2u * ((h >> 12) & 7u) + 1u) * 0.125f);
    const int8_t e = (h & 0x8000u) ? -1 : 1;
    for (int l = 0; l < 4; l += 2)
      iq1_16<M>(x, qs[l] | (((h >> (3 * l)) & 7u) << 8), qs[l + 1] | (((h >> (3 * l + 3)) & 7u) << 8), e, e, dl8,
                y + 32 * ib + 8 * l);
  }
}

// IQ1_M: the 16 scales dl / 8 = (d * (2s + 1)) * 0.125 (s: four 3-bit fields in bits 0-11 of
// each u16 at b + 48, one per 16 outputs), eight at a time.
inline void iq1m_scales(float d, const uint8_t *b, float *out) {
  alignas(16) static constexpr int16_t kShift[8] = {0, -3, -6, -9, 0, -3, -6, -9};
  const uint16x4_t w = vreinterpret_u16_u8(vld1_u8(b + 48));
  const float32x4_t dv = vdupq_n_f32(d), eighth = vdupq_n_f32(0.125f);
  for (int k = 0; k < 2; ++k) {
    const uint16x8_t u = k ? vcombine_u16(vdup_lane_u16(w, 2), vdup_lane_u16(w, 3))
                           : vcombine_u16(vdup_lane_u16(w, 0), vdup_lane_u16(w, 1));
    const uint16x8_t s = vandq_u16(vshlq_u16(u, vld1q_s16(kShift)), vdupq_n_u16(7));
    const uint16x8_t odd = vorrq_u16(vshlq_n_u16(s, 1), vdupq_n_u16(1));  // 2s + 1
    vst1q_f32(out + 8 * k, vmulq_f32(vmulq_f32(dv, vcvtq_f32_u32(vmovl_u16(vget_low_u16(odd)))), eighth));
    vst1q_f32(out + 8 * k + 4, vmulq_f32(vmulq_f32(dv, vcvtq_f32_u32(vmovl_high_u16(odd))), eighth));
  }
}

template <int M>
inline void iq1_m(const Idx &x, const uint8_t *b, float *y) {
  uint32_t sc[4];
  for (int k = 0; k < 4; ++k) sc[k] = load_le16(b + 48 + 2 * k);
  const uint16_t dbits = static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0u) | ((sc[2] >> 4) & 0x0F00u) |
                                               (sc[3] & 0xF000u));
  uint8_t db[2];
  std::memcpy(db, &dbits, 2);
  alignas(16) float dl8[16];
  iq1m_scales(f16s(db), b, dl8);
  for (int i = 0; i < 32; i += 2, y += 16) {
    const uint32_t h = b[32 + i / 2];  // low nibble: group i, high nibble: group i + 1
    iq1_16<M>(x, b[i] | ((h & 7u) << 8), b[i + 1] | (((h >> 4) & 7u) << 8), (h & 8u) ? -1 : 1, (h & 0x80u) ? -1 : 1,
              vld1q_dup_f32(dl8 + i / 2), y);
  }
}

// ---- row drivers ----------------------------------------------------------------------------
// The newer block types, in slot order after the twelve classic ones.
#define TBLOB_NEON_NEW_TYPES(X)                                                                     \
  X(iq4_nl, kSlotIQ4_NL) X(iq4_xs, kSlotIQ4_XS) X(tq2_0, kSlotTQ2_0) X(mxfp4, kSlotMXFP4) X(tq1_0, kSlotTQ1_0) \
  X(iq2_xxs, kSlotIQ2_XXS) X(iq2_xs, kSlotIQ2_XS) X(iq2_s, kSlotIQ2_S) X(iq3_xxs, kSlotIQ3_XXS)              \
  X(iq3_s, kSlotIQ3_S) X(iq1_s, kSlotIQ1_S) X(iq1_m, kSlotIQ1_M) X(nvfp4, kSlotNVFP4) X(q1_0, kSlotQ1_0)

#define TBLOB_BLOCK_FN(fn, slot)                                                                 \
  template <int M>                                                                         \
  struct fn##_t {                                                                          \
    static void run(const Idx &x, const uint8_t *b, float *y) { fn<M>(x, b, y); }          \
  };
TBLOB_GGML_BLOCK_TYPES(TBLOB_BLOCK_FN)
TBLOB_NEON_NEW_TYPES(TBLOB_BLOCK_FN)
#undef TBLOB_BLOCK_FN

template <uint32_t SLOT, template <int> class B, int M>
void run_blocks(const uint8_t *src, size_t nblocks, float *dst) {
  const Idx x;
  for_each_block<SLOT>(src, nblocks, dst, [&x](const uint8_t *b, float *y) { B<M>::run(x, b, y); });
}

template <uint32_t SLOT, template <int> class B>
void rows(const uint8_t *src, size_t nblocks, float *dst, uint32_t flags) {
  if (flags & kStream) {
    run_blocks<SLOT, B, kNt>(src, nblocks, dst);
    __asm__ volatile("dmb ishst" : : : "memory");
  } else {
    run_blocks<SLOT, B, kPlain>(src, nblocks, dst);
  }
}

// Float "types" (block of one element).
void rows_f32(const uint8_t *src, size_t n, float *dst, uint32_t) { std::memcpy(dst, src, n * 4); }

void rows_f16(const uint8_t *src, size_t n, float *dst, uint32_t) {
  size_t i = 0;
  const uint16x8_t absmask = vdupq_n_u16(0x7FFF), inf = vdupq_n_u16(0x7C00);
  for (; i + 8 <= n; i += 8) {
    const uint16x8_t h = vld1q_u16(reinterpret_cast<const uint16_t *>(src + 2 * i));
    // FCVTL quiets signalling NaNs; the definition keeps payload bits as they are.
    if (vmaxvq_u16(vcgtq_u16(vandq_u16(h, absmask), inf))) {
      for (size_t k = 0; k < 8; ++k) scalar_block(kSlotF16, src + 2 * (i + k), dst + i + k);
      continue;
    }
    const float16x8_t f = vreinterpretq_f16_u16(h);
    vst1q_f32(dst + i, vcvt_f32_f16(vget_low_f16(f)));
    vst1q_f32(dst + i + 4, vcvt_high_f32_f16(f));
  }
  for (; i < n; ++i) scalar_block(kSlotF16, src + 2 * i, dst + i);
}

void rows_bf16(const uint8_t *src, size_t n, float *dst, uint32_t) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16x8_t h = vld1q_u16(reinterpret_cast<const uint16_t *>(src + 2 * i));
    vst1q_u32(reinterpret_cast<uint32_t *>(dst + i), vshll_n_u16(vget_low_u16(h), 16));
    vst1q_u32(reinterpret_cast<uint32_t *>(dst + i + 4), vshll_high_n_u16(h, 16));
  }
  for (; i < n; ++i) scalar_block(kSlotBF16, src + 2 * i, dst + i);
}

// f32 -> f16: FCVTN rounds to nearest even (FPCR.RMode is RN for Linux processes) and turns a
// NaN into the quiet NaN with the top payload bits (FPCR.DN clear), as convert.h defines.
void to_f16(const float *src, size_t n, uint16_t *dst) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float16x8_t h = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(src + i)), vld1q_f32(src + i + 4));
    vst1q_u16(dst + i, vreinterpretq_u16_f16(h));
  }
  scalar_kernels().to_f16(src + i, n - i, dst + i);
}

// f32 -> bf16 on the bits (no BFCVT in the baseline): ADDHN adds the rounding bias and keeps
// the high halves; NaN lanes take the quieted top half instead.
void to_bf16(const float *src, size_t n, uint16_t *dst) {
  size_t i = 0;
  const uint32x4_t abs = vdupq_n_u32(0x7FFFFFFF), inf = vdupq_n_u32(0x7F800000), one = vdupq_n_u32(1);
  const uint32x4_t r = vdupq_n_u32(0x7FFF);
  const uint16x8_t q = vdupq_n_u16(0x40);
  for (; i + 8 <= n; i += 8) {
    const uint32x4_t a = vld1q_u32(reinterpret_cast<const uint32_t *>(src + i));
    const uint32x4_t c = vld1q_u32(reinterpret_cast<const uint32_t *>(src + i + 4));
    const uint16x8_t rnd = vaddhn_high_u32(vaddhn_u32(a, vaddq_u32(r, vandq_u32(vshrq_n_u32(a, 16), one))), c,
                                           vaddq_u32(r, vandq_u32(vshrq_n_u32(c, 16), one)));
    const uint16x8_t top = vshrn_high_n_u32(vshrn_n_u32(a, 16), c, 16);
    const uint16x8_t nan = vmovn_high_u32(vmovn_u32(vcgtq_u32(vandq_u32(a, abs), inf)), vcgtq_u32(vandq_u32(c, abs), inf));
    vst1q_u16(dst + i, vbslq_u16(nan, vorrq_u16(top, q), rnd));
  }
  scalar_kernels().to_bf16(src + i, n - i, dst + i);
}

// The table by slot: a type the lists in ggml_blocks.h gain without a NEON body here runs the
// scalar rows; the static_assert catches a slot left empty.
constexpr Kernels make_neon() {
  Kernels k{kSetNeon, {rows_f32, rows_f16, rows_bf16}, to_f16, to_bf16};
#define TBLOB_SET(fn, slot) k.to_f32[slot] = scalar_rows<slot>;
  TBLOB_GGML_AVX2_TYPES(TBLOB_SET) TBLOB_GGML_SCALAR_ONLY_TYPES(TBLOB_SET)
#undef TBLOB_SET
#define TBLOB_SET(fn, slot) k.to_f32[slot] = rows<slot, fn##_t>;
  TBLOB_GGML_BLOCK_TYPES(TBLOB_SET) TBLOB_NEON_NEW_TYPES(TBLOB_SET)
#undef TBLOB_SET
  return k;
}
constexpr Kernels kNeon = make_neon();
constexpr bool complete(const Kernels &k) {
  for (BlocksToF32 f : k.to_f32)
    if (!f) return false;
  return true;
}
static_assert(complete(kNeon), "a GGML slot has no NEON entry");

}  // namespace

const Kernels *neon_kernels() { return &kNeon; }

}  // namespace ggml
}  // namespace tblob
