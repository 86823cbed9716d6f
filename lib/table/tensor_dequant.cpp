// Dequantizing a model tensor (tensor_dequant.h): the tensor's view, its bytes read from a
// byte source when they are not in memory, decoding, and the diagnostic that names the tensor,
// the companion and the field.
#include "table/tensor_dequant.h"

#include <cstdio>

#include "core/checked.h"
#include "dequant/dequant.h"
#include "dequant/quant_explain.h"
#include "io/source.h"

namespace tblob {
namespace {

// Scratch for the bytes of a dequantization from a byte source: at most the packed weight and
// its three companions, each no larger than its header declares.
struct Fetched {
  explicit Fetched(const Allocator &a) : a_(a) {}
  ~Fetched() {
    for (int i = 0; i < n_; ++i) a_.free(p_[i], sz_[i]);
  }
  Fetched(const Fetched &) = delete;
  Fetched &operator=(const Fetched &) = delete;
  // Reads [offset, offset + len) of tensor i's stored bytes into new scratch.
  Status read(const tblob_model *m, uint64_t i, uint64_t offset, uint64_t len, const uint8_t **out, const Diag &d) {
    const TensorDesc &t = m->tensors[static_cast<size_t>(i)];
    size_t n;
    if (!to_size(len, &n))
      return d.fail(TBLOB_E_LIMIT_HEADER_BYTES, t.file_offset, static_cast<int64_t>(i),
                    "tensor %llu: %llu bytes do not fit in this platform's memory", static_cast<unsigned long long>(i),
                    static_cast<unsigned long long>(len));
    const size_t k = n ? n : 1;
    uint8_t *b = static_cast<uint8_t *>(a_.alloc(k));
    if (!b) return d.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    p_[n_] = b;
    sz_[n_++] = k;
    *out = b;
    return source_read(m->files[t.file_index].source, t.file_offset + offset, b, n, "tensor data", d);
  }
  // The same for bytes [at, at + len) of file 0 (an SLM1 tensor's scale array).
  Status read_file0(const tblob_model *m, uint64_t at, uint64_t len, const uint8_t **out, const Diag &d) {
    size_t n;
    if (!to_size(len, &n)) return d.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    uint8_t *b = static_cast<uint8_t *>(a_.alloc(n ? n : 1));
    if (!b) return d.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    p_[n_] = b;
    sz_[n_++] = n ? n : 1;
    *out = b;
    return source_read(m->files[0].source, at, b, n, "scales", d);
  }
  Allocator a_;
  uint8_t *p_[4] = {nullptr, nullptr, nullptr, nullptr};
  size_t sz_[4] = {0, 0, 0, 0};
  int n_ = 0;
};

const char *name_of(const tblob_model *m, uint64_t i, int *shown, const char **ell) {
  const TensorDesc &t = m->tensors[static_cast<size_t>(i)];
  *shown = clip_name(t.name_len, ell);
  if (*shown > 120) *shown = 120;
  return t.name;
}

}  // namespace

// Reports a status for model tensor `index` with names and offsets.
Status tensor_fail(const Diag &d, const tblob_model *m, uint64_t index, const TensorView &v,
                   Status s, uint32_t out_dtype, uint64_t rb, uint64_t re, size_t dst_bytes) {
  int shown;
  const char *ell;
  const char *name = name_of(m, index, &shown, &ell);
  char detail[200];
  QuantField f = QuantField::kNone;
  if (v.note && s == v.status)
    std::snprintf(detail, sizeof(detail), "%s", v.note);
  else
    f = quant_explain(s, v.q, out_dtype, rb, re, dst_bytes, detail, sizeof(detail));
  uint64_t comp = kNoTensor;
  const char *what = "";
  if (v.logical) {
    if (f == QuantField::kScale) comp = v.rec->scale, what = "scale";
    if (f == QuantField::kBias) comp = v.rec->bias, what = "bias";
    if (f == QuantField::kGlobal) comp = v.rec->global_scale, what = "global scale";
    if (f == QuantField::kNone && v.note && s == v.status) {  // a resolution-time status
      if (s == TBLOB_E_QUANT_BIAS_SIZE || s == TBLOB_E_QUANT_BIAS_DTYPE)
        comp = v.rec->bias, what = "bias";
      else if (s == TBLOB_E_QUANT_GLOBAL_SCALE)
        comp = v.rec->global_scale, what = "global scale";
      else if (s != TBLOB_E_QUANT_PACKING && s != TBLOB_E_SHAPE_OVERFLOW && s != TBLOB_E_RANGE)
        comp = v.rec->scale, what = "scale";
    }
  }
  const TensorDesc &t = m->tensors[static_cast<size_t>(index)];
  if (comp != kNoTensor) {
    int cs;
    const char *cell;
    const char *cname = name_of(m, comp, &cs, &cell);
    const TensorDesc &c = m->tensors[static_cast<size_t>(comp)];
    return d.fail(s, c.file_offset, static_cast<int64_t>(index),
                  "tensor \"%.*s%s\" (%s): %s tensor \"%.*s%s\" (file byte %llu): %s", shown, name,
                  ell, quant_scheme_text(static_cast<uint32_t>(v.q.scheme)), what, cs, cname, cell,
                  static_cast<unsigned long long>(c.file_offset), detail);
  }
  if (!v.logical && !v.own_scheme)  // a plain tensor: its dtype says it all
    return d.fail(s, t.file_offset, static_cast<int64_t>(index), "tensor \"%.*s%s\" (%s, file byte %llu): %s",
                  shown, name, ell, dtype_label(t.dtype), static_cast<unsigned long long>(t.file_offset), detail);
  return d.fail(s, t.file_offset, static_cast<int64_t>(index),
                "tensor \"%.*s%s\" (%s, stored %s, file byte %llu): %s", shown, name, ell,
                quant_scheme_text(static_cast<uint32_t>(v.q.scheme)), dtype_label(t.dtype),
                static_cast<unsigned long long>(t.file_offset), detail);
}

Status tensor_dequantize(const tblob_model *model, uint64_t index, uint32_t out_dtype,
                         uint64_t row_begin, uint64_t row_end, void *dst, size_t dst_bytes,
                         const Diag &d) {
  if (!model)
    return d.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: model is required");
  if (index >= model->tensors.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%zu tensors)",
                  static_cast<unsigned long long>(index), model->tensors.size());
  if (model->ops && model->ops->decode)  // the format decodes its own
    return model->ops->decode(model, index, out_dtype, row_begin, row_end, dst, dst_bytes, d);
  TensorView v;
  Status s = view_of(model, index, &v);
  if (row_end == TBLOB_ALL_ROWS) row_end = v.q.rows;
  if (s == TBLOB_OK && is_source_model(model)) {
    // Sizes, rows and the output buffer are checked before a byte is read.
    uint64_t need = 0;
    s = dequant_output_bytes(sized(v.q), out_dtype, row_begin, row_end, &need);
    if (s == TBLOB_OK && need > dst_bytes) s = TBLOB_E_BUFFER_TOO_SMALL;
    if (s != TBLOB_OK) return tensor_fail(d, model, index, v, s, out_dtype, row_begin, row_end, dst_bytes);
    Fetched f(model->alloc);
    QuantDesc q = v.q;
    uint64_t rb = row_begin, re = row_end;
    const QuantRecord *r = v.logical ? v.rec : nullptr;
    // Only the asked rows where every row has bytes of its own: plain tensors, and schemes whose
    // groups run along a row (affine, mx*, nvfp4: each row's codes, scales and biases are one
    // equal slice; the global scale is one value). Block FP8 shares scales between rows.
    const bool row_groups = r && (q.scheme == QuantScheme::kMlxAffine || q.scheme == QuantScheme::kMxfp4 ||
                                  q.scheme == QuantScheme::kMxfp8 || q.scheme == QuantScheme::kNvfp4);
    const bool sliced = q.rows > 0 && ((!v.rec && !v.own_scheme) || row_groups) && q.data_bytes % q.rows == 0 &&
                        q.scales_bytes % q.rows == 0 && q.biases_bytes % q.rows == 0;
    const uint64_t keep = sliced ? re - rb : q.rows;
    const uint64_t from = sliced ? rb : 0;
    // One part (codes, scales or biases) of tensor t: its rows [from, from + keep) or all of it.
    auto part = [&](uint64_t t, const uint8_t **p, uint64_t *bytes) -> Status {
      if (t == kNoTensor || *bytes == 0) return TBLOB_OK;
      const uint64_t row = sliced ? *bytes / q.rows : *bytes;
      const uint64_t at = sliced ? from * row : 0;
      const uint64_t n = sliced ? keep * row : *bytes;
      *bytes = n;
      if (*p) {
        *p += at;
        return TBLOB_OK;
      }
      return f.read(model, t, at, n, p, d);
    };
    s = part(index, &q.data, &q.data_bytes);
    if (s == TBLOB_OK && r) s = part(r->scale, &q.scales, &q.scales_bytes);
    if (s == TBLOB_OK && r) s = part(r->bias, &q.biases, &q.biases_bytes);
    if (s == TBLOB_OK && v.own_scheme && !q.scales && q.scales_bytes && model->ops->scales_offset)
      s = f.read_file0(model, model->ops->scales_offset(model, index), q.scales_bytes, &q.scales, d);
    if (s == TBLOB_OK && r && r->global_scale != kNoTensor && !q.global_scale)
      s = f.read(model, r->global_scale, 0, q.global_scale_bytes, &q.global_scale, d);
    if (sliced) {
      q.rows = keep;
      re -= rb;
      rb = 0;
    }
    if (s != TBLOB_OK) return s;  // a read status, with its message
    s = dequantize_rows(q, out_dtype, rb, re, dst, dst_bytes);
    if (s == TBLOB_OK) return TBLOB_OK;
    return tensor_fail(d, model, index, v, s, out_dtype, row_begin, row_end, dst_bytes);
  }
  if (s == TBLOB_OK) s = dequantize_rows(v.q, out_dtype, row_begin, row_end, dst, dst_bytes);
  if (s == TBLOB_OK) return TBLOB_OK;
  return tensor_fail(d, model, index, v, s, out_dtype, row_begin, row_end, dst_bytes);
}

Status tensor_dequant_size(const tblob_model *model, uint64_t index, uint32_t out_dtype,
                           uint64_t row_begin, uint64_t row_end, uint64_t *bytes, const Diag &d) {
  if (!model || !bytes)
    return d.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: model and bytes are required");
  if (index >= model->tensors.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%zu tensors)",
                  static_cast<unsigned long long>(index), model->tensors.size());
  if (model->ops && model->ops->output_bytes)
    return model->ops->output_bytes(model, index, out_dtype, row_begin, row_end, bytes, d);
  TensorView v;
  Status s = view_of(model, index, &v);
  if (row_end == TBLOB_ALL_ROWS) row_end = v.q.rows;
  if (s == TBLOB_OK) s = dequant_output_bytes(sized(v.q), out_dtype, row_begin, row_end, bytes);
  if (s == TBLOB_OK) return TBLOB_OK;
  return tensor_fail(d, model, index, v, s, out_dtype, row_begin, row_end, SIZE_MAX);
}

}  // namespace tblob
