// The K-quant sub-block searches (kquant_batch.h) run W sub-blocks side by side, one per
// lane of a GCC/clang vector of W floats. Each lane performs exactly the scalar search's
// operations in the scalar order: sums stay within a lane, IEEE add, multiply, divide and
// compare give in a lane what they give in a scalar register, and every branch of the scalar
// code becomes a per-lane select. So a set built from this header writes the scalar set's
// bytes, whatever the ISA, as long as its file is built with -ffp-contract=off (and never
// -ffast-math). Sub-blocks that the scalar code leaves early (all zero, max <= min) compute
// garbage in their lane that the final selects discard.
//
// Included once by each ISA's file (kquant_avx2.cpp, kquant_avx512.cpp, kquant_neon.cpp);
// everything here has internal linkage, so each file gets its own copy for its own flags.
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "quant/ggml/kquant_batch.h"
#include "quant/ggml/quant_common.h"

namespace tblob {
namespace ggml {
namespace q {
namespace {

// Vector types by width (only the widths the file's ISA holds in one or two registers).
typedef float vf4 __attribute__((vector_size(16)));
typedef int32_t vi4 __attribute__((vector_size(16)));
inline vf4 to_f(vi4 v) { return __builtin_convertvector(v, vf4); }
#if defined(__AVX2__)
typedef float vf8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));
inline vf8 to_f(vi8 v) { return __builtin_convertvector(v, vf8); }
#endif
#if defined(__AVX512F__)
typedef float vf16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));
inline vf16 to_f(vi16 v) { return __builtin_convertvector(v, vf16); }
#endif

// The IQ4 grid (kvalues_iq4nl) as floats.
constexpr float kLaneGrid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// True when any lane of a comparison mask is set; the grid value at each lane's index.
template <class I>
inline bool any_lane(I m) {
  int32_t acc = 0;
  for (unsigned j = 0; j < sizeof(I) / 4; ++j) acc |= m[j];
  return acc != 0;
}
template <class F, class I>
inline F grid_lanes(I idx) {
  F r;
  for (unsigned j = 0; j < sizeof(I) / 4; ++j) r[j] = kLaneGrid[idx[j] & 15];
  return r;
}
#if defined(__AVX2__)
template <>
inline bool any_lane<vi8>(vi8 m) {
  return _mm256_movemask_ps(reinterpret_cast<__m256>(m)) != 0;
}
template <>
inline vf8 grid_lanes<vf8, vi8>(vi8 idx) {
  const __m256 lo = _mm256_loadu_ps(kLaneGrid), hi = _mm256_loadu_ps(kLaneGrid + 8);
  const __m256i i = reinterpret_cast<__m256i>(idx);
  const vf8 a = reinterpret_cast<vf8>(_mm256_permutevar8x32_ps(lo, i));
  const vf8 b = reinterpret_cast<vf8>(_mm256_permutevar8x32_ps(hi, i));
  return idx > 7 ? b : a;
}
#endif
#if defined(__AVX512F__)
template <>
inline bool any_lane<vi16>(vi16 m) {
  const __m512i v = reinterpret_cast<__m512i>(m);
  return _mm512_test_epi32_mask(v, v) != 0;
}
template <>
inline vf16 grid_lanes<vf16, vi16>(vi16 idx) {
  return reinterpret_cast<vf16>(_mm512_permutexvar_ps(reinterpret_cast<__m512i>(idx), _mm512_loadu_ps(kLaneGrid)));
}
#endif

template <class F, class I>
struct Lanes {
  static constexpr int W = static_cast<int>(sizeof(F) / 4);

  static F splat(float f) { return F{} + f; }
  static I splat_i(int v) { return I{} + v; }
  static F sel(I m, F a, F b) { return m ? a : b; }
  static I sel_i(I m, I a, I b) { return m ? a : b; }
  static F vabs(F v) { return reinterpret_cast<F>(reinterpret_cast<I>(v) & 0x7FFFFFFF); }
  // nearest_int per lane: the same addition and bit extraction as the scalar one.
  static I nearest(F v) {
    const I u = reinterpret_cast<I>(v + 12582912.0f);
    return (u & 0x007FFFFF) - 0x00400000;
  }
  static I clamp_v(I v, int lo, int hi) {
    v = v < lo ? splat_i(lo) : v;
    return v > hi ? splat_i(hi) : v;
  }

  // Lane j of out[i] = x[n*(first + j) + i]: value i of sub-block first+j.
  static void transpose_in(const float *x, int n, int first, F *out) {
    float t[32 * W];  // through plain floats: element inserts into vectors compile badly
    for (int j = 0; j < W; ++j) {
      for (int i = 0; i < n; ++i) t[W * i + j] = x[n * (first + j) + i];
    }
    std::memcpy(out, t, sizeof(float) * W * static_cast<size_t>(n));
  }

  // The first value of largest magnitude per lane, and that magnitude.
  static void largest_magnitude(int n, const F *x, F *max, F *amax) {
    F m = splat(0.0f), a = splat(0.0f);
    for (int i = 0; i < n; ++i) {
      const F ax = vabs(x[i]);
      const I up = ax > a;
      a = sel(up, ax, a);
      m = sel(up, x[i], m);
    }
    *max = m;
    *amax = a;
  }

  // make_qkx3_quants with weights.
  static void affine(int n, int nmax, const F *x, const F *w, I *L, F *scale_out, F *neg_min_out, float rmin,
                     float rdelta, int nstep, bool use_mad) {
    F min = x[0], max = x[0];
    F sum_w = w[0];
    F sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
      min = x[i] < min ? x[i] : min;
      max = x[i] > max ? x[i] : max;
      sum_w += w[i];
      sum_x += w[i] * x[i];
    }
    min = min > 0.0f ? splat(0.0f) : min;
    const I degenerate = max <= min;
    const float fnmax = static_cast<float>(nmax);
    F iscale = fnmax / (max - min);
    F scale = 1.0f / iscale;
    F best = splat(0.0f);
    for (int i = 0; i < n; ++i) {
      L[i] = clamp_v(nearest(iscale * (x[i] - min)), 0, nmax);
      F diff = scale * to_f(L[i]) + min - x[i];
      diff = use_mad ? vabs(diff) : diff * diff;
      best += w[i] * diff;
    }
    if (nstep >= 1) {
      I cand[32];
      for (int is = 0; is <= nstep; ++is) {
        const float num = rmin + rdelta * static_cast<float>(is) + fnmax;
        iscale = num / (max - min);
        F sum_l = splat(0.0f), sum_l2 = splat(0.0f), sum_xl = splat(0.0f);
        for (int i = 0; i < n; ++i) {
          cand[i] = clamp_v(nearest(iscale * (x[i] - min)), 0, nmax);
          const F fl = to_f(cand[i]);
          sum_l += w[i] * fl;
          sum_l2 += w[i] * fl * fl;
          sum_xl += w[i] * fl * x[i];
        }
        const F D = sum_w * sum_l2 - sum_l * sum_l;
        F this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
        F this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
        const I pos = this_min > 0.0f;
        this_min = sel(pos, splat(0.0f), this_min);
        this_scale = sel(pos, sum_xl / sum_l2, this_scale);
        F err = splat(0.0f);
        for (int i = 0; i < n; ++i) {
          F diff = this_scale * to_f(cand[i]) + this_min - x[i];
          diff = use_mad ? vabs(diff) : diff * diff;
          err += w[i] * diff;
        }
        const I take = (D > 0.0f) & (err < best) & ~degenerate;
        if (!any_lane(take)) continue;
        for (int i = 0; i < n; ++i) L[i] = sel_i(take, cand[i], L[i]);
        best = sel(take, err, best);
        scale = sel(take, this_scale, scale);
        min = sel(take, this_min, min);
      }
    }
    for (int i = 0; i < n; ++i) L[i] = sel_i(degenerate, splat_i(0), L[i]);
    *scale_out = sel(degenerate, splat(0.0f), scale);
    *neg_min_out = -min;
  }

  static void affine_batch(int nsub, int n, int nmax, const float *x, const float *w, uint8_t *L, float *scales,
                           float *neg_mins, float rmin, float rdelta, int nstep, bool use_mad) {
    F xt[32], wt[32];
    I lt[32];
    for (int first = 0; first < nsub; first += W) {
      transpose_in(x, n, first, xt);
      transpose_in(w, n, first, wt);
      F sc, nm;
      affine(n, nmax, xt, wt, lt, &sc, &nm, rmin, rdelta, nstep, use_mad);
      for (int j = 0; j < W; ++j) {
        scales[first + j] = sc[j];
        neg_mins[first + j] = nm[j];
        for (int i = 0; i < n; ++i) L[n * (first + j) + i] = static_cast<uint8_t>(lt[i][j]);
      }
    }
  }

  // make_qx_quants with rmse_type 1 (weights w, or x^2 when w is null).
  static void symmetric(int n, int nmax, const F *x, const F *w, I *L, F *scale_out) {
    F max, amax;
    largest_magnitude(n, x, &max, &amax);
    const I zero = amax < kGroupMaxEps;
    I cand[32];
    auto fit = [&](F iscale, F *sumlx, F *suml2) {
      F slx = splat(0.0f), sl2 = splat(0.0f);
      for (int i = 0; i < n; ++i) {
        cand[i] = clamp_v(nearest(iscale * x[i]), -nmax, nmax - 1);
        const F wi = w ? w[i] : x[i] * x[i];
        const F fl = to_f(cand[i]);
        slx += wi * x[i] * fl;
        sl2 += wi * fl * fl;
      }
      *sumlx = slx;
      *suml2 = sl2;
    };
    F sumlx, suml2;
    fit(static_cast<float>(-nmax) / max, &sumlx, &suml2);
    for (int i = 0; i < n; ++i) L[i] = cand[i] + nmax;
    F scale = sel(suml2 != 0.0f, sumlx / suml2, splat(0.0f));
    F best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
      if (is == 0) continue;
      fit(-(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max, &sumlx, &suml2);
      const I take = (suml2 > 0.0f) & (sumlx * sumlx > best * suml2);
      if (!any_lane(take)) continue;
      for (int i = 0; i < n; ++i) L[i] = sel_i(take, cand[i] + nmax, L[i]);
      const F s = sumlx / suml2;
      scale = sel(take, s, scale);
      best = sel(take, s * sumlx, best);
    }
    for (int i = 0; i < n; ++i) L[i] = sel_i(zero, splat_i(0), L[i]);
    *scale_out = sel(zero, splat(0.0f), scale);
  }

  static void symmetric_batch(int nsub, int n, int nmax, const float *x, const float *w, int8_t *L, float *scales) {
    F xt[32], wt[32];
    I lt[32];
    for (int first = 0; first < nsub; first += W) {
      transpose_in(x, n, first, xt);
      if (w) transpose_in(w, n, first, wt);
      F sc;
      symmetric(n, nmax, xt, w ? wt : nullptr, lt, &sc);
      for (int j = 0; j < W; ++j) {
        scales[first + j] = sc[j];
        for (int i = 0; i < n; ++i) L[n * (first + j) + i] = static_cast<int8_t>(lt[i][j]);
      }
    }
  }

  // make_q3_quants with do_rmse (nmax 4, 16 values). A pass that changes nothing in a lane
  // leaves its state as it was, so further passes there (while other lanes still change)
  // change nothing either: the lanes stop together.
  static void q3_rmse(const F *x, I *L, F *scale_out) {
    constexpr int n = 16, nmax = 4;
    F max, amax;
    largest_magnitude(n, x, &max, &amax);
    const I zero = amax < kGroupMaxEps;
    const F iscale = static_cast<float>(-nmax) / max;
    F sumlx = splat(0.0f), suml2 = splat(0.0f);
    for (int i = 0; i < n; ++i) {
      L[i] = clamp_v(nearest(iscale * x[i]), -nmax, nmax - 1);
      const F w = x[i] * x[i];
      const F fl = to_f(L[i]);
      sumlx += w * x[i] * fl;
      suml2 += w * fl * fl;
    }
    for (int pass = 0; pass < 5; ++pass) {
      I changed = splat_i(0);
      for (int i = 0; i < n; ++i) {
        const F w = x[i] * x[i];
        const F li = to_f(L[i]);
        const F slx0 = sumlx - w * x[i] * li;
        const F sl20 = suml2 - w * li * li;
        const I nl = clamp_v(nearest(x[i] * sl20 / slx0), -nmax, nmax - 1);
        const F fnl = to_f(nl);
        const F slx = slx0 + w * x[i] * fnl;
        const F sl2 = sl20 + w * fnl * fnl;
        const I take = (slx0 > 0.0f) & (nl != L[i]) & (sl2 > 0.0f) & (slx * slx * suml2 > sumlx * sumlx * sl2);
        L[i] = sel_i(take, nl, L[i]);
        sumlx = sel(take, slx, sumlx);
        suml2 = sel(take, sl2, suml2);
        changed |= take;
      }
      if (!any_lane(changed & ~zero)) break;
    }
    for (int i = 0; i < n; ++i) L[i] = sel_i(zero, splat_i(0), L[i] + nmax);
    *scale_out = sel(zero | ~(suml2 > 0.0f), splat(0.0f), sumlx / suml2);
  }

  static void q3_rmse_batch(const float *x, int8_t *L, float *scales) {
    F xt[16];
    I lt[16];
    for (int first = 0; first < 16; first += W) {
      transpose_in(x, 16, first, xt);
      F sc;
      q3_rmse(xt, lt, &sc);
      for (int j = 0; j < W; ++j) {
        scales[first + j] = sc[j];
        for (int i = 0; i < 16; ++i) L[16 * (first + j) + i] = static_cast<int8_t>(lt[i][j]);
      }
    }
  }

  // iq4_index per lane: the count of grid values v is not less than (see kquant_search.h).
  static I iq4_index(F v) {
    I mu = splat_i(1);
    for (int k = 1; k < 15; ++k) mu -= ~(v < kLaneGrid[k]);  // a true mask is -1
    const I mid = sel_i(v - grid_lanes<F, I>(mu - 1) < grid_lanes<F, I>(mu) - v, mu - 1, mu);
    const I hi_end = v >= kLaneGrid[15];
    const I lo_end = v <= kLaneGrid[0];
    return sel_i(lo_end, splat_i(0), sel_i(hi_end, splat_i(15), mid));
  }

  // search_iq4_scale, 32 values a lane.
  static F iq4(const F *x, const F *w) {
    F max, amax;
    largest_magnitude(32, x, &max, &amax);
    const I zero = amax < kGroupMaxEps;
    auto fit = [&](F id, F *sumqx, F *sumq2) {
      F sqx = splat(0.0f), sq2 = splat(0.0f);
      for (int j = 0; j < 32; ++j) {
        const F qv = grid_lanes<F, I>(iq4_index(id * x[j]));
        sqx += w[j] * qv * x[j];
        sq2 += w[j] * qv * qv;
      }
      *sumqx = sqx;
      *sumq2 = sq2;
    };
    const F d0 = -max / kLaneGrid[0];
    F sumqx, sumq2;
    fit(1.0f / d0, &sumqx, &sumq2);
    F d = sel(sumq2 > 0.0f, sumqx / sumq2, splat(0.0f));
    F best = d * sumqx;
    for (int t = -7; t <= 7; ++t) {
      fit(static_cast<float>(t - 127) / max, &sumqx, &sumq2);
      const I take = (sumq2 > 0.0f) & (sumqx * sumqx > best * sumq2);
      const F nd = sumqx / sumq2;
      d = sel(take, nd, d);
      best = sel(take, nd * sumqx, best);
    }
    return sel(zero, splat(0.0f), d);
  }

  static void iq4_batch(const float *x, const float *w, float *scales) {
    F xt[32], wt[32];
    for (int first = 0; first < 8; first += W) {
      transpose_in(x, 32, first, xt);
      transpose_in(w, 32, first, wt);
      const F d = iq4(xt, wt);
      for (int j = 0; j < W; ++j) scales[first + j] = d[j];
    }
  }
};

}  // namespace
}  // namespace q
}  // namespace ggml
}  // namespace tblob
