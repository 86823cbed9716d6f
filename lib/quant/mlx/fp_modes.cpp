// MLX's floating-point modes mxfp4, mxfp8 and nvfp4, as mlx 0.32.4 computes them on the CPU
// (an ops-based path: every step is an array op in the input's dtype T, so each result is
// rounded to T; docs/quantize.md gives the rules and where they were checked).
#include <cmath>
#include <cstring>

#include "dequant/minifloat.h"
#include "quant/encode.h"
#include "quant/quantize.h"

namespace tblob {
namespace quant {

namespace {

// FP4 E2M1 values by code, the order MLX searches them (the first nearest code wins).
constexpr float kFp4[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                            -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// The first code whose |T(v - FP4[code])| is smallest (T rounding given as a dtype, F32:
// none), as MLX's argmin over all 16. Rounding is monotone and symmetric, so a negative value's
// distances to the positive codes are never below its distances to their negatives, and equal
// only at zero, where code 0 (+0) comes first: the search over magnitudes 0..7 decides, and
// the sign picks code k or k + 8 (k == 0 stays 0). NaN / infinite v give code 0 as in MLX.
inline uint32_t fp4_nearest(uint32_t tdt, float v) {
  const float a = std::fabs(v);
  uint32_t best = 0;
  float bd = std::fabs(round_dt(tdt, a - kFp4[0]));
  for (uint32_t i = 1; i < 8; ++i) {
    const float di = std::fabs(round_dt(tdt, a - kFp4[i]));
    if (di < bd) {
      bd = di;
      best = i;
    }
  }
  return (best != 0 && (dq::f32_bits(v) >> 31)) ? best + 8 : best;
}

// ceil(log2(d)) for a finite d > 0, exactly (f32 subnormals included).
inline int ceil_log2(float d) {
  const uint32_t b = dq::f32_bits(d), e = b >> 23, m = b & 0x7FFFFFu;
  if (e != 0) return static_cast<int>(e) - 127 + (m != 0 ? 1 : 0);
  int p = 31;
  while (((m >> p) & 1u) == 0) --p;
  return p - 149 + ((m & (m - 1u)) != 0 ? 1 : 0);
}

// 2^e as an f32, e in [-127, 127].
inline float pow2(int e) {
  return dq::f32_from_bits(e >= -126 ? static_cast<uint32_t>(e + 127) << 23 : 0x00400000u);
}

// Loads one group of finite values; false (error recorded, first bad column) otherwise.
bool load_group(const Source &src, uint64_t r, uint64_t c0, uint32_t n, float *x, ValueError *err) {
  src.span(r, c0, n, x);
  for (uint32_t j = 0; j < n; ++j) {
    if (!finite(x[j])) {
      ValueError e;
      e.row = r, e.col = c0 + j, e.why = kNonFinite;
      err->keep(e);
      return false;
    }
  }
  return true;
}

inline float group_amax(const float *x, uint32_t n) {
  float a = 0.0f;
  for (uint32_t j = 0; j < n; ++j) {
    const float v = std::fabs(x[j]);
    a = v > a ? v : a;
  }
  return a;
}

inline void put_nibble(uint8_t *row, uint64_t j, uint32_t code) {
  uint8_t &b = row[j / 2];
  b = (j & 1u) ? static_cast<uint8_t>((b & 0x0Fu) | (code << 4)) : static_cast<uint8_t>((b & 0xF0u) | code);
}

}  // namespace

// mxfp4 / mxfp8: scale 2^e with e = ceil(log2(T(amax / maxval))) (0 when that is 0), stored
// as E8M0 e + 127; elements T(x / T(2^e)) to E2M1 (nearest, first in kFp4 order, differences
// in T) or E4M3 (to_fp8).
void mxfp_rows(const QuantDesc &d, const Source &src, uint64_t ub, uint64_t ue, ValueError *err) {
  const bool fp8 = d.scheme == QuantScheme::kMxfp8;
  const uint32_t t = src.dtype;
  const float maxval = fp8 ? 448.0f : 6.0f;
  const uint64_t ngroups = d.cols / 32, row_bytes = fp8 ? d.cols : d.cols / 2;
  uint8_t *data = const_cast<uint8_t *>(d.data);
  uint8_t *scales = const_cast<uint8_t *>(d.scales);
  float x[32];
  for (uint64_t r = ub; r < ue; ++r) {
    uint8_t *row = data + r * row_bytes;
    for (uint64_t g = 0; g < ngroups; ++g) {
      const uint64_t c0 = g * 32;
      uint8_t code_e = 127;
      bool ok = load_group(src, r, c0, 32, x, err);
      int e = 0;
      if (ok) {
        const float dv = round_dt(t, group_amax(x, 32) / maxval);
        e = dv == 0.0f ? 0 : ceil_log2(dv);
        if (e < -127) {  // MLX wraps e + 127 into a uint8: garbage
          ValueError ve;
          ve.row = r, ve.col = c0, ve.why = "the group's largest magnitude is below the E8M0 scale range";
          err->keep(ve);
          ok = false;
        } else {
          code_e = static_cast<uint8_t>(e + 127);
        }
      }
      scales[r * ngroups + g] = ok ? code_e : 0;
      if (!ok) {
        std::memset(row + (fp8 ? c0 : c0 / 2), 0, fp8 ? 32 : 16);
        continue;
      }
      const float p = round_dt(t, pow2(e));
      for (uint32_t j = 0; j < 32; ++j) {
        const float wq = round_dt(t, x[j] / p);
        if (fp8)
          row[c0 + j] = e4m3_from_f32(wq);
        else
          put_nibble(row, c0 + j, fp4_nearest(t, wq));
      }
    }
  }
}

// nvfp4: enc = 1, or f32(2688 / global) with MLX's global scale; scale byte
// s = to_fp8(f32(T(amax / 6) * enc)); elements f32(T(x / T(E4M3(s))) * enc) to the first
// nearest E2M1 (differences in f32).
void nvfp4_rows(const QuantDesc &d, const Source &src, uint64_t ub, uint64_t ue, ValueError *err) {
  const uint32_t t = src.dtype;
  float enc = 1.0f;
  if (d.global_scale_mode == GlobalScaleMode::kMlxAmax)
    enc = 2688.0f / dq::f32_from_bits(load_le32(d.global_scale));  // checked finite before
  const uint64_t ngroups = d.cols / 16, row_bytes = d.cols / 2;
  uint8_t *data = const_cast<uint8_t *>(d.data);
  uint8_t *scales = const_cast<uint8_t *>(d.scales);
  float x[16];
  for (uint64_t r = ub; r < ue; ++r) {
    uint8_t *row = data + r * row_bytes;
    for (uint64_t g = 0; g < ngroups; ++g) {
      const uint64_t c0 = g * 16;
      if (!load_group(src, r, c0, 16, x, err)) {
        scales[r * ngroups + g] = 0;
        std::memset(row + c0 / 2, 0, 8);
        continue;
      }
      const float dv = round_dt(t, group_amax(x, 16) / 6.0f);
      const uint8_t sc = e4m3_from_f32(dq::no_contract(dv * enc));
      scales[r * ngroups + g] = sc;
      const float sd = round_dt(t, dq::f32_from_bits(dq::e4m3_to_f32(sc, false)));
      for (uint32_t j = 0; j < 16; ++j) {
        const float wq = dq::no_contract(round_dt(t, x[j] / sd) * enc);
        put_nibble(row, c0 + j, fp4_nearest(TBLOB_DTYPE_F32, wq));
      }
    }
  }
}

}  // namespace quant
}  // namespace tblob
