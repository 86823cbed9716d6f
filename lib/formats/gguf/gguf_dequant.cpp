// Dequantizing rows of a GGUF tensor: ggml's float and block types through the GGML kernel
// table (lib/dequant/ggml), the same decoders UQFF's GGML layers use.
#include "core/checked.h"
#include "dequant/ggml/ggml.h"
#include "formats/gguf/gguf.h"

namespace tblob {
namespace gguf {

namespace {

using ull = unsigned long long;

struct Req {
  const TensorDesc *t = nullptr;
  const ggml::TypeInfo *k = nullptr;
  uint32_t type = 0;
  uint64_t cols = 0, rows = 0;    // rows: every axis but the last folded; a 0-d tensor is 1 x 1
  uint64_t begin = 0, count = 0;  // rows asked for
  uint64_t row_bytes = 0;
};

Status check(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin, uint64_t row_end,
             Req *r, const Diag &diag) {
  const GgufExt *e = ext_of(m);
  if (!e || index < e->first_row || index - e->first_row >= e->rows || index >= m->tensors.size())
    return diag.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu is not a GGUF row", static_cast<ull>(index));
  const TensorDesc &t = m->tensors[static_cast<size_t>(index)];
  const int64_t ti = static_cast<int64_t>(index);
  const int nn = static_cast<int>(t.name_len > 120 ? 120 : t.name_len);
  r->t = &t;
  r->type = e->types[index - e->first_row];
  const TypeInfo *info = type_info(r->type);
  if (out_dtype != TBLOB_DTYPE_F32 && out_dtype != TBLOB_DTYPE_F16 && out_dtype != TBLOB_DTYPE_BF16)
    return diag.fail(TBLOB_E_DEQUANT_OUT_DTYPE, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\": output dtype %u is not F32, F16 or BF16",
                     nn, t.name, out_dtype);
  r->k = ggml::type_info(r->type);
  if (!r->k) {
    const bool plain = info && info->block_elems == 1;  // i8..i64, f64
    return diag.fail(plain ? TBLOB_E_NOT_DEQUANTIZABLE : TBLOB_E_UNSUPPORTED, t.file_offset, ti,
                     plain ? "tensor \"%.*s\" (%s): integers and f64 are not dequantized"
                           : "tensor \"%.*s\" (%s): this build has no decoder for the type (listing and data views work)",
                     nn, t.name, info ? info->name : "?");
  }
  r->cols = t.rank ? t.shape[t.rank - 1] : 1;
  r->rows = 1;
  for (uint32_t d = 0; d + 1 < t.rank; ++d)
    if (!checked_mul(r->rows, t.shape[d], &r->rows))
      return diag.fail(TBLOB_E_SHAPE_OVERFLOW, t.file_offset, ti, "tensor \"%.*s\": the row count overflows", nn, t.name);
  if (row_end == TBLOB_ALL_ROWS) row_end = r->rows;
  if (row_begin > row_end || row_end > r->rows)
    return diag.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\": rows %llu:%llu outside 0:%llu", nn, t.name,
                     static_cast<ull>(row_begin), static_cast<ull>(row_end), static_cast<ull>(r->rows));
  r->begin = row_begin;
  r->count = row_end - row_begin;
  // Bounded by the tensor's byte count, checked at open.
  r->row_bytes = r->cols / r->k->block_elems * r->k->block_bytes;
  return TBLOB_OK;
}

}  // namespace

Status dequant_bytes(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin,
                     uint64_t row_end, uint64_t *bytes, const Diag &diag) {
  Req r;
  const Status s = check(m, index, out_dtype, row_begin, row_end, &r, diag);
  if (s != TBLOB_OK) return s;
  uint64_t elems = 0;
  if (!checked_mul(r.count, r.cols, &elems) || !checked_mul(elems, out_dtype == TBLOB_DTYPE_F32 ? 4 : 2, bytes))
    return diag.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, static_cast<int64_t>(index), "the output size overflows");
  return TBLOB_OK;
}

Status dequantize(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin,
                  uint64_t row_end, void *dst, size_t dst_bytes, const Diag &diag) {
  Req r;
  const Status s0 = check(m, index, out_dtype, row_begin, row_end, &r, diag);
  if (s0 != TBLOB_OK) return s0;
  const TensorDesc &t = *r.t;
  const int64_t ti = static_cast<int64_t>(index);
  const int nn = static_cast<int>(t.name_len > 120 ? 120 : t.name_len);
  const tblob::Source &src = m->files[t.file_index].source;
  const uint64_t from = t.file_offset + r.begin * r.row_bytes;
  if (!range_inside(t.file_offset, t.end - t.begin, source_total(src)) ||
      (r.begin + r.count) * r.row_bytes > t.end - t.begin)
    return diag.fail(TBLOB_E_RANGE, t.file_offset, ti, "tensor \"%.*s\": data outside its file", nn, t.name);
  const uint64_t packed = r.count * r.row_bytes;
  const uint8_t *p = src.data ? src.data + from : nullptr;
  uint8_t *scratch = nullptr;
  size_t scratch_bytes = 0;
  if (src.kind == Source::kCallback && !range_inside(from, packed, src.len)) {
    // Not in memory: the asked rows' blocks only, into scratch no larger than the tensor.
    if (!to_size(packed, &scratch_bytes))
      return diag.fail(TBLOB_E_LIMIT_HEADER_BYTES, t.file_offset, ti, "tensor \"%.*s\": %llu bytes do not fit in memory",
                       nn, t.name, static_cast<unsigned long long>(packed));
    scratch = static_cast<uint8_t *>(m->alloc.alloc(scratch_bytes ? scratch_bytes : 1));
    if (!scratch) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    const Status rs = source_read(src, from, scratch, scratch_bytes, "tensor data", diag);
    if (rs != TBLOB_OK) {
      m->alloc.free(scratch, scratch_bytes ? scratch_bytes : 1);
      return rs;
    }
    p = scratch;
  }
  tblob_diag local = TBLOB_DIAG_INIT;
  Diag ld;
  ld.out = &local;
  const Status s = ggml::dequantize(ggml::active_kernels(), r.type, p, packed, r.count * r.cols, out_dtype, dst,
                                    dst_bytes, ld);
  if (scratch) m->alloc.free(scratch, scratch_bytes ? scratch_bytes : 1);
  if (s != TBLOB_OK)
    return diag.fail(s, s == TBLOB_E_BUFFER_TOO_SMALL ? TBLOB_NO_OFFSET : t.file_offset, ti, "tensor \"%.*s\" (%s): %s",
                     nn, t.name, r.k->name, local.message);
  return TBLOB_OK;
}


}  // namespace gguf
}  // namespace tblob
