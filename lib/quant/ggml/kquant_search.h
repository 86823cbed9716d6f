// The scale searches ggml's K-quant and IQ4 quantizers share, and the integer and f16 steps
// they round with. Every function repeats ggml's float operations in ggml's order (each sum
// left to right, each product and sum rounded on its own: the files are built with
// -ffp-contract=off), because a different order or one fused multiply-add changes which
// candidate scale wins and so the bytes written (docs/quantize.md, "GGML blocks").
#pragma once
#include <cstdint>
#include <cstring>

#include "core/endian.h"
#include "dequant/convert.h"

namespace tblob {
namespace ggmlq {

constexpr int kQK = 256;                // values per super-block (QK_K)
constexpr float kGroupMaxEps = 1e-15f;  // groups whose largest magnitude is below this are zero

// Rounds to the nearest integer by adding 1.5 * 2^23 and reading the low mantissa bits, as
// ggml does: ties go to even, and values past +-2^22 (or NaN) give what these bits give
// rather than a saturated result, which a ggml-compatible writer must reproduce.
inline int nearest_int(float v) {
  const uint32_t u = dq::f32_bits(v + 12582912.0f);
  return static_cast<int>(u & 0x007FFFFFu) - 0x00400000;
}

inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// ggml's f32 -> f16 (round to nearest even, overflow to inf); every NaN becomes the quiet NaN
// 0x7E00 with the input's sign (ggml drops the payload).
inline uint16_t to_half(float f) {
  const uint32_t u = dq::f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7E00u);
  return dq::f32_to_f16(u);
}
inline float from_half(uint16_t h) { return dq::f32_from_bits(dq::f16_to_f32(h)); }
// Stores f as an f16 field and returns the value the field holds, which later steps use.
inline float store_half(uint8_t *p, float f) {
  const uint16_t h = to_half(f);
  store_le(p, h);
  return from_half(h);
}

// Q2_K's and Q3_K's 2-bit field: byte 32k+i holds values 128k+i, +32, +64, +96 (bits 0-1,
// 2-3, 4-5, 6-7). Levels must be 0..3.
inline void pack_2bit(const uint8_t *L, uint8_t *qs) {
  for (int k = 0; k < kQK / 128; ++k) {
    const uint8_t *l = L + 128 * k;
    for (int i = 0; i < 32; ++i) {
      qs[32 * k + i] = static_cast<uint8_t>(l[i] | (l[i + 32] << 2) | (l[i + 64] << 4) | (l[i + 96] << 6));
    }
  }
}

// Symmetric levels in [-nmax, nmax-1] for n values (ggml's make_qx_quants with rmse_type 1):
// the scale -max/nmax (max the value of largest magnitude) and 18 nearby ones, keeping the one
// whose weighted least-squares fit is best. w: n weights, or null for x^2. L receives level +
// nmax. Returns the fitted scale (negative when max is positive).
float search_symmetric(int n, int nmax, const float *x, const float *w, int8_t *L);

// Q3_K's unweighted search (make_q3_quants with do_rmse, nmax 4, 16 values): the initial
// levels, then up to five passes that move single levels while the x^2-weighted fit improves.
// L receives level + 4.
float search_q3_rmse(const float *x, int8_t *L);

// Levels in [0, nmax] with a minimum (make_qkx2_quants / make_qkx3_quants, which agree when
// weights are given): the min/max scale, then nstep+1 scales (rmin + rdelta*is + nmax)/(max -
// min), each refitted by weighted least squares for scale and min, keeping the smallest
// weighted error (absolute when use_mad, else squared). min in each candidate is the best
// fit's so far, not the data's. *neg_min receives minus the min (>= 0); returns the scale.
float search_affine(int n, int nmax, const float *x, const float *w, uint8_t *L, float *neg_min, float rmin,
                    float rdelta, int nstep, bool use_mad);

// Non-negative levels in [0, nmax] for the sub-block scales and mins of the importance paths
// (make_qp_quants): nine scales around max/nmax by weighted squared error, then up to five
// passes moving single levels. Returns the scale.
float search_positive(int n, int nmax, const float *x, const float *w, uint8_t *L);

// IQ4_NL/IQ4_XS grid (ggml's kvalues_iq4nl) and the index of its value nearest v, as ggml's
// best_index_int8: at or beyond an end the end; between two neighbours the lower one only
// when strictly nearer.
constexpr int8_t kIq4Grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
int iq4_grid_index(float v);

// IQ4_XS's sub-block scale for 32 values with weights w (quantize_row_iq4_nl_impl with ntry
// 7): the fit at d = max/127 (max the value of largest magnitude), then at inverse scales
// (t - 127)/max for t in -7..7, keeping the best weighted least-squares fit; 0 for a group
// below kGroupMaxEps.
float search_iq4_scale(const float *x, const float *w);

}  // namespace ggmlq
}  // namespace tblob
