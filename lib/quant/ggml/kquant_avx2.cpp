// The AVX2 search set (kquant_batch.h): kquant_lanes.h with eight lanes (one ymm register).
// Built with -mavx2 -ffp-contract=off, never -mfma.
#include "quant/ggml/kquant_lanes.h"

namespace tblob {
namespace ggml {
namespace q {

namespace {
using L8 = Lanes<vf8, vi8>;
}  // namespace

const SearchSet kAvx2Searches = {L8::affine_batch, L8::symmetric_batch, L8::q3_rmse_batch, L8::iq4_batch};

}  // namespace q
}  // namespace ggml
}  // namespace tblob
