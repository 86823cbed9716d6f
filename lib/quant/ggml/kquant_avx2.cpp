// The AVX2 search set (kquant_batch.h): eight sub-blocks side by side, one per lane. Each lane
// runs exactly the scalar search's operations in the scalar order (sums stay within a lane;
// IEEE add, multiply, divide and compare are the same in a lane as in a scalar register;
// this file is built with -mavx2 and -ffp-contract=off, never -mfma), and a branch of the
// scalar code becomes a per-lane select, so the set writes the scalar set's bytes. Sub-blocks
// whose group the scalar code leaves early (all zero, or max <= min) compute garbage in
// their lane that the final selects discard.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "dequant/ggml/ggml_blocks.h"
#include "quant/ggml/kquant_batch.h"
#include "quant/ggml/quant_common.h"

namespace tblob {
namespace ggml {
namespace q {

namespace {

typedef float vf __attribute__((vector_size(32)));
typedef int32_t vi __attribute__((vector_size(32)));
constexpr int kLanes = 8;

inline vf splat(float f) { return vf{f, f, f, f, f, f, f, f}; }
inline vi splat_i(int v) { return vi{v, v, v, v, v, v, v, v}; }
inline vf to_f(vi v) { return __builtin_convertvector(v, vf); }
inline vf sel(vi m, vf a, vf b) { return m ? a : b; }
inline vi sel_i(vi m, vi a, vi b) { return m ? a : b; }
inline bool any(vi m) { return _mm256_movemask_ps(reinterpret_cast<__m256>(m)) != 0; }
inline vf vabs(vf v) { return reinterpret_cast<vf>(reinterpret_cast<vi>(v) & 0x7FFFFFFF); }
// nearest_int per lane: the same addition and bit extraction as the scalar one.
inline vi nearest(vf v) {
  const vi u = reinterpret_cast<vi>(v + 12582912.0f);
  return (u & 0x007FFFFF) - 0x00400000;
}
inline vi clamp_v(vi v, int lo, int hi) {
  v = v < lo ? splat_i(lo) : v;
  return v > hi ? splat_i(hi) : v;
}

// Lane j of out[i] = x[n*(first + j) + i]: value i of sub-block first+j.
void transpose_in(const float *x, int n, int first, vf *out) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < kLanes; ++j) out[i][j] = x[n * (first + j) + i];
  }
}

// make_qkx3_quants with weights, eight sub-blocks of n values at once.
void affine_lanes(int n, int nmax, const vf *x, const vf *w, vi *L, vf *scale_out, vf *neg_min_out, float rmin,
                  float rdelta, int nstep, bool use_mad) {
  vf min = x[0], max = x[0];
  vf sum_w = w[0];
  vf sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    min = x[i] < min ? x[i] : min;
    max = x[i] > max ? x[i] : max;
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  min = min > 0.0f ? splat(0.0f) : min;
  const vi degenerate = max <= min;
  const float fnmax = static_cast<float>(nmax);
  vf iscale = fnmax / (max - min);
  vf scale = 1.0f / iscale;
  vf best = splat(0.0f);
  for (int i = 0; i < n; ++i) {
    L[i] = clamp_v(nearest(iscale * (x[i] - min)), 0, nmax);
    vf diff = scale * to_f(L[i]) + min - x[i];
    diff = use_mad ? vabs(diff) : diff * diff;
    best += w[i] * diff;
  }
  if (nstep >= 1) {
    vi cand[32];
    for (int is = 0; is <= nstep; ++is) {
      const float num = rmin + rdelta * static_cast<float>(is) + fnmax;
      iscale = num / (max - min);
      vf sum_l = splat(0.0f), sum_l2 = splat(0.0f), sum_xl = splat(0.0f);
      for (int i = 0; i < n; ++i) {
        cand[i] = clamp_v(nearest(iscale * (x[i] - min)), 0, nmax);
        const vf fl = to_f(cand[i]);
        sum_l += w[i] * fl;
        sum_l2 += w[i] * fl * fl;
        sum_xl += w[i] * fl * x[i];
      }
      const vf D = sum_w * sum_l2 - sum_l * sum_l;
      vf this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      vf this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      const vi pos = this_min > 0.0f;
      this_min = sel(pos, splat(0.0f), this_min);
      this_scale = sel(pos, sum_xl / sum_l2, this_scale);
      vf err = splat(0.0f);
      for (int i = 0; i < n; ++i) {
        vf diff = this_scale * to_f(cand[i]) + this_min - x[i];
        diff = use_mad ? vabs(diff) : diff * diff;
        err += w[i] * diff;
      }
      const vi take = (D > 0.0f) & (err < best) & ~degenerate;
      if (!any(take)) continue;
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

void affine_batch(int nsub, int n, int nmax, const float *x, const float *w, uint8_t *L, float *scales,
                  float *neg_mins, float rmin, float rdelta, int nstep, bool use_mad) {
  vf xt[32], wt[32];
  vi lt[32];
  for (int first = 0; first < nsub; first += kLanes) {
    transpose_in(x, n, first, xt);
    transpose_in(w, n, first, wt);
    vf sc, nm;
    affine_lanes(n, nmax, xt, wt, lt, &sc, &nm, rmin, rdelta, nstep, use_mad);
    for (int j = 0; j < kLanes; ++j) {
      scales[first + j] = sc[j];
      neg_mins[first + j] = nm[j];
      for (int i = 0; i < n; ++i) L[n * (first + j) + i] = static_cast<uint8_t>(lt[i][j]);
    }
  }
}

// The value of largest magnitude per lane (the first one on ties), and that magnitude.
void largest_magnitude(int n, const vf *x, vf *max, vf *amax) {
  vf m = splat(0.0f), a = splat(0.0f);
  for (int i = 0; i < n; ++i) {
    const vf ax = vabs(x[i]);
    const vi up = ax > a;
    a = sel(up, ax, a);
    m = sel(up, x[i], m);
  }
  *max = m;
  *amax = a;
}

// make_qx_quants with rmse_type 1 (weights w, or x^2 when w is null), eight sub-blocks.
void symmetric_lanes(int n, int nmax, const vf *x, const vf *w, vi *L, vf *scale_out) {
  vf max, amax;
  largest_magnitude(n, x, &max, &amax);
  const vi zero = amax < kGroupMaxEps;
  vi cand[32];
  auto fit = [&](vf iscale, vf *sumlx, vf *suml2) {
    vf slx = splat(0.0f), sl2 = splat(0.0f);
    for (int i = 0; i < n; ++i) {
      cand[i] = clamp_v(nearest(iscale * x[i]), -nmax, nmax - 1);
      const vf wi = w ? w[i] : x[i] * x[i];
      const vf fl = to_f(cand[i]);
      slx += wi * x[i] * fl;
      sl2 += wi * fl * fl;
    }
    *sumlx = slx;
    *suml2 = sl2;
  };
  vf sumlx, suml2;
  fit(static_cast<float>(-nmax) / max, &sumlx, &suml2);
  for (int i = 0; i < n; ++i) L[i] = cand[i] + nmax;
  vf scale = sel(suml2 != 0.0f, sumlx / suml2, splat(0.0f));
  vf best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    fit(-(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max, &sumlx, &suml2);
    const vi take = (suml2 > 0.0f) & (sumlx * sumlx > best * suml2);
    if (!any(take)) continue;
    for (int i = 0; i < n; ++i) L[i] = sel_i(take, cand[i] + nmax, L[i]);
    const vf s = sumlx / suml2;
    scale = sel(take, s, scale);
    best = sel(take, s * sumlx, best);
  }
  for (int i = 0; i < n; ++i) L[i] = sel_i(zero, splat_i(0), L[i]);
  *scale_out = sel(zero, splat(0.0f), scale);
}

void symmetric_batch(int nsub, int n, int nmax, const float *x, const float *w, int8_t *L, float *scales) {
  vf xt[32], wt[32];
  vi lt[32];
  for (int first = 0; first < nsub; first += kLanes) {
    transpose_in(x, n, first, xt);
    if (w) transpose_in(w, n, first, wt);
    vf sc;
    symmetric_lanes(n, nmax, xt, w ? wt : nullptr, lt, &sc);
    for (int j = 0; j < kLanes; ++j) {
      scales[first + j] = sc[j];
      for (int i = 0; i < n; ++i) L[n * (first + j) + i] = static_cast<int8_t>(lt[i][j]);
    }
  }
}

// make_q3_quants with do_rmse (nmax 4, 16 values), eight sub-blocks. A pass that changes
// nothing in a lane leaves its state as it was, so running further passes there (while other
// lanes still change) changes nothing either: the lanes stop together.
void q3_rmse_lanes(const vf *x, vi *L, vf *scale_out) {
  constexpr int n = 16, nmax = 4;
  vf max, amax;
  largest_magnitude(n, x, &max, &amax);
  const vi zero = amax < kGroupMaxEps;
  const vf iscale = static_cast<float>(-nmax) / max;
  vf sumlx = splat(0.0f), suml2 = splat(0.0f);
  for (int i = 0; i < n; ++i) {
    L[i] = clamp_v(nearest(iscale * x[i]), -nmax, nmax - 1);
    const vf w = x[i] * x[i];
    const vf fl = to_f(L[i]);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
  for (int pass = 0; pass < 5; ++pass) {
    vi changed = splat_i(0);
    for (int i = 0; i < n; ++i) {
      const vf w = x[i] * x[i];
      const vf li = to_f(L[i]);
      vf slx = sumlx - w * x[i] * li;
      vf sl2 = suml2 - w * li * li;
      const vi nl = clamp_v(nearest(x[i] * sl2 / slx), -nmax, nmax - 1);
      const vf fnl = to_f(nl);
      slx += w * x[i] * fnl;
      sl2 += w * fnl * fnl;
      const vi take = (sumlx - w * x[i] * li > 0.0f) & (nl != L[i]) & (sl2 > 0.0f) &
                      (slx * slx * suml2 > sumlx * sumlx * sl2);
      L[i] = sel_i(take, nl, L[i]);
      sumlx = sel(take, slx, sumlx);
      suml2 = sel(take, sl2, suml2);
      changed |= take;
    }
    if (!any(changed & ~zero)) break;
  }
  for (int i = 0; i < n; ++i) L[i] = sel_i(zero, splat_i(0), L[i] + nmax);
  *scale_out = sel(zero | ~(suml2 > 0.0f), splat(0.0f), sumlx / suml2);
}

void q3_rmse_batch(const float *x, int8_t *L, float *scales) {
  vf xt[16];
  vi lt[16];
  for (int first = 0; first < 16; first += kLanes) {
    transpose_in(x, 16, first, xt);
    vf sc;
    q3_rmse_lanes(xt, lt, &sc);
    for (int j = 0; j < kLanes; ++j) {
      scales[first + j] = sc[j];
      for (int i = 0; i < 16; ++i) L[16 * (first + j) + i] = static_cast<int8_t>(lt[i][j]);
    }
  }
}

// The IQ4 grid as floats, in two halves for the 8-entry permutes.
inline vf grid_lookup(vi idx) {
  const __m256 lo = _mm256_setr_ps(-127, -104, -83, -65, -49, -35, -22, -10);
  const __m256 hi = _mm256_setr_ps(1, 13, 25, 38, 53, 69, 89, 113);
  const __m256i i = reinterpret_cast<__m256i>(idx);
  const vf a = reinterpret_cast<vf>(_mm256_permutevar8x32_ps(lo, i));
  const vf b = reinterpret_cast<vf>(_mm256_permutevar8x32_ps(hi, i));
  return sel(idx > 7, b, a);
}

// best_index_int8 over kIq4Grid per lane. Between the ends the bisection ends at the first
// grid value v is less than (counting "not less than" makes a NaN land where the bisection
// lands it, on 15).
inline vi grid_index(vf v) {
  vi mu = splat_i(1);
  for (int k = 1; k < 15; ++k) mu -= ~(v < static_cast<float>(kIq4Grid[k]));  // a true mask is -1
  const vi mid = sel_i(v - grid_lookup(mu - 1) < grid_lookup(mu) - v, mu - 1, mu);
  const vi hi_end = v >= 113.0f;
  const vi lo_end = v <= -127.0f;
  return sel_i(lo_end, splat_i(0), sel_i(hi_end, splat_i(15), mid));
}

// search_iq4_scale, eight sub-blocks of 32.
vf iq4_lanes(const vf *x, const vf *w) {
  vf max, amax;
  largest_magnitude(32, x, &max, &amax);
  const vi zero = amax < kGroupMaxEps;
  auto fit = [&](vf id, vf *sumqx, vf *sumq2) {
    vf sqx = splat(0.0f), sq2 = splat(0.0f);
    for (int j = 0; j < 32; ++j) {
      const vf qv = grid_lookup(grid_index(id * x[j]));
      sqx += w[j] * qv * x[j];
      sq2 += w[j] * qv * qv;
    }
    *sumqx = sqx;
    *sumq2 = sq2;
  };
  const vf d0 = -max / static_cast<float>(kIq4Grid[0]);
  vf sumqx, sumq2;
  fit(1.0f / d0, &sumqx, &sumq2);
  vf d = sel(sumq2 > 0.0f, sumqx / sumq2, splat(0.0f));
  vf best = d * sumqx;
  for (int t = -7; t <= 7; ++t) {
    fit(static_cast<float>(t + kIq4Grid[0]) / max, &sumqx, &sumq2);
    const vi take = (sumq2 > 0.0f) & (sumqx * sumqx > best * sumq2);
    const vf nd = sumqx / sumq2;
    d = sel(take, nd, d);
    best = sel(take, nd * sumqx, best);
  }
  return sel(zero, splat(0.0f), d);
}

void iq4_batch(const float *x, const float *w, float *scales) {
  vf xt[32], wt[32];
  transpose_in(x, 32, 0, xt);
  transpose_in(w, 32, 0, wt);
  const vf d = iq4_lanes(xt, wt);
  for (int j = 0; j < kLanes; ++j) scales[j] = d[j];
}

}  // namespace

const SearchSet kAvx2Searches = {affine_batch, symmetric_batch, q3_rmse_batch, iq4_batch};

}  // namespace q
}  // namespace ggml
}  // namespace tblob
