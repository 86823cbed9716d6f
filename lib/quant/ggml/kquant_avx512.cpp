// The AVX-512 search set (kquant_batch.h): kquant_lanes.h with sixteen lanes (one zmm
// register) where a block has sixteen sub-blocks (Q2_K, Q3_K, Q6_K), eight (AVX-512VL on ymm)
// where it has eight (Q4_K, Q5_K, IQ4_XS). Built with the AVX-512 dequantization set's flags
// and -ffp-contract=off: AVX-512F has FMA instructions, and no product may fuse with a sum.
#include "quant/ggml/kquant_lanes.h"

namespace tblob {
namespace ggml {
namespace q {

namespace {
using L8 = Lanes<vf8, vi8>;
using L16 = Lanes<vf16, vi16>;

void affine_batch(int nsub, int n, int nmax, const float *x, const float *w, uint8_t *L, float *scales,
                  float *neg_mins, float rmin, float rdelta, int nstep, bool use_mad) {
  if (nsub % 16 == 0) {
    L16::affine_batch(nsub, n, nmax, x, w, L, scales, neg_mins, rmin, rdelta, nstep, use_mad);
  } else {
    L8::affine_batch(nsub, n, nmax, x, w, L, scales, neg_mins, rmin, rdelta, nstep, use_mad);
  }
}

void symmetric_batch(int nsub, int n, int nmax, const float *x, const float *w, int8_t *L, float *scales) {
  if (nsub % 16 == 0) {
    L16::symmetric_batch(nsub, n, nmax, x, w, L, scales);
  } else {
    L8::symmetric_batch(nsub, n, nmax, x, w, L, scales);
  }
}
}  // namespace

const SearchSet kAvx512Searches = {affine_batch, symmetric_batch, L16::q3_rmse_batch, L8::iq4_batch};

}  // namespace q
}  // namespace ggml
}  // namespace tblob
