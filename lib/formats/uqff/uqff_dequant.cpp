// Dequantizing rows of a UQFF model: layers of every family and plain tensors (bias,
// residual), to f32/f16/bf16. Values follow mistral.rs's decoders (docs/uqff.md): OCP E4M3 (0x7F/0xFF NaN), MXFP4 scale byte 0 = 0.0 and 255 = +inf; NaN results
// are the canonical quiet NaN; f16/bf16 outputs round the f32 value once (nearest even).
#include <cstring>

#include "core/checked.h"
#include "core/dtype.h"
#include "core/format_name.h"
#include "core/endian.h"
#include "dequant/convert.h"
#include "dequant/dequant.h"
#include "dequant/ggml/ggml.h"
#include "dequant/minifloat.h"
#include "formats/uqff/uqff_row.h"
#include "io/source.h"

namespace tblob {
namespace uqff {

namespace {

using dq::f32_bits;
using dq::f32_from_bits;

inline float canon(float v) {
  return (f32_bits(v) & 0x7FFFFFFFu) > 0x7F800000u ? f32_from_bits(0x7FC00000u) : v;
}

// Element i of a float array of dtype dt, exactly widened to f32.
inline float load_f(const uint8_t *base, uint64_t i, uint32_t dt) {
  switch (dt) {
    case TBLOB_DTYPE_F32: return f32_from_bits(load_le32(base + 4 * i));
    case TBLOB_DTYPE_F16: return f32_from_bits(dq::f16_to_f32(load_le16(base + 2 * i)));
    default: return f32_from_bits(dq::bf16_to_f32(load_le16(base + 2 * i)));
  }
}
inline float round_dt(float v, uint32_t dt) {
  if (dt == TBLOB_DTYPE_F16) return dq::round_to_f16(v);
  if (dt == TBLOB_DTYPE_BF16) return dq::round_to_bf16(v);
  return v;
}

struct Req {
  const LayerInfo *li = nullptr;
  bool is_layer = false;
  uint32_t out_dtype = 0;
  uint64_t e0 = 0;     // first logical element (flattened over experts)
  uint64_t count = 0;  // elements to write
  uint64_t r0 = 0, r1 = 0;  // global rows
};

Status check(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t expert, uint64_t rb,
             uint64_t re, Req *r, const Diag &diag) {
  if (!m) return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "model is NULL");
  if (m->format != TBLOB_FORMAT_UQFF)
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "the model is not a UQFF export (format %s)",
                     format_name(m->format) ? format_name(m->format) : "?");
  if (index >= m->tensors.size())
    return diag.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%zu tensors)",
                     static_cast<unsigned long long>(index), m->tensors.size());
  const TensorDesc &t = m->tensors[static_cast<size_t>(index)];
  const RowExt *e = row_ext(m, index);
  if (!e) return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, static_cast<int64_t>(index), "row has no UQFF descriptor");
  if (out_dtype != TBLOB_DTYPE_F32 && out_dtype != TBLOB_DTYPE_F16 && out_dtype != TBLOB_DTYPE_BF16)
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, static_cast<int64_t>(index),
                     "output dtype %u is not F32, F16 or BF16", out_dtype);
  const LayerInfo &li = e->info;
  const int n = static_cast<int>(t.name_len > 120 ? 120 : t.name_len);
  const uint64_t experts = li.experts;
  const bool flat = expert == kAllExperts;  // stacked rows folded: E * out rows
  const uint64_t total = flat && experts ? experts * li.rows : li.rows;  // fits: elements do
  if (re == UINT64_MAX) re = total;  // TBLOB_ALL_ROWS
  if (!flat && (experts ? expert >= experts : expert != 0))
    return diag.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, static_cast<int64_t>(index),
                     "%.*s: expert %llu out of range (%llu experts)", n, t.name,
                     static_cast<unsigned long long>(expert), static_cast<unsigned long long>(experts));
  if (rb > re || re > total)
    return diag.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, static_cast<int64_t>(index),
                     "%.*s: rows %llu:%llu outside 0:%llu", n, t.name, static_cast<unsigned long long>(rb),
                     static_cast<unsigned long long>(re), static_cast<unsigned long long>(total));
  r->li = &li;
  r->is_layer = e->is_layer != 0;
  r->out_dtype = out_dtype;
  const uint64_t base = flat ? 0 : expert * li.rows;  // expert < experts: no overflow
  r->r0 = base + rb;
  r->r1 = base + re;
  r->e0 = r->r0 * li.cols;
  r->count = (re - rb) * li.cols;
  if (!r->is_layer) {
    const uint32_t dt = li.weight.dtype;
    if (dt != TBLOB_DTYPE_F32 && dt != TBLOB_DTYPE_F16 && dt != TBLOB_DTYPE_BF16 && dt != TBLOB_DTYPE_F8_E4M3 &&
        dt != TBLOB_DTYPE_F8_E5M2 && dt != TBLOB_DTYPE_F64)
      return diag.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, static_cast<int64_t>(index),
                       "%.*s: %s tensors are not dequantized (F32, F16, BF16, F64, F8_E4M3, F8_E5M2 are)", n, t.name,
                       dtype_name(dt));
  } else if (li.family == Family::kUnquant) {
    const uint32_t dt = li.weight.dtype;
    if (dt != TBLOB_DTYPE_F32 && dt != TBLOB_DTYPE_F16 && dt != TBLOB_DTYPE_BF16 && dt != TBLOB_DTYPE_F8_E4M3 &&
        dt != TBLOB_DTYPE_F64)
      return diag.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, static_cast<int64_t>(index),
                       "%.*s: an Unquant layer of %s is not dequantized", n, t.name, dtype_name(dt));
  } else if (li.family == Family::kHqq && li.hqq_axis != 0) {
    return diag.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, static_cast<int64_t>(index),
                     "%.*s: HQQ with axis 1 is not dequantized (mistral.rs's CPU path needs axis 0)", n, t.name);
  }
  return TBLOB_OK;
}

// Plain arrays (residual, bias, Unquant weights).
void plain_f32(const LayerInfo &li, uint64_t e, size_t n, float *y) {
  const uint8_t *d = li.weight.data;
  switch (li.weight.dtype) {
    case TBLOB_DTYPE_F32: std::memcpy(y, d + 4 * e, 4 * n); break;
    case TBLOB_DTYPE_F16:
    case TBLOB_DTYPE_BF16:
      for (size_t i = 0; i < n; ++i) y[i] = load_f(d, e + i, li.weight.dtype);
      break;
    case TBLOB_DTYPE_F64:
      for (size_t i = 0; i < n; ++i) {
        double v;
        std::memcpy(&v, d + 8 * (e + i), 8);
        y[i] = static_cast<float>(v);
      }
      break;
    case TBLOB_DTYPE_F8_E4M3:
      for (size_t i = 0; i < n; ++i) y[i] = f32_from_bits(dq::e4m3_to_f32(d[e + i], false));
      break;
    default:  // F8_E5M2
      for (size_t i = 0; i < n; ++i) y[i] = f32_from_bits(dq::e5m2_to_f32(d[e + i]));
      break;
  }
}

// HQQ (axis 0): flattened element e sits at column c = e % W, group row r = e / W of the
// [G, W] view; 4-bit rows r < G/2 use the high nibble of packed[r][c], the others the low
// nibble of packed[r - G/2][c]. w = (q - z[c]) * s[c], each step rounded to the scale dtype.
void hqq_f32(const LayerInfo &li, uint64_t e, size_t n, float *y) {
  const uint64_t G = li.group_size, W = li.elements / G;
  const uint32_t sdt = li.scale_dtype;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = e + i, r = x / W, c = x % W;
    uint32_t q;
    if (li.bits == 8) {
      q = li.weight.data[r * W + c];
    } else {
      const uint64_t half = G / 2;
      q = r < half ? (li.weight.data[r * W + c] >> 4) : (li.weight.data[(r - half) * W + c] & 0xFu);
    }
    const float s = load_f(li.scales.data, c, sdt), z = load_f(li.aux.data, c, sdt);
    const float t = round_dt(static_cast<float>(q) - z, sdt);
    y[i] = canon(round_dt(t * s, sdt));
  }
}

void fp8_f32(const LayerInfo &li, uint64_t e, size_t n, float *y) {
  const float s = li.fp8_scale;
  for (size_t i = 0; i < n; ++i)
    y[i] = canon(f32_from_bits(dq::e4m3_to_f32(li.weight.data[e + i], false)) * s);
}

// F8Q8: 33-byte blocks over the flattened tensor: x = qs * (E4M3(d) / 448).
void f8q8_f32(const LayerInfo &li, uint64_t e, size_t n, float *y) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = e + i;
    const uint8_t *b = li.weight.data + (x / 32) * 33;
    const float d = f32_from_bits(dq::e4m3_to_f32(b[0], false)) / 448.0f;
    y[i] = canon(static_cast<float>(static_cast<int8_t>(b[1 + x % 32])) * d);
  }
}

// MXFP4 (UQFF order): byte i of a row holds element 2i (low nibble) and 2i+1 (high nibble);
// factor = f32 with bits scale << 23 (0 -> 0.0, 255 -> +inf).
void mxfp4_f32(const LayerInfo &li, uint64_t e, size_t n, float *y) {
  const uint64_t cols = li.cols;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = e + i, r = x / cols, c = x % cols;
    const uint8_t byte = li.weight.data[r * (cols / 2) + c / 2];
    const uint8_t code = (c & 1) ? (byte >> 4) : (byte & 0xF);
    const float f = f32_from_bits(static_cast<uint32_t>(li.scales.data[r * (cols / 32) + c / 32]) << 23);
    y[i] = canon(f32_from_bits(dq::e2m1_to_f32(code)) * f);
  }
}

using ElemFn = void (*)(const LayerInfo &, uint64_t, size_t, float *);

// Decodes in chunks and writes f32 (copied) or f16/bf16 (narrowed by the active kernels).
void run_elems(const Req &r, ElemFn fn, void *dst) {
  constexpr size_t kChunk = 2048;
  alignas(64) float buf[kChunk];
  uint8_t *out = static_cast<uint8_t *>(dst);
  const ggml::Kernels &k = ggml::active_kernels();
  const uint32_t es = r.out_dtype == TBLOB_DTYPE_F32 ? 4 : 2;
  for (uint64_t done = 0; done < r.count;) {
    const size_t n = r.count - done < kChunk ? static_cast<size_t>(r.count - done) : kChunk;
    fn(*r.li, r.e0 + done, n, buf);
    uint8_t *o = out + done * es;
    if (r.out_dtype == TBLOB_DTYPE_F32)
      std::memcpy(o, buf, n * 4);
    else if (r.out_dtype == TBLOB_DTYPE_F16)
      k.to_f16(buf, n, reinterpret_cast<uint16_t *>(o));
    else
      k.to_bf16(buf, n, reinterpret_cast<uint16_t *>(o));
    done += n;
  }
}

}  // namespace

Status layer_view(const tblob_model *m, uint64_t index, LayerView *out, const Diag &diag) {
  Req r;
  const Status s = check(m, index, TBLOB_DTYPE_F32, 0, 0, 0, &r, diag);
  if (s != TBLOB_OK && s != TBLOB_E_UNSUPPORTED) return s;
  if (s == TBLOB_E_UNSUPPORTED) diag.reset();
  const RowExt *e = row_ext(m, index);
  const LayerInfo &li = e->info;
  out->is_layer = e->is_layer != 0;
  out->family = li.family;
  out->label = li.label;
  out->ggml_type = li.ggml_type;
  out->bits = li.bits;
  out->group_size = li.group_size;
  out->weight_dtype = li.weight.dtype;
  out->scale_dtype = li.scale_dtype;
  out->shard = li.shard;
  out->shard_span = li.shard_span;
  out->experts = li.experts;
  out->rows = li.rows;
  out->cols = li.cols;
  out->stored_bytes = li.stored_bytes;
  out->has_bias = li.has_bias;
  return TBLOB_OK;
}

Status dequant_bytes(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t expert,
                     uint64_t row_begin, uint64_t row_end, uint64_t *bytes, const Diag &diag) {
  Req r;
  const Status s = check(m, index, out_dtype, expert, row_begin, row_end, &r, diag);
  if (s != TBLOB_OK) return s;
  if (!checked_mul(r.count, out_dtype == TBLOB_DTYPE_F32 ? 4 : 2, bytes))
    return diag.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, static_cast<int64_t>(index), "output size overflows");
  return TBLOB_OK;
}

namespace {

// The parts of a source-backed layer not held in memory, read into scratch for one call.
class Fetched {
 public:
  explicit Fetched(const tblob_model *m) : a_(m->alloc) {}
  ~Fetched() {
    for (int i = 0; i < n_; ++i) a_.free(p_[i], sz_[i]);
  }
  Fetched(const Fetched &) = delete;
  Fetched &operator=(const Fetched &) = delete;
  Status get(const tblob_model *m, Part *part, int64_t index, const Diag &d) {
    if (part->data || part->bytes == 0) return TBLOB_OK;
    size_t n;
    if (!to_size(part->bytes, &n) || n_ == 3)
      return d.fail(TBLOB_E_OUT_OF_MEMORY, part->offset, index, "a %llu-byte layer part does not fit in memory",
                    static_cast<unsigned long long>(part->bytes));
    uint8_t *b = static_cast<uint8_t *>(a_.alloc(n));
    if (!b) return d.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    p_[n_] = b;
    sz_[n_++] = n;
    part->data = b;
    return source_read(m->files[part->file].source, part->offset, b, n, "UQFF layer data", d);
  }

 private:
  Allocator a_;
  uint8_t *p_[3] = {nullptr, nullptr, nullptr};
  size_t sz_[3] = {0, 0, 0};
  int n_ = 0;
};

}  // namespace


Status dequantize(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t expert,
                  uint64_t row_begin, uint64_t row_end, void *dst, size_t dst_bytes, const Diag &diag) {
  uint64_t need;
  Status s = dequant_bytes(m, index, out_dtype, expert, row_begin, row_end, &need, diag);
  if (s != TBLOB_OK) return s;
  const TensorDesc &t = m->tensors[static_cast<size_t>(index)];
  const int n = static_cast<int>(t.name_len > 120 ? 120 : t.name_len);
  if (need > dst_bytes)
    return diag.fail(TBLOB_E_BUFFER_TOO_SMALL, TBLOB_NO_OFFSET, static_cast<int64_t>(index),
                     "%.*s: rows %llu:%llu need %llu bytes, the buffer has %zu", n, t.name,
                     static_cast<unsigned long long>(row_begin), static_cast<unsigned long long>(row_end),
                     static_cast<unsigned long long>(need), dst_bytes);
  if (need == 0) return TBLOB_OK;
  if (!dst) return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, static_cast<int64_t>(index), "dst is NULL");
  Req r;
  check(m, index, out_dtype, expert, row_begin, row_end, &r, diag);
  // A source-backed shard: the parts not read at open are read now (whole).
  LayerInfo fetched_info;
  Fetched fetched(m);
  if ((!r.li->weight.data && r.li->weight.bytes) || (!r.li->scales.data && r.li->scales.bytes) ||
      (!r.li->aux.data && r.li->aux.bytes)) {
    fetched_info = *r.li;
    const int64_t ix = static_cast<int64_t>(index);
    if ((s = fetched.get(m, &fetched_info.weight, ix, diag)) != TBLOB_OK) return s;
    if ((s = fetched.get(m, &fetched_info.scales, ix, diag)) != TBLOB_OK) return s;
    if ((s = fetched.get(m, &fetched_info.aux, ix, diag)) != TBLOB_OK) return s;
    r.li = &fetched_info;
  }
  const LayerInfo &li = *r.li;
  if (!r.is_layer || li.family == Family::kUnquant) {
    if (li.weight.dtype == out_dtype) {  // same dtype: the stored bits, unchanged
      const uint32_t es = out_dtype == TBLOB_DTYPE_F32 ? 4 : 2;
      std::memcpy(dst, li.weight.data + r.e0 * es, static_cast<size_t>(r.count * es));
      return TBLOB_OK;
    }
    run_elems(r, plain_f32, dst);
    return TBLOB_OK;
  }
  switch (li.family) {
    case Family::kGgml: {
      const ggml::TypeInfo *ti = ggml::type_info(li.ggml_type);
      const uint64_t row_bytes = li.cols / ti->block_elems * ti->block_bytes;
      tblob_diag local = TBLOB_DIAG_INIT;
      Diag ld;
      ld.out = &local;
      s = ggml::dequantize(ggml::active_kernels(), li.ggml_type, li.weight.data + r.r0 * row_bytes,
                           (r.r1 - r.r0) * row_bytes, r.count, out_dtype, dst, dst_bytes, ld);
      if (s != TBLOB_OK)
        return diag.fail(s, TBLOB_NO_OFFSET, static_cast<int64_t>(index), "%.*s: %s", n, t.name, local.message);
      return TBLOB_OK;
    }
    case Family::kAfq: {
      QuantDesc d;
      d.scheme = QuantScheme::kMlxAffine;
      d.bits = li.bits;
      d.group_size = li.group_size;
      d.scale_dtype = li.scale_dtype;
      d.bias_dtype = li.scale_dtype;
      d.rows = (li.experts ? li.experts : 1) * li.rows;
      d.cols = li.cols;
      d.data = li.weight.data;
      d.data_bytes = li.weight.bytes;
      d.scales = li.scales.data;
      d.scales_bytes = li.scales.bytes;
      d.biases = li.aux.data;
      d.biases_bytes = li.aux.bytes;
      s = dequantize_rows(d, out_dtype, r.r0, r.r1, dst, dst_bytes);
      if (s != TBLOB_OK)
        return diag.fail(s, TBLOB_NO_OFFSET, static_cast<int64_t>(index), "%.*s: the MLX affine kernel refused the layer",
                         n, t.name);
      return TBLOB_OK;
    }
    case Family::kHqq: run_elems(r, hqq_f32, dst); return TBLOB_OK;
    case Family::kFp8: run_elems(r, fp8_f32, dst); return TBLOB_OK;
    case Family::kF8q8: run_elems(r, f8q8_f32, dst); return TBLOB_OK;
    case Family::kMxfp4: run_elems(r, mxfp4_f32, dst); return TBLOB_OK;
    default:
      return diag.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, static_cast<int64_t>(index), "%.*s: no decoder", n, t.name);
  }
}

}  // namespace uqff
}  // namespace tblob
