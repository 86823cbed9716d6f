// The sub-block searches of one K-quant block as batch calls, so that a SIMD set can run the
// sub-blocks side by side, one per lane, each lane doing the scalar search's operations in the
// scalar order: every set writes the same bytes (the searches are independent per sub-block;
// only their sums are order-sensitive, and those stay within a lane).
#pragma once
#include <cstdint>

namespace tblob {
namespace ggml {
namespace q {

struct SearchSet {
  // make_qkx3_quants (weights given) on nsub sub-blocks of n values (x, w, L at offset n*j; scales[j], neg_mins[j]).
  void (*affine)(int nsub, int n, int nmax, const float *x, const float *w, uint8_t *L, float *scales,
                 float *neg_mins, float rmin, float rdelta, int nstep, bool use_mad);
  // make_qx_quants (rmse_type 1) on nsub sub-blocks of n values (w null: x^2).
  void (*symmetric)(int nsub, int n, int nmax, const float *x, const float *w, int8_t *L, float *scales);
  // search_q3_rmse on the 16 sub-blocks of 16 of a block.
  void (*q3_rmse)(const float *x, int8_t *L, float *scales);
  // search_iq4_scale on the 8 sub-blocks of 32 of a block (w: 256 weights).
  void (*iq4)(const float *x, const float *w, float *scales);
};

extern const SearchSet kScalarSearches;
// Built (and referenced) only where the matching dequantization set is: kquant_avx2.cpp and
// kquant_avx512.cpp with TBLOB_DEQUANT_AVX2 / TBLOB_DEQUANT_AVX512, kquant_neon.cpp with
// TBLOB_DEQUANT_NEON.
extern const SearchSet kAvx2Searches;
extern const SearchSet kAvx512Searches;
extern const SearchSet kNeonSearches;

// The set of the active kernel set (dequant/dispatch.h: TBLOB_KERNEL, set_kernel): "avx512",
// "avx2" and "neon" take their own, anything else the scalar one.
const SearchSet &active_searches();

}  // namespace q
}  // namespace ggml
}  // namespace tblob
