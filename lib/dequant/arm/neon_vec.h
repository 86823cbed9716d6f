// NEON (AArch64 baseline) vector abstraction for x86/vec_kernels.h (the shared, ISA-neutral
// template): 4 lanes of 32 bits. 4-bit codes expand through byte-plane tables with TBL and the
// interleaving stores VST2/VST4, so one lookup yields 16 outputs.
#pragma once
#include <arm_neon.h>

#include <type_traits>

#include "dequant/x86/vec_kernels.h"

namespace tblob {
namespace {
namespace vk {

struct NeonLut32 {
  uint8x16x4_t t;  // byte k of each of the 16 f32 entries
};
struct NeonLut16 {
  uint8x16x2_t t;  // low / high bytes of the 16 u16 entries
};

struct VNeon {
  static constexpr int W = 4;
  using U = uint32x4_t;
  using F = float32x4_t;
  using M = uint32x4_t;

  static U zero() { return vdupq_n_u32(0); }
  static U set1(uint32_t v) { return vdupq_n_u32(v); }
  static U load8(const uint8_t *p) {
    uint32_t t;
    std::memcpy(&t, p, 4);
    return vmovl_u16(vget_low_u16(vmovl_u8(vreinterpret_u8_u32(vdup_n_u32(t)))));
  }
  static U load16(const uint8_t *p) { return vmovl_u16(vreinterpret_u16_u8(vld1_u8(p))); }
  static U load32(const uint8_t *p) { return vreinterpretq_u32_u8(vld1q_u8(p)); }
  static void load8x16(const uint8_t *p, U *q) {
    const uint8x16_t x = vld1q_u8(p);
    const uint16x8_t lo = vmovl_u8(vget_low_u8(x));
    const uint16x8_t hi = vmovl_high_u8(x);
    q[0] = vmovl_u16(vget_low_u16(lo));
    q[1] = vmovl_high_u16(lo);
    q[2] = vmovl_u16(vget_low_u16(hi));
    q[3] = vmovl_high_u16(hi);
  }
  // 16 signed bytes -> sign-extended int32 lanes (as u32 bits).
  static void load8x16s(const uint8_t *p, U *q) {
    const int8x16_t x = vld1q_s8(reinterpret_cast<const int8_t *>(p));
    const int16x8_t lo = vmovl_s8(vget_low_s8(x));
    const int16x8_t hi = vmovl_high_s8(x);
    q[0] = vreinterpretq_u32_s32(vmovl_s16(vget_low_s16(lo)));
    q[1] = vreinterpretq_u32_s32(vmovl_high_s16(lo));
    q[2] = vreinterpretq_u32_s32(vmovl_s16(vget_low_s16(hi)));
    q[3] = vreinterpretq_u32_s32(vmovl_high_s16(hi));
  }
  static U band(U a, U b) { return vandq_u32(a, b); }
  static U bor(U a, U b) { return vorrq_u32(a, b); }
  static U add(U a, U b) { return vaddq_u32(a, b); }
  template <int N>
  static U shl(U a) { return vshlq_n_u32(a, N); }
  template <int N>
  static U shr(U a) { return vshrq_n_u32(a, N); }
  static U shrv(U a, U n) { return vshlq_u32(a, vnegq_s32(vreinterpretq_s32_u32(n))); }
  static M eq(U a, U b) { return vceqq_u32(a, b); }
  static M gt(U a, U b) { return vcgtq_s32(vreinterpretq_s32_u32(a), vreinterpretq_s32_u32(b)); }
  static U sel(M m, U a, U b) { return vbslq_u32(m, a, b); }
  static F asf(U a) { return vreinterpretq_f32_u32(a); }
  static U asu(F a) { return vreinterpretq_u32_f32(a); }
  static F cvt(U a) { return vcvtq_f32_s32(vreinterpretq_s32_u32(a)); }
  static F mul(F a, F b) { return vmulq_f32(a, b); }
  static F addf(F a, F b) { return vaddq_f32(a, b); }
  static F subf(F a, F b) { return vsubq_f32(a, b); }
  static M isnan(F a) { return vmvnq_u32(vceqq_f32(a, a)); }
  static uint32_t lane0(U a) { return vgetq_lane_u32(a, 0); }

  static U h2f_fast(U h) {
    return vreinterpretq_u32_f32(vcvt_f32_f16(vreinterpret_f16_u16(vmovn_u32(h))));
  }
  static U round_f16(U x) { return vreinterpretq_u32_f32(vcvt_f32_f16(vcvt_f16_f32(asf(x)))); }

  static void store32(uint8_t *p, U x) { vst1q_u8(p, vreinterpretq_u8_u32(x)); }
  static void store_f16(uint8_t *p, U x) { vst1_u8(p, vreinterpret_u8_f16(vcvt_f16_f32(asf(x)))); }
  static void store_n16(uint8_t *p, U x) { vst1_u8(p, vreinterpret_u8_u16(vmovn_u32(x))); }

  // 16 E4M3 codes -> their value / 256 as f32 bits (exact: E4M3 bits shifted into an f16,
  // then the FCVTL widening). ocp: codes 0x7F/0xFF give a quiet NaN.
  static uint16x8_t e4m3_h(uint16x8_t w, bool ocp) {
    const uint16x8_t sign = vandq_u16(vshlq_n_u16(w, 8), vdupq_n_u16(0x8000));
    uint16x8_t h = vorrq_u16(vandq_u16(vshlq_n_u16(w, 7), vdupq_n_u16(0x3F80)), sign);
    if (ocp) {
      const uint16x8_t nan = vceqq_u16(vandq_u16(w, vdupq_n_u16(0x7F)), vdupq_n_u16(0x7F));
      h = vbslq_u16(nan, vorrq_u16(sign, vdupq_n_u16(0x7E00)), h);
    }
    return h;
  }
  static void e4m3_div256x16(const uint8_t *p, U *out, bool ocp) {
    const uint8x16_t x = vld1q_u8(p);
    const uint16x8_t lo = e4m3_h(vmovl_u8(vget_low_u8(x)), ocp);
    const uint16x8_t hi = e4m3_h(vmovl_high_u8(x), ocp);
    out[0] = vreinterpretq_u32_f32(vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(lo))));
    out[1] = vreinterpretq_u32_f32(vcvt_high_f32_f16(vreinterpretq_f16_u16(lo)));
    out[2] = vreinterpretq_u32_f32(vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(hi))));
    out[3] = vreinterpretq_u32_f32(vcvt_high_f32_f16(vreinterpretq_f16_u16(hi)));
  }

  // Per lane: w[off] | w[off + 1] << 8 (TBL gives 0 for the 0xFF index bytes).
  static U gather2(const uint8_t *w, U off) {
    const U ctrl = vaddq_u32(vaddq_u32(vshlq_n_u32(off, 8), off), vdupq_n_u32(0xFFFF0100u));
    return vreinterpretq_u32_u8(vqtbl1q_u8(vld1q_u8(w), vreinterpretq_u8_u32(ctrl)));
  }

  template <uint32_t OUT>
  using Lut = typename std::conditional<OUT == kOutF32, NeonLut32, NeonLut16>::type;

  template <uint32_t OUT>
  static Lut<OUT> make_lut(const U *v) {
    if constexpr (OUT == kOutF32) {
      alignas(16) uint8_t buf[64];
      for (int k = 0; k < 4; ++k) vst1q_u8(buf + 16 * k, vreinterpretq_u8_u32(v[k]));
      return Lut<OUT>{vld4q_u8(buf)};
    } else {
      alignas(16) uint8_t buf[32];
      for (int k = 0; k < 4; ++k) {
        if constexpr (OUT == kOutF16) {
          store_f16(buf + 8 * k, v[k]);
        } else {
          store_n16(buf + 8 * k, Ops<VNeon>::to_bf16(v[k]));
        }
      }
      return Lut<OUT>{vld2q_u8(buf)};
    }
  }

  template <uint32_t OUT>
  static void lut16(uint8_t *dst, uint8x16_t c, const Lut<OUT> &l) {
    if constexpr (OUT == kOutF32) {
      uint8x16x4_t o;
      o.val[0] = vqtbl1q_u8(l.t.val[0], c);
      o.val[1] = vqtbl1q_u8(l.t.val[1], c);
      o.val[2] = vqtbl1q_u8(l.t.val[2], c);
      o.val[3] = vqtbl1q_u8(l.t.val[3], c);
      vst4q_u8(dst, o);
    } else {
      uint8x16x2_t o;
      o.val[0] = vqtbl1q_u8(l.t.val[0], c);
      o.val[1] = vqtbl1q_u8(l.t.val[1], c);
      vst2q_u8(dst, o);
    }
  }

  template <uint32_t OUT>
  static void expand4(const uint8_t *p, uint64_t n, const Lut<OUT> &l, uint8_t *dst) {
    constexpr uint64_t kStep16 = 16 * out_bytes<OUT>();  // output bytes of 16 codes
    uint64_t k = 0;
    const uint8x16_t m = vdupq_n_u8(0x0F);
    for (; k + 32 <= n; k += 32, p += 16, dst += 2 * kStep16) {
      const uint8x16_t x = vld1q_u8(p);
      const uint8x16_t lo = vandq_u8(x, m);
      const uint8x16_t hi = vshrq_n_u8(x, 4);
      lut16<OUT>(dst, vzip1q_u8(lo, hi), l);
      lut16<OUT>(dst + kStep16, vzip2q_u8(lo, hi), l);
    }
    if (k < n) {
      const uint8x8_t x = vld1_u8(p);
      const uint8x8_t lo = vand_u8(x, vdup_n_u8(0x0F));
      const uint8x8_t hi = vshr_n_u8(x, 4);
      lut16<OUT>(dst, vcombine_u8(vzip1_u8(lo, hi), vzip2_u8(lo, hi)), l);
    }
  }
};

}  // namespace vk
}  // namespace
}  // namespace tblob
