// The scalar search set (one sub-block after another) and the choice of set per kernel set.
#include "quant/ggml/kquant_batch.h"

#include <cstring>

#include "dequant/dispatch.h"
#include "quant/ggml/kquant_search.h"

namespace tblob {
namespace ggml {
namespace q {

namespace {

void affine_each(int nsub, int n, int nmax, const float *x, const float *w, uint8_t *L, float *scales,
                 float *neg_mins, float rmin, float rdelta, int nstep, bool use_mad) {
  uint8_t aux[32];
  for (int j = 0; j < nsub; ++j) {
    scales[j] = make_qkx3_quants(n, nmax, x + n * j, w + n * j, L + n * j, &neg_mins[j], aux, rmin, rdelta, nstep,
                                 use_mad);
  }
}

void symmetric_each(int nsub, int n, int nmax, const float *x, const float *w, int8_t *L, float *scales) {
  for (int j = 0; j < nsub; ++j) scales[j] = make_qx_quants(n, nmax, x + n * j, L + n * j, 1, w ? w + n * j : nullptr);
}

void q3_rmse_each(const float *x, int8_t *L, float *scales) {
  for (int j = 0; j < 16; ++j) scales[j] = search_q3_rmse(x + 16 * j, L + 16 * j);
}

void iq4_each(const float *x, const float *w, float *scales) {
  for (int j = 0; j < 8; ++j) scales[j] = search_iq4_scale(x + 32 * j, w + 32 * j);
}

}  // namespace

const SearchSet kScalarSearches = {affine_each, symmetric_each, q3_rmse_each, iq4_each};

const SearchSet &active_searches() {
  const char *name = active_kernel_name();
  (void)name;
#if defined(TBLOB_DEQUANT_AVX512)
  if (std::strcmp(name, "avx512") == 0) return kAvx512Searches;
#endif
#if defined(TBLOB_DEQUANT_AVX2)
  if (std::strcmp(name, "avx2") == 0) return kAvx2Searches;
#endif
#if defined(TBLOB_DEQUANT_NEON)
  if (std::strcmp(name, "neon") == 0) return kNeonSearches;
#endif
  return kScalarSearches;
}

}  // namespace q
}  // namespace ggml
}  // namespace tblob
