#include "dequant/scalar/scalar.h"
#include "dequant/kernel_set.h"

#include "dequant/scalar/block_fp8.h"
#include "dequant/scalar/common.h"

namespace tblob {
namespace {

#define TBLOB_ROW3(fn) {&fn<kOutF32>, &fn<kOutF16>, &fn<kOutBF16>}
#define TBLOB_PLAIN3(scheme)                                              \
  {&scalar::plain_rows<static_cast<uint32_t>(scheme), kOutF32>,           \
   &scalar::plain_rows<static_cast<uint32_t>(scheme), kOutF16>,           \
   &scalar::plain_rows<static_cast<uint32_t>(scheme), kOutBF16>}

// Constant-initialised (no static constructor). Row order follows QuantScheme.
constexpr KernelTable kScalarTable = {
    kSetScalar,
    {
        {nullptr, nullptr, nullptr},  // kInvalid: never dispatched (validate_desc rejects it)
        TBLOB_ROW3(scalar::affine_rows),
        TBLOB_ROW3(scalar::mxfp4_rows),
        TBLOB_ROW3(scalar::mxfp8_rows),
        TBLOB_ROW3(scalar::nvfp4_rows),
        TBLOB_PLAIN3(QuantScheme::kF8E4M3),
        TBLOB_PLAIN3(QuantScheme::kF8E5M2),
        TBLOB_PLAIN3(QuantScheme::kF8E8M0),
        TBLOB_PLAIN3(QuantScheme::kF8E4M3Fnuz),
        TBLOB_PLAIN3(QuantScheme::kF8E5M2Fnuz),
        TBLOB_PLAIN3(QuantScheme::kF4E2M1),
        TBLOB_PLAIN3(QuantScheme::kF16),
        TBLOB_PLAIN3(QuantScheme::kBF16),
        TBLOB_PLAIN3(QuantScheme::kF32),
        TBLOB_ROW3(scalar::block_fp8_rows),  // kBlockFp8 (validated by validate_block_fp8)
        TBLOB_ROW3(scalar::slm1_q8_rows),    // kSlm1Q8
        TBLOB_ROW3(scalar::slm1_q4_rows),    // kSlm1Q4
    },
    {},  // no non-temporal kernels: large outputs go through the staging copy
};
static_assert(kQuantSchemeCount == 17, "kernel table rows must follow QuantScheme");

#undef TBLOB_ROW3
#undef TBLOB_PLAIN3

}  // namespace

const KernelTable &scalar_kernel_table() { return kScalarTable; }

}  // namespace tblob
