// Dequantizing rows of a GGUF tensor: ggml's float and block types through the GGML kernel
// table (lib/dequant/ggml), the same decoders UQFF's GGML layers use.
#include "core/checked.h"
#include "dequant/ggml/ggml.h"
#include "formats/gguf/gguf.h"

namespace tblob {
namespace gguf {

Status dequantize(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin,
                  uint64_t row_end, void *dst, size_t dst_bytes, const Diag &diag) {
  using ull = unsigned long long;
  const GgufExt *e = ext_of(m);
  if (!e || index < e->first_row || index - e->first_row >= e->rows || index >= m->tensors.size())
    return diag.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu is not a GGUF row", static_cast<ull>(index));
  const TensorDesc &t = m->tensors[static_cast<size_t>(index)];
  const int64_t ti = static_cast<int64_t>(index);
  const int nn = static_cast<int>(t.name_len > 120 ? 120 : t.name_len);
  const uint32_t type = e->types[index - e->first_row];
  const TypeInfo *info = type_info(type);
  if (out_dtype != TBLOB_DTYPE_F32 && out_dtype != TBLOB_DTYPE_F16 && out_dtype != TBLOB_DTYPE_BF16)
    return diag.fail(TBLOB_E_DEQUANT_OUT_DTYPE, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\": output dtype %u is not F32, F16 or BF16",
                     nn, t.name, out_dtype);
  const ggml::TypeInfo *k = ggml::type_info(type);
  if (!k) {
    const bool plain = info && info->block_elems == 1;  // i8..i64, f64
    return diag.fail(plain ? TBLOB_E_NOT_DEQUANTIZABLE : TBLOB_E_UNSUPPORTED, t.file_offset, ti,
                     plain ? "tensor \"%.*s\" (%s): integers and f64 are not dequantized"
                           : "tensor \"%.*s\" (%s): this build has no decoder for the type (listing and data views work)",
                     nn, t.name, info ? info->name : "?");
  }
  // Rows: every axis but the last folded; a 0-d tensor is 1 x 1.
  const uint64_t cols = t.rank ? t.shape[t.rank - 1] : 1;
  uint64_t rows = 1;
  for (uint32_t d = 0; d + 1 < t.rank; ++d)
    if (!checked_mul(rows, t.shape[d], &rows))
      return diag.fail(TBLOB_E_SHAPE_OVERFLOW, t.file_offset, ti, "tensor \"%.*s\": the row count overflows", nn, t.name);
  if (row_end == TBLOB_ALL_ROWS) row_end = rows;
  if (row_begin > row_end || row_end > rows)
    return diag.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, ti, "tensor \"%.*s\": rows %llu:%llu outside 0:%llu", nn, t.name,
                     static_cast<ull>(row_begin), static_cast<ull>(row_end), static_cast<ull>(rows));
  // Bounded by the tensor's byte count, checked at open.
  const uint64_t row_bytes = cols / k->block_elems * k->block_bytes;
  const uint64_t n = row_end - row_begin;
  const tblob::Source &src = m->files[t.file_index].source;
  const uint64_t from = t.file_offset + row_begin * row_bytes;
  if (!range_inside(t.file_offset, t.end - t.begin, src.len) || n * row_bytes > t.end - t.begin)
    return diag.fail(TBLOB_E_RANGE, t.file_offset, ti, "tensor \"%.*s\": data outside its file", nn, t.name);
  tblob_diag local = TBLOB_DIAG_INIT;
  Diag ld;
  ld.out = &local;
  const Status s = ggml::dequantize(ggml::active_kernels(), type, src.data ? src.data + from : nullptr, n * row_bytes,
                                    n * cols, out_dtype, dst, dst_bytes, ld);
  if (s != TBLOB_OK)
    return diag.fail(s, s == TBLOB_E_BUFFER_TOO_SMALL ? TBLOB_NO_OFFSET : t.file_offset, ti, "tensor \"%.*s\" (%s): %s",
                     nn, t.name, k->name, local.message);
  return TBLOB_OK;
}

}  // namespace gguf
}  // namespace tblob
