// SLM1 as one table of operations (table/format_ops.h): names found by their FNV-1a hashes
// (find_name), rows described in place (slm1_view + slm1_quant_desc) and decoded by the shared
// kernel table.
#include "formats/slm1/dequant.h"
#include "formats/slm1/state.h"
#include "table/format_ops.h"

namespace tblob {
namespace slm1 {
namespace {

Status describe(const tblob_model *m, uint64_t index, QuantDesc *q, const uint64_t **shape, uint32_t *rank) {
  Slm1View v;
  Status s = slm1_view(m, index, &v);
  if (s == TBLOB_OK) s = slm1_quant_desc(v, q);
  if (s != TBLOB_OK) return s;
  *shape = v.shape;
  *rank = v.rank;
  return TBLOB_OK;
}

uint64_t scales_at(const tblob_model *m, uint64_t index) {
  Slm1View v;
  return slm1_view(m, index, &v) == TBLOB_OK ? v.scale_offset : 0;
}

constexpr FormatOps make() {
  FormatOps o;
  o.name = "slm1";
  o.format = TBLOB_FORMAT_SLM1;
  o.find = &find_name;
  o.describe = &describe;
  o.scales_offset = &scales_at;
  return o;
}

}  // namespace

const FormatOps kFormat = make();

}  // namespace slm1
}  // namespace tblob
