// The searches only ggml's K-quant family and IQ4_XS use (kquant_search.h). Sums run left to
// right and every expression is written with ggml's operand order and grouping; int levels
// convert to float at the same points as in ggml, and levels are stored in the same integer
// widths (a negative level kept in a uint8_t wraps, and later steps read the wrapped value).
#include "quant/ggml/kquant_search.h"

#include <cmath>

#include "dequant/ggml/ggml_blocks.h"

namespace tblob {
namespace ggml {
namespace q {

namespace {

// The first value of largest magnitude in *max, its magnitude in *amax.
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

}  // namespace

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

namespace {
constexpr float kGridF[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
}  // namespace

int iq4_index(float v) {
  if (v <= kGridF[0]) return 0;
  if (v >= kGridF[15]) return 15;
  int mu = 1;
  for (int k = 1; k < 15; ++k) mu += !(v < kGridF[k]);
  return v - kGridF[mu - 1] < kGridF[mu] - v ? mu - 1 : mu;
}

namespace {
// Weighted least-squares sums of the grid values chosen at inverse scale id.
void iq4_fit(const float *x, const float *w, float id, float *sumqx, float *sumq2) {
  float sqx = 0.0f, sq2 = 0.0f;
  for (int j = 0; j < 32; ++j) {
    const float q = kGridF[iq4_index(id * x[j])];
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

}  // namespace q
}  // namespace ggml
}  // namespace tblob
