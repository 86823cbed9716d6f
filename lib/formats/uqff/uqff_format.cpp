// UQFF as one table of operations (table/format_ops.h): every row decoded by the layer
// decoder (uqff_dequant.cpp) over the folded view of stacked layers ([E * out, in]).
#include "formats/uqff/uqff.h"
#include "table/format_ops.h"

namespace tblob {
namespace uqff {
namespace {

Status folded_bytes(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin, uint64_t row_end,
                    uint64_t *bytes, const Diag &diag) {
  return dequant_bytes(m, index, out_dtype, kAllExperts, row_begin, row_end, bytes, diag);
}

Status folded_decode(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin, uint64_t row_end,
                     void *dst, size_t dst_bytes, const Diag &diag) {
  return dequantize(m, index, out_dtype, kAllExperts, row_begin, row_end, dst, dst_bytes, diag);
}

constexpr FormatOps make() {
  FormatOps o;
  o.name = "uqff";
  o.format = TBLOB_FORMAT_UQFF;
  o.output_bytes = &folded_bytes;
  o.decode = &folded_decode;
  return o;
}

}  // namespace

const FormatOps kFormat = make();

}  // namespace uqff
}  // namespace tblob
