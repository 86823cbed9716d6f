// Scalar reference: MLX's floating-point block modes mxfp4, mxfp8 and nvfp4, computed in the
// output dtype as MLX does (see the arithmetic notes in quant_desc.h).
#include "dequant/scalar/common.h"

namespace tblob {
namespace scalar {
namespace {

inline float e8m0_scale(const QuantDesc &d, uint8_t s) {
  return dq::f32_from_bits(dq::e8m0_to_f32(s, (d.special & kSpecE8M0MaxInf) != 0,
                                           (d.special & kSpecE8M0ZeroIsZero) != 0));
}
inline float e4m3(const QuantDesc &d, uint8_t c) {
  return dq::f32_from_bits(dq::e4m3_to_f32(c, (d.special & kSpecE4M3MaxFinite) != 0));
}
inline float fp4(uint32_t c) { return dq::f32_from_bits(dq::e2m1_to_f32(static_cast<uint8_t>(c))); }

}  // namespace

// w = FP4(code) * round_O(E8M0(scale)); 32 codes (16 bytes) per scale.
template <uint32_t OUT>
void mxfp4_rows(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  uint8_t *out = static_cast<uint8_t *>(dst);
  const uint64_t cols = d.cols, ngroups = cols / 32, row_bytes = cols / 2;
  uint64_t o = 0;
  for (uint64_t r = rb; r < re; ++r) {
    const uint8_t *row = d.data + r * row_bytes;
    for (uint64_t g = 0; g < ngroups; ++g) {
      const float s = dq::round_out<OUT>(e8m0_scale(d, d.scales[r * ngroups + g]));
      const uint8_t *p = row + g * 16;
      for (int k = 0; k < 16; ++k) {
        const float lo = fp4(p[k] & 0xFu) * s;
        const float hi = fp4(p[k] >> 4) * s;
        dq::store_out<OUT>(out, o++, dq::canon_nan(dq::f32_bits(lo)));
        dq::store_out<OUT>(out, o++, dq::canon_nan(dq::f32_bits(hi)));
      }
    }
  }
}

// w = E4M3(code) * round_O(E8M0(scale)); 32 codes per scale.
template <uint32_t OUT>
void mxfp8_rows(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  uint8_t *out = static_cast<uint8_t *>(dst);
  const uint64_t cols = d.cols, ngroups = cols / 32;
  uint64_t o = 0;
  for (uint64_t r = rb; r < re; ++r) {
    const uint8_t *row = d.data + r * cols;
    for (uint64_t g = 0; g < ngroups; ++g) {
      const float s = dq::round_out<OUT>(e8m0_scale(d, d.scales[r * ngroups + g]));
      const uint8_t *p = row + g * 32;
      for (int k = 0; k < 32; ++k) {
        const float v = e4m3(d, p[k]) * s;
        dq::store_out<OUT>(out, o++, dq::canon_nan(dq::f32_bits(v)));
      }
    }
  }
}

// w = FP4(code) * E4M3(scale) [* global]; 16 codes (8 bytes) per scale.
template <uint32_t OUT>
void nvfp4_rows(const QuantDesc &d, uint64_t rb, uint64_t re, void *dst) {
  uint8_t *out = static_cast<uint8_t *>(dst);
  const uint64_t cols = d.cols, ngroups = cols / 16, row_bytes = cols / 2;
  const GlobalScaleMode mode = d.global_scale_mode;
  float g = 1.0f;
  if (mode != GlobalScaleMode::kNone) g = dq::f32_from_bits(load_le32(d.global_scale));
  // MLX's amax convention: the block scale is multiplied by f32(g / (448 * 6)) first.
  const float amax_factor = g / 2688.0f;
  uint64_t o = 0;
  for (uint64_t r = rb; r < re; ++r) {
    const uint8_t *row = d.data + r * row_bytes;
    for (uint64_t gi = 0; gi < ngroups; ++gi) {
      float s = e4m3(d, d.scales[r * ngroups + gi]);
      if (mode == GlobalScaleMode::kMlxAmax) s = s * amax_factor;
      const uint8_t *p = row + gi * 8;
      for (int k = 0; k < 8; ++k) {
        float lo = fp4(p[k] & 0xFu) * s;  // exact unless kMlxAmax (then one f32 rounding)
        float hi = fp4(p[k] >> 4) * s;
        if (mode == GlobalScaleMode::kMultiplier) {
          lo = lo * g;
          hi = hi * g;
        }
        dq::store_out<OUT>(out, o++, dq::canon_nan(dq::f32_bits(lo)));
        dq::store_out<OUT>(out, o++, dq::canon_nan(dq::f32_bits(hi)));
      }
    }
  }
}

#define TBLOB_INSTANTIATE(fn)                                                  \
  template void fn<kOutF32>(const QuantDesc &, uint64_t, uint64_t, void *);  \
  template void fn<kOutF16>(const QuantDesc &, uint64_t, uint64_t, void *);  \
  template void fn<kOutBF16>(const QuantDesc &, uint64_t, uint64_t, void *);
TBLOB_INSTANTIATE(mxfp4_rows)
TBLOB_INSTANTIATE(mxfp8_rows)
TBLOB_INSTANTIATE(nvfp4_rows)
#undef TBLOB_INSTANTIATE

}  // namespace scalar
}  // namespace tblob
