// The NEON search set (kquant_batch.h): kquant_lanes.h with four lanes (one q register).
// Built with -ffp-contract=off: AArch64 GCC fuses a*b + c by default otherwise.
#include "quant/ggml/kquant_lanes.h"

namespace tblob {
namespace ggml {
namespace q {

namespace {
using L4 = Lanes<vf4, vi4>;
}  // namespace

const SearchSet kNeonSearches = {L4::affine_batch, L4::symmetric_batch, L4::q3_rmse_batch, L4::iq4_batch};

}  // namespace q
}  // namespace ggml
}  // namespace tblob
