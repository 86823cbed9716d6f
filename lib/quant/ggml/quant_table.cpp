// The one table of GGML row quantizers, by ggml type id. A new type is an X(id, function)
// entry in a list below (the K-quants' list is kquant_types.h) plus its own file.
#include "dequant/ggml/ggml.h"
#include "quant/ggml/kquant_types.h"
#include "quant/ggml/quant_ggml.h"
#include "quant/ggml/quant_rows.h"

namespace tblob {
namespace ggml {

#define TBLOB_GGML_QUANT_LEGACY_TYPES(X)                                                          \
  X(kTypeQ4_0, quantize_row_q4_0) X(kTypeQ4_1, quantize_row_q4_1) X(kTypeQ5_0, quantize_row_q5_0) \
  X(kTypeQ5_1, quantize_row_q5_1) X(kTypeQ8_0, quantize_row_q8_0)                                 \
  X(kTypeIQ4_NL, quantize_row_iq4_nl) X(kTypeTQ1_0, quantize_row_tq1_0)                           \
  X(kTypeTQ2_0, quantize_row_tq2_0) X(kTypeMXFP4, quantize_row_mxfp4)

namespace {
#define TBLOB_GGML_QUANT_ENTRY(id, fn) {id, fn},
constexpr RowQuantizer kTable[] = {
    TBLOB_GGML_QUANT_LEGACY_TYPES(TBLOB_GGML_QUANT_ENTRY)
    TBLOB_GGML_QUANT_KQUANT_TYPES(TBLOB_GGML_QUANT_ENTRY)
};
#undef TBLOB_GGML_QUANT_ENTRY
}  // namespace

const RowQuantizer *row_quantizer(uint32_t ggml_type) {
  for (const RowQuantizer &q : kTable)
    if (q.ggml_type == ggml_type) return &q;
  return nullptr;
}

}  // namespace ggml
}  // namespace tblob
