// UQFF as one table of operations (table/format_ops.h): a directory of shards claimed by
// path, a shard claimed from its safetensors table (its siblings found from its name; a byte
// source opens as a one-shard set), every row decoded by the layer decoder
// (uqff_dequant.cpp) over the folded view of stacked layers ([E * out, in]).
#include "formats/uqff/uqff.h"
#include "io/source.h"
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

Status finish(tblob_model *m, Status s, tblob_model **out) {
  if (s != TBLOB_OK) {
    model_free(m);
    return s;
  }
  *out = m;
  return TBLOB_OK;
}

// A directory holding *.uqff shards or uqff_report.json.
bool claims_path(const char *path, const Limits &limits, tblob_model **out, Status *st, const Diag &diag) {
  if (!path_is_directory(path) || !looks_like_dir(path)) return false;
  tblob_model *m = model_new(limits.allocator);
  if (!m) {
    *st = diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    return true;
  }
  const char *paths[1] = {path};
  *st = finish(m, open_set(m, paths, 1, limits, diag), out);
  return true;
}

// Only a scanned table is claimed (claims_table), keeping the scan already made of it.
Status open(const OpenRequest &r, tblob_model **out) {
  if (r.input == kInputSource) return finish(r.m, open_source_shard(r.m, r.limits, r.diag), out);
  return finish(r.m, open_scanned(r.m, r.path, r.limits, r.diag), out);
}

constexpr FormatOps make() {
  FormatOps o;
  o.name = "uqff";
  o.format = TBLOB_FORMAT_UQFF;
  o.inputs = kInputPath | kInputSource;  // shard sets are siblings; memory opens plain safetensors
  o.claims_path = &claims_path;
  o.claims_table = &table_says_shard;
  o.open = &open;
  o.output_bytes = &folded_bytes;
  o.decode = &folded_decode;
  return o;
}

}  // namespace

const FormatOps kFormat = make();

}  // namespace uqff
}  // namespace tblob
