// What ggml's K-quant and IQ4_XS quantizers share beyond quant_common.h: the f16 field steps,
// the 2-bit packing, and the searches only they use. Every function repeats ggml's float
// operations in ggml's order (each sum left to right, each product and sum rounded on its own:
// the folder is built with -ffp-contract=off), because a different order or one fused
// multiply-add changes which candidate scale wins and so the bytes written (docs/quantize.md,
// "GGML blocks").
#pragma once
#include <cstdint>
#include <cstring>

#include "quant/ggml/quant_common.h"

namespace tblob {
namespace ggml {
namespace q {

constexpr int kQK = 256;  // values per super-block (QK_K)

inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

inline float from_half(uint16_t h) { return dq::f32_from_bits(dq::f16_to_f32(h)); }
inline float load_half(const uint8_t *p) { return from_half(load_le16(p)); }
// Stores f as an f16 field and returns the value the field holds, which later steps use.
inline float store_half(uint8_t *p, float f) {
  const uint16_t h = fp16(f);
  store_le<uint16_t>(p, h);
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

// Q3_K's unweighted search (ggml's make_q3_quants with do_rmse, nmax 4, 16 values): levels
// from -4/max (max the value of largest magnitude), then up to five passes that move single
// levels while the x^2-weighted least-squares fit improves. L receives level + 4 (0 for a
// group below kGroupMaxEps). Returns the fitted scale.
float search_q3_rmse(const float *x, int8_t *L);

// Non-negative levels in [0, nmax] for the sub-block scales and mins of the importance paths
// (ggml's make_qp_quants): nine inverse scales (nmax + 0.1k)/max by weighted squared error,
// then up to five passes moving single levels. Levels are kept as bytes (a negative one
// wraps, and the passes read it wrapped, as ggml's). Returns the scale.
float search_positive(int n, int nmax, const float *x, const float *w, uint8_t *L);

// ggml's best_index_int8 over the IQ4 grid (kIq4Grid): the end at or beyond either end, else
// the lower of the two neighbours only when strictly nearer. Counted instead of bisected (the
// bisection ends at the first grid value v is less than; counting "not less than" lands a NaN
// where the bisection does, on 15): the same index, without the bisection's dependent loads.
int iq4_index(float v);

// IQ4_XS's sub-block scale for 32 values with weights w (quantize_row_iq4_nl_impl with ntry
// 7): the fit at d = max/127 (max the value of largest magnitude), then at inverse scales
// (t - 127)/max for t in -7..7, keeping the best weighted least-squares fit; 0 for a group
// below kGroupMaxEps.
float search_iq4_scale(const float *x, const float *w);

}  // namespace q
}  // namespace ggml
}  // namespace tblob
