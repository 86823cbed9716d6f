// Tensor resolution for dequantization (tensor_view.h).
#include "table/tensor_view.h"

#include "core/checked.h"
#include "io/source.h"

namespace tblob {
namespace {

// Bytes of tensor i, range-checked against its file. A byte source's tensor that is not in

// its in-memory prefix gets a null pointer: fetch_view reads it before decoding.

bool tensor_bytes(const tblob_model *m, uint64_t i, const uint8_t **p, uint64_t *n) {
  const TensorDesc &t = m->tensors[static_cast<size_t>(i)];
  const Source &src = m->files[t.file_index].source;
  if (!range_inside(t.file_offset, t.end - t.begin, source_total(src))) return false;
  const bool here = range_inside(t.file_offset, t.end - t.begin, src.len);
  *p = src.data && here ? src.data + t.file_offset : nullptr;
  *n = t.end - t.begin;
  return true;
}

// Plain view of a stored dtype (no companions).

QuantScheme plain_scheme(uint32_t dtype) {
  switch (dtype) {
    case TBLOB_DTYPE_F8_E4M3: return QuantScheme::kF8E4M3;
    case TBLOB_DTYPE_F8_E5M2: return QuantScheme::kF8E5M2;
    case TBLOB_DTYPE_F8_E8M0: return QuantScheme::kF8E8M0;
    case TBLOB_DTYPE_F8_E4M3FNUZ: return QuantScheme::kF8E4M3Fnuz;
    case TBLOB_DTYPE_F8_E5M2FNUZ: return QuantScheme::kF8E5M2Fnuz;
    case TBLOB_DTYPE_F4: return QuantScheme::kF4E2M1;
    case TBLOB_DTYPE_F16: return QuantScheme::kF16;
    case TBLOB_DTYPE_BF16: return QuantScheme::kBF16;
    case TBLOB_DTYPE_F32: return QuantScheme::kF32;
    default: return QuantScheme::kInvalid;
  }
}

void rows_cols(const uint64_t *shape, uint32_t rank, uint64_t *rows, uint64_t *cols, Status *st) {
  if (rank == 0) {
    *rows = *cols = 1;
    return;
  }
  uint64_t r = 1;
  for (uint32_t k = 0; k + 1 < rank; ++k)
    if (!checked_mul(r, shape[k], &r)) {
      *st = TBLOB_E_SHAPE_OVERFLOW;
      r = 0;
      break;
    }
  *rows = r;
  *cols = shape[rank - 1];
}

// A tensor the container quantizes by its own rules (SLM1 rows): the format describes it.

Status own_view_of(const tblob_model *m, uint64_t index, TensorView *v) {
  const uint64_t *shape = nullptr;
  uint32_t rank = 0;
  const Status s = m->ops->describe(m, index, &v->q, &shape, &rank);
  if (s != TBLOB_OK) {
    v->status = s;
    v->note = "the container's entry for this tensor is unavailable";
    return s;
  }
  v->own_scheme = v->q.scheme != QuantScheme::kF32;
  v->shape = shape ? shape : m->tensors[static_cast<size_t>(index)].shape;
  v->rank = rank;
  return TBLOB_OK;
}

}  // namespace

const QuantRecord *record_of(const tblob_model *m, size_t i) {
  if (!m->quant_of || i >= m->tensors.size()) return nullptr;
  const uint32_t id = m->quant_of[i];
  return id && id <= m->quant.size() ? &m->quant[id - 1] : nullptr;
}

QuantDesc sized(const QuantDesc &q) {
  static const uint8_t kStandIn[1] = {0};
  QuantDesc c = q;
  if (!c.data && c.data_bytes) c.data = kStandIn;
  if (!c.scales && c.scales_bytes) c.scales = kStandIn;
  if (!c.biases && c.biases_bytes) c.biases = kStandIn;
  if (!c.global_scale && c.global_scale_bytes) c.global_scale = kStandIn;
  return c;
}

bool is_source_model(const tblob_model *m) {
  for (size_t i = 0; i < m->files.size(); ++i)
    if (m->files[i].source.kind == Source::kCallback) return true;
  return false;
}

Status view_of(const tblob_model *m, uint64_t index, TensorView *v) {
  if (m->ops && m->ops->describe) return own_view_of(m, index, v);
  const size_t i = static_cast<size_t>(index);
  const TensorDesc &t = m->tensors[i];
  v->rec = record_of(m, i);
  v->logical = v->rec && v->rec->tensor == index;
  QuantDesc &q = v->q;
  if (v->logical) {
    const QuantRecord &r = *v->rec;
    q.scheme = static_cast<QuantScheme>(r.scheme);
    q.bits = r.bits;
    q.group_size = r.group_size;
    q.scale_dtype = r.scale_dtype;
    q.bias_dtype = r.bias_dtype;
    q.special = r.special;
    q.global_scale_mode = static_cast<GlobalScaleMode>(r.global_scale_mode);
    q.rows = r.rows;
    q.cols = r.cols;
    v->shape = r.shape;
    v->rank = r.rank;
    bool ok = tensor_bytes(m, index, &q.data, &q.data_bytes);
    if (r.scale != kNoTensor) ok = ok && tensor_bytes(m, r.scale, &q.scales, &q.scales_bytes);
    if (r.bias != kNoTensor) ok = ok && tensor_bytes(m, r.bias, &q.biases, &q.biases_bytes);
    if (r.global_scale != kNoTensor)
      ok = ok && tensor_bytes(m, r.global_scale, &q.global_scale, &q.global_scale_bytes);
    if (!ok) {
      v->status = TBLOB_E_RANGE;
      v->note = "tensor data outside its file";
    } else if (r.status != TBLOB_OK) {
      v->status = r.status;
      v->note = r.note;
    }
    return v->status;
  }
  v->shape = t.shape;
  v->rank = t.rank;
  QuantScheme s = plain_scheme(t.dtype);
  q.special = kSpecialOcp;
  if (v->rec) {
    // A companion: U8 scales hold the encoding its owner's scheme names.
    if (t.dtype == TBLOB_DTYPE_U8 && v->rec->scale == index) {
      if (v->rec->scale_dtype == TBLOB_DTYPE_F8_E8M0) s = QuantScheme::kF8E8M0;
      if (v->rec->scale_dtype == TBLOB_DTYPE_F8_E4M3) s = QuantScheme::kF8E4M3;
    }
    q.special = v->rec->special;
  }
  q.scheme = s;
  rows_cols(t.shape, t.rank, &q.rows, &q.cols, &v->status);
  if (!tensor_bytes(m, index, &q.data, &q.data_bytes)) {
    v->status = TBLOB_E_RANGE;
    v->note = "tensor data outside its file";
  }
  if (s == QuantScheme::kInvalid && v->status == TBLOB_OK) {
    if (t.dtype == TBLOB_DTYPE_F6_E2M3 || t.dtype == TBLOB_DTYPE_F6_E3M2) {
      v->status = TBLOB_E_UNSUPPORTED;
      v->note = "F6 tensors: how four codes share three bytes is not pinned by any source";
    } else {
      v->status = TBLOB_E_NOT_DEQUANTIZABLE;
      v->note = "its dtype is not quantized and not a floating-point type";
    }
  }
  return v->status;
}

void tensor_logical(const tblob_model *m, size_t index, TensorLogical *out) {
  const TensorDesc &t = m->tensors[index];
  const QuantRecord *r = record_of(m, index);
  const bool logical = r && r->tensor == index;
  const uint64_t *shape = logical ? r->shape : t.shape;
  uint32_t rank = logical ? r->rank : t.rank;
  uint32_t scheme = logical ? r->scheme : 0u;
  bool quantized = logical;
  // Quantized by the container (SLM1 q8_0 / q4_0: q4_0's table row is its bytes, U8 with the
  // last dim halved; its logical shape the stored dims).
  TensorView sv;
  if (m->ops && m->ops->describe && own_view_of(m, index, &sv) == TBLOB_OK &&
      sv.own_scheme) {
    quantized = true;
    scheme = static_cast<uint32_t>(sv.q.scheme);
    shape = sv.shape;
    rank = sv.rank;
  }
  uint64_t elems = t.elements;
  if (quantized) {
    elems = 1;
    for (uint32_t k = 0; k < rank; ++k)
      if (!checked_mul(elems, shape[k], &elems)) elems = UINT64_MAX;
  }
  out->shape = shape;
  out->rank = rank;
  out->scheme = scheme;
  out->elements = elems;
  out->quantized = quantized;
  out->companion = !quantized && r;
}

}  // namespace tblob
