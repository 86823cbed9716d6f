// SLM1 as one table of operations (table/format_ops.h): told by its magic, names found by
// their FNV-1a hashes (find_name), rows described in place (slm1_view + slm1_quant_desc) and
// decoded by the shared kernel table.
#include "formats/slm1/dequant.h"
#include "formats/slm1/format.h"
#include "formats/slm1/slm1.h"
#include "formats/slm1/state.h"
#include "io/source.h"
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

ProbeResult probe(const uint8_t *head, size_t len, uint64_t, bool) {
  return slm1_looks_like(head, len) ? kProbeYes : kProbeNo;
}

// A byte source: the checksum covers every byte (and an unknown size has no end to check
// regions against), so the file is read whole; without the checksum only
// [0, tensor_data_offset) is read: the header, checked first against the declared size, then
// the tokenizer section and the directory it places.
Status read_source(tblob_model *m, const Limits &limits, const Diag &diag) {
  Source &src = m->files[0].source;
  const uint64_t total = source_total(src);
  if (!(limits.flags & TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM) || total == TBLOB_SOURCE_SIZE_UNKNOWN)
    return source_read_whole(&src, UINT64_MAX - 1, TBLOB_E_LIMIT_HEADER_BYTES, m->alloc, "the SLM1 file", diag);
  Status s = source_grow_prefix(&src, kHeaderBytes, m->alloc, "the SLM1 header", diag);
  Header h;
  if (s == TBLOB_OK) s = read_header(src.data, total, limits, &h, diag);
  if (s == TBLOB_OK) s = source_grow_prefix(&src, h.data_offset, m->alloc, "the SLM1 directory", diag);
  return s;
}

Status open(const OpenRequest &r, tblob_model **out) {
  Status s = r.input == kInputSource ? read_source(r.m, r.limits, r.diag) : TBLOB_OK;
  if (s == TBLOB_OK) s = slm1_open_detected(r.m, r.limits, r.diag);
  if (s != TBLOB_OK) {
    model_free(r.m);
    return s;
  }
  *out = r.m;
  return TBLOB_OK;
}

constexpr FormatOps make() {
  FormatOps o;
  o.name = "slm1";
  o.format = TBLOB_FORMAT_SLM1;
  o.inputs = kInputPath | kInputSource;  // tblob_model_open_memory reads GGUF and safetensors
  o.probe = &probe;
  o.open = &open;
  o.find = &find_name;
  o.describe = &describe;
  o.scales_offset = &scales_at;
  return o;
}

}  // namespace

const FormatOps kFormat = make();

}  // namespace slm1
}  // namespace tblob
