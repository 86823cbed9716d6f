// The scale searches of ggml's K-quant family (kquant_search.h). Sums run left to right and
// every expression is written with ggml's operand order and grouping; int levels convert to
// float at the same points as in ggml, and levels are stored in the same integer widths
// (a negative level kept in a uint8_t wraps, and later steps read the wrapped value).
#include "quant/ggml/kquant_search.h"

#include <cmath>

namespace tblob {
namespace ggmlq {

namespace {

// Index of the first value of largest magnitude; its value in *max, magnitude in *amax.
void largest_magnitude(int n, const float *x, float *max, float *amax) {
  float m = 0.0f, a = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > a) {
      a = ax;
      m = x[i];
    }
  }
  *max = m;
  *amax = a;
}

inline float weight_or_square(const float *w, const float *x, int i) { return w ? w[i] : x[i] * x[i]; }

}  // namespace

float search_symmetric(int n, int nmax, const float *x, const float *w, int8_t *L) {
  float max, amax;
  largest_magnitude(n, x, &max, &amax);
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.0f;
  }
  const float fnmax = static_cast<float>(nmax);
  // The levels of one candidate inverse scale and their weighted sums.
  int8_t cand[256];
  auto fit = [&](float iscale, float *sumlx, float *suml2) {
    float slx = 0.0f, sl2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      cand[i] = static_cast<int8_t>(l);
      const float wi = weight_or_square(w, x, i);
      const float fl = static_cast<float>(l);
      slx += wi * x[i] * fl;
      sl2 += wi * fl * fl;
    }
    *sumlx = slx;
    *suml2 = sl2;
  };
  auto keep = [&]() {
    for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(cand[i] + nmax);
  };
  float sumlx, suml2;
  fit(static_cast<float>(-nmax) / max, &sumlx, &suml2);
  keep();
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    fit(-(fnmax + 0.1f * static_cast<float>(is)) / max, &sumlx, &suml2);
    if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
      keep();
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

float search_q3_rmse(const float *x, int8_t *L) {
  constexpr int n = 16, nmax = 4;
  float max, amax;
  largest_magnitude(n, x, &max, &amax);
  if (amax < kGroupMaxEps) {
    std::memset(L, 0, n);
    return 0.0f;
  }
  const float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      const float li = static_cast<float>(L[i]);
      float slx = sumlx - w * x[i] * li;
      if (!(slx > 0.0f)) continue;
      float sl2 = suml2 - w * li * li;
      const int nl = clamp_int(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (nl == L[i]) continue;
      const float fnl = static_cast<float>(nl);
      slx += w * x[i] * fnl;
      sl2 += w * fnl * fnl;
      if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<int8_t>(nl);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

float search_affine(int n, int nmax, const float *x, const float *w, uint8_t *L, float *neg_min, float rmin,
                    float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (min > 0.0f) min = 0.0f;
  if (max == min) {
    std::memset(L, 0, static_cast<size_t>(n));
    *neg_min = -min;
    return 0.0f;
  }
  const float fnmax = static_cast<float>(nmax);
  auto error_of = [&](float scale, float mn, const uint8_t *lv) {
    float e = 0.0f;
    for (int i = 0; i < n; ++i) {
      float diff = scale * static_cast<float>(lv[i]) + mn - x[i];
      diff = use_mad ? std::fabs(diff) : diff * diff;
      e += w[i] * diff;
    }
    return e;
  };
  float iscale = fnmax / (max - min);
  float scale = 1.0f / iscale;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(clamp_int(nearest_int(iscale * (x[i] - min)), 0, nmax));
  }
  float best = error_of(scale, min, L);
  if (nstep < 1) {
    *neg_min = -min;
    return scale;
  }
  uint8_t cand[256];
  for (int is = 0; is <= nstep; ++is) {
    // min is the best fit's so far: later candidates start from it (as ggml's do).
    iscale = (rmin + rdelta * static_cast<float>(is) + fnmax) / (max - min);
    float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * (x[i] - min)), 0, nmax);
      cand[i] = static_cast<uint8_t>(l);
      const float fl = static_cast<float>(l);
      sum_l += w[i] * fl;
      sum_l2 += w[i] * fl * fl;
      sum_xl += w[i] * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (!(D > 0.0f)) continue;
    float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
    float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
    if (this_min > 0.0f) {
      this_min = 0.0f;
      this_scale = sum_xl / sum_l2;
    }
    const float e = error_of(this_scale, this_min, cand);
    if (e < best) {
      std::memcpy(L, cand, static_cast<size_t>(n));
      best = e;
      scale = this_scale;
      min = this_min;
    }
  }
  *neg_min = -min;
  return scale;
}

float search_positive(int n, int nmax, const float *x, const float *w, uint8_t *L) {
  float max = 0.0f;
  for (int i = 0; i < n; ++i) max = max > x[i] ? max : x[i];  // a NaN replaces max, as in ggml
  if (max < kGroupMaxEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.0f;
  }
  const float fnmax = static_cast<float>(nmax);
  float iscale = fnmax / max;
  // The first candidate's levels are not clamped to nmax; only its error reads them.
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(nearest_int(iscale * x[i]));
  float best_mse = 0.0f;
  {
    const float scale = 1.0f / iscale;
    for (int i = 0; i < n; ++i) {
      const float diff = x[i] - scale * static_cast<float>(L[i]);
      best_mse += w[i] * diff * diff;
    }
  }
  for (int is = -4; is <= 4; ++is) {
    if (is == 0) continue;
    const float iscale_is = (0.1f * static_cast<float>(is) + fnmax) / max;
    const float scale_is = 1.0f / iscale_is;
    float mse = 0.0f;
    for (int i = 0; i < n; ++i) {
      const int l = nearest_int(iscale_is * x[i]);
      const int lc = nmax < l ? nmax : l;
      const float diff = x[i] - scale_is * static_cast<float>(lc);
      mse += w[i] * diff * diff;
    }
    if (mse < best_mse) {
      best_mse = mse;
      iscale = iscale_is;
    }
  }
  // The sums take the int level; L keeps it as a byte (wrapped if negative) for the passes.
  float sumlx = 0.0f, suml2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l0 = nearest_int(iscale * x[i]);
    const int l = nmax < l0 ? nmax : l0;
    L[i] = static_cast<uint8_t>(l);
    const float fl = static_cast<float>(l);
    sumlx += w[i] * x[i] * fl;
    suml2 += w[i] * fl * fl;
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float li = static_cast<float>(L[i]);
      float slx = sumlx - w[i] * x[i] * li;
      float sl2 = suml2 - w[i] * li * li;
      if (!(slx > 0.0f && sl2 > 0.0f)) continue;
      const int nl0 = nearest_int(x[i] * sl2 / slx);
      const int nl = nmax < nl0 ? nmax : nl0;
      if (nl == L[i]) continue;
      const float fnl = static_cast<float>(nl);
      slx += w[i] * x[i] * fnl;
      sl2 += w[i] * fnl * fnl;
      if (slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<uint8_t>(nl);
        sumlx = slx;
        suml2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

int iq4_grid_index(float v) {
  if (v <= static_cast<float>(kIq4Grid[0])) return 0;
  if (v >= static_cast<float>(kIq4Grid[15])) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (v < static_cast<float>(kIq4Grid[mid])) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return v - static_cast<float>(kIq4Grid[hi - 1]) < static_cast<float>(kIq4Grid[hi]) - v ? hi - 1 : hi;
}

namespace {
// Weighted least-squares sums of the grid values chosen at inverse scale id.
void iq4_fit(const float *x, const float *w, float id, float *sumqx, float *sumq2) {
  float sqx = 0.0f, sq2 = 0.0f;
  for (int j = 0; j < 32; ++j) {
    const float q = static_cast<float>(kIq4Grid[iq4_grid_index(id * x[j])]);
    sqx += w[j] * q * x[j];
    sq2 += w[j] * q * q;
  }
  *sumqx = sqx;
  *sumq2 = sq2;
}
}  // namespace

float search_iq4_scale(const float *x, const float *w) {
  float max, amax;
  largest_magnitude(32, x, &max, &amax);
  if (amax < kGroupMaxEps) return 0.0f;
  const float d0 = -max / static_cast<float>(kIq4Grid[0]);
  float sumqx, sumq2;
  iq4_fit(x, w, 1.0f / d0, &sumqx, &sumq2);
  float d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
  float best = d * sumqx;
  for (int t = -7; t <= 7; ++t) {
    iq4_fit(x, w, static_cast<float>(t + kIq4Grid[0]) / max, &sumqx, &sumq2);
    if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

}  // namespace ggmlq
}  // namespace tblob
