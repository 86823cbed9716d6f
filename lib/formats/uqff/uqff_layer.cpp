// Structural and family checks of one UQFF layer (docs/uqff.md).
#include "formats/uqff/uqff_layer.h"

#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "core/checked.h"
#include "core/dtype.h"
#include "core/endian.h"
#include "dequant/convert.h"
#include "dequant/ggml/ggml.h"

namespace tblob {
namespace uqff {

void ProblemList::vadd(Severity sev, Status st, const char *fmt, va_list ap) {
  if (sev == Severity::kError) ++errors_; else ++warnings_;
  if (n_ >= kMaxProblems) {
    ++dropped_;
    return;
  }
  Problem &p = p_[n_++];
  p.severity = sev;
  p.status = st;
  std::vsnprintf(p.message, sizeof(p.message), fmt, ap);
}

void ProblemList::add(Severity sev, Status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vadd(sev, st, fmt, ap);
  va_end(ap);
}

const Problem *ProblemList::first_error() const {
  for (uint32_t i = 0; i < n_; ++i)
    if (p_[i].severity == Severity::kError) return &p_[i];
  return nullptr;
}

const uint8_t *entry_data(const tblob_model *m, const TensorDesc &t) {
  const Source &s = m->files[t.file_index].source;
  const uint64_t bytes = t.end - t.begin;
  if (s.data && t.file_offset <= s.len && bytes <= s.len - t.file_offset) return s.data + t.file_offset;
  // A source-backed shard: only its small entries are in memory.
  const UqffExt *x = m->format == TBLOB_FORMAT_UQFF ? static_cast<const UqffExt *>(m->ext) : nullptr;
  if (!x || x->magic != kExtMagic || t.file_index != 0) return nullptr;
  size_t lo = 0, hi = x->small_count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (x->small[mid].offset < t.file_offset) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < x->small_count && x->small[lo].offset == t.file_offset; ++lo)  // empty entries share offsets
    if (x->small[lo].bytes == bytes) return x->small[lo].data;
  return nullptr;
}

namespace {

constexpr uint32_t bit(uint32_t s) { return 1u << s; }

const char *dtn(uint32_t dt) {
  const char *n = dtype_name(dt);
  return n ? n : "?";
}

bool is_float_dtype(uint32_t dt) {
  return dt == TBLOB_DTYPE_F32 || dt == TBLOB_DTYPE_F16 || dt == TBLOB_DTYPE_BF16;
}

// Printable key: at most 120 bytes.
struct K {
  int n;
  const char *p;
  const char *ell;
};
K kname(const Group &g) {
  K k;
  k.p = g.key;
  k.n = static_cast<int>(g.key_len > 120 ? 120 : g.key_len);
  k.ell = g.key_len > 120 ? "..." : "";
  return k;
}

class Checker {
 public:
  Checker(const tblob_model *m, const Group &g, Resolved *out, ProblemList *p)
      : m_(m), g_(g), out_(out), p_(p), k_(kname(g)) {}

  bool run();

 private:
  const TensorDesc *ent(uint32_t s) const { return g_.e[s]; }
  void err(Status st, const char *fmt, ...) __attribute__((format(printf, 3, 4))) {
    va_list ap;
    va_start(ap, fmt);
    p_->vadd(Severity::kError, st, fmt, ap);
    va_end(ap);
    ok_ = false;
  }
  void warn(Status st, const char *fmt, ...) __attribute__((format(printf, 3, 4))) {
    va_list ap;
    va_start(ap, fmt);
    p_->vadd(Severity::kWarning, st, fmt, ap);
    va_end(ap);
  }

  // 0-d scalars (uqff/tensor.rs: a 1-element 1-D tensor is not a scalar).
  bool scalar_u8(uint32_t s, uint32_t *v) {
    const TensorDesc *t = ent(s);
    if (t->dtype != TBLOB_DTYPE_U8 || t->rank != 0 || t->end - t->begin != 1) {
      err(TBLOB_E_UQFF_SCALAR, "%.*s%s%s must be a U8 scalar (shape []), found %s with rank %u, %llu bytes",
          k_.n, k_.p, k_.ell, suffix_text(s), dtn(t->dtype), t->rank,
          static_cast<unsigned long long>(t->end - t->begin));
      return false;
    }
    *v = entry_data(m_, *t)[0];
    return true;
  }
  bool scalar_u32(uint32_t s, uint32_t *v) {
    const TensorDesc *t = ent(s);
    if (t->dtype != TBLOB_DTYPE_U32 || t->rank != 0 || t->end - t->begin != 4) {
      err(TBLOB_E_UQFF_SCALAR, "%.*s%s%s must be a U32 scalar (shape []), found %s with rank %u, %llu bytes",
          k_.n, k_.p, k_.ell, suffix_text(s), dtn(t->dtype), t->rank,
          static_cast<unsigned long long>(t->end - t->begin));
      return false;
    }
    const uint8_t *d = entry_data(m_, *t);
    *v = load_le32(d);
    return true;
  }
  // `.weight.shape`: U32 [rank], 1 <= rank <= kMaxLayerRank.
  bool shape_vec() {
    const TensorDesc *t = ent(kSufShape);
    if (t->dtype != TBLOB_DTYPE_U32 || t->rank != 1) {
      err(TBLOB_E_UQFF_ENTRY_DTYPE, "%.*s%s.weight.shape must be a U32 vector, found %s with rank %u", k_.n, k_.p,
          k_.ell, dtn(t->dtype), t->rank);
      return false;
    }
    const uint64_t r = t->shape[0];
    if (r == 0 || r > kMaxLayerRank) {
      err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s.weight.shape has %llu dimensions (1 to %u allowed)", k_.n, k_.p, k_.ell,
          static_cast<unsigned long long>(r), kMaxLayerRank);
      return false;
    }
    const uint8_t *d = entry_data(m_, *t);
    out_->rank = static_cast<uint32_t>(r);
    for (uint32_t i = 0; i < out_->rank; ++i)
      out_->dims[i] = load_le32(d + 4 * i);
    return true;
  }
  bool logical_elements(uint64_t *n) {
    uint64_t e = 1;
    for (uint32_t i = 0; i < out_->rank; ++i) {
      if (!checked_mul(e, out_->dims[i], &e)) {
        err(TBLOB_E_SHAPE_OVERFLOW, "%.*s%s: the logical element count of its shape overflows 64 bits", k_.n, k_.p,
            k_.ell);
        return false;
      }
    }
    *n = e;
    return true;
  }
  void set_rows_cols(bool stack_ok) {
    LayerInfo &li = out_->info;
    const uint32_t r = out_->rank;
    li.cols = r ? out_->dims[r - 1] : 1;
    if (r == 3 && stack_ok) {
      li.experts = out_->dims[0];
      li.rows = out_->dims[1];
    } else {
      uint64_t rows = 1;
      for (uint32_t i = 0; i + 1 < r; ++i) rows *= out_->dims[i];  // no overflow: elements fit
      li.rows = rows;
    }
  }
  bool no_stack(const char *fam) {
    if (out_->rank == 3) {
      err(TBLOB_E_UQFF_STACK, "%.*s%s: %s layers cannot be stacked expert tensors [E, out, in] (mistral.rs rejects them)",
          k_.n, k_.p, k_.ell, fam);
      return false;
    }
    return true;
  }
  Part part(const TensorDesc *t) {
    Part p;
    p.data = entry_data(m_, *t);
    p.offset = t->file_offset;
    p.file = t->file_index;
    p.bytes = t->end - t->begin;
    p.dtype = t->dtype;
    p.rank = t->rank;
    p.shape = t->shape;
    return p;
  }
  bool float_pair(uint32_t a, uint32_t b) {
    const TensorDesc *x = ent(a), *y = ent(b);
    if (!is_float_dtype(x->dtype) || x->dtype != y->dtype) {
      err(TBLOB_E_UQFF_ENTRY_DTYPE, "%.*s%s%s and %s must share one float dtype (F32, F16 or BF16), found %s and %s",
          k_.n, k_.p, k_.ell, suffix_text(a), suffix_text(b), dtn(x->dtype), dtn(y->dtype));
      return false;
    }
    return true;
  }

  bool ggml();
  bool unquant();
  bool hqq();
  bool fp8();
  bool afq();
  bool f8q8();
  bool mxfp4();
  void bias();

  const tblob_model *m_;
  const Group &g_;
  Resolved *out_;
  ProblemList *p_;
  K k_;
  bool ok_ = true;
};

const char *afq_label(uint32_t bits) {
  switch (bits) {
    case 2: return "afq2";
    case 3: return "afq3";
    case 4: return "afq4";
    case 6: return "afq6";
    default: return "afq8";
  }
}

bool Checker::ggml() {
  LayerInfo &li = out_->info;
  uint32_t id;
  if (!scalar_u32(kSufDtype, &id)) return false;
  const ggml::TypeInfo *ti = ggml::type_info(id);
  if (!ti || !ti->uqff_name) {  // the GGML table also holds types mistral.rs never writes
    err(TBLOB_E_UQFF_GGML_TYPE, "%.*s%s.weight.dtype is %u, not a ggml type id mistral.rs writes "
        "(0, 1, 2, 3, 6, 7, 8, 9, 10-15, 30)", k_.n, k_.p, k_.ell, id);
    return false;
  }
  li.ggml_type = id;
  li.bits = ti->bits;
  li.group_size = ti->block_elems;
  li.label = ti->uqff_name;
  if (!shape_vec()) return false;
  const TensorDesc *w = ent(kSufWeight);
  if (w->dtype != TBLOB_DTYPE_U8 || w->rank != 1) {
    err(TBLOB_E_UQFF_ENTRY_DTYPE, "%.*s%s.weight must hold raw ggml blocks as a U8 vector, found %s with rank %u",
        k_.n, k_.p, k_.ell, dtn(w->dtype), w->rank);
    return false;
  }
  if (out_->rank > 3) {
    err(TBLOB_E_UQFF_STACK, "%.*s%s: a GGML layer of rank %u (1 to 3 allowed)", k_.n, k_.p, k_.ell, out_->rank);
    return false;
  }
  uint64_t n;
  if (!logical_elements(&n)) return false;
  const uint64_t last = out_->dims[out_->rank - 1];
  if (last % ti->block_elems != 0) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s: last dimension %llu is not a multiple of the %s block size %u", k_.n, k_.p,
        k_.ell, static_cast<unsigned long long>(last), ti->name, ti->block_elems);
    return false;
  }
  uint64_t need;
  if (!ggml::bytes_for(*ti, n, &need)) {
    err(TBLOB_E_SHAPE_OVERFLOW, "%.*s%s: %s byte count overflows", k_.n, k_.p, k_.ell, ti->name);
    return false;
  }
  const uint64_t have = w->end - w->begin;
  if (have != need) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s.weight holds %llu bytes but %llu %s values need %llu (%s)", k_.n, k_.p,
        k_.ell, static_cast<unsigned long long>(have), static_cast<unsigned long long>(n), ti->name,
        static_cast<unsigned long long>(need), have < need ? "truncated blocks" : "bytes past the last block");
    return false;
  }
  li.elements = n;
  li.weight = part(w);
  set_rows_cols(true);
  return true;
}

bool Checker::unquant() {
  LayerInfo &li = out_->info;
  const TensorDesc *w = ent(kSufWeight);
  li.label = "unquant";
  uint32_t b = dtype_bits(w->dtype);
  li.bits = b;
  if (w->rank != 2 && w->rank != 3) {
    err(TBLOB_E_UQFF_STACK, "%.*s%s: an Unquant layer must be [out, in] or a stack [E, out, in], found rank %u", k_.n,
        k_.p, k_.ell, w->rank);
    return false;
  }
  out_->rank = w->rank;
  for (uint32_t i = 0; i < w->rank; ++i) out_->dims[i] = w->shape[i];
  li.elements = w->elements;
  li.weight = part(w);
  set_rows_cols(true);
  return true;
}

bool Checker::hqq() {
  LayerInfo &li = out_->info;
  uint32_t bits = 0, gs = 0, axis = 0, steps = 0, rz = 0, cw = 0;
  bool ok = scalar_u8(kSufBits, &bits);
  ok = scalar_u32(kSufGroupSize, &gs) && ok;
  ok = scalar_u8(kSufAxis, &axis) && ok;
  ok = scalar_u32(kSufOptSteps, &steps) && ok;
  ok = scalar_u8(kSufRoundZeros, &rz) && ok;
  ok = scalar_u8(kSufChannelWise, &cw) && ok;
  if (!ok) return false;
  if (bits != 4 && bits != 8) {
    err(TBLOB_E_UQFF_PARAM, "%.*s%s.weight.bits is %u: only HQQ 4 and 8 bit layers are serialisable", k_.n, k_.p,
        k_.ell, bits);
    return false;
  }
  if (gs == 0) {
    err(TBLOB_E_UQFF_PARAM, "%.*s%s.weight.group_size is 0", k_.n, k_.p, k_.ell);
    return false;
  }
  if (axis > 1 || rz > 1 || cw > 1) {
    err(TBLOB_E_UQFF_PARAM, "%.*s%s: axis %u, round_zeros %u, channel_wise %u (axis 0/1 and booleans 0/1 expected)",
        k_.n, k_.p, k_.ell, axis, rz, cw);
    return false;
  }
  if (axis != 0)
    warn(TBLOB_E_UNSUPPORTED, "%.*s%s: HQQ axis 1: mistral.rs's CPU dequantizer (and this library) need axis 0",
         k_.n, k_.p, k_.ell);
  li.bits = bits;
  li.group_size = gs;
  li.hqq_axis = axis;
  li.label = bits == 4 ? "hqq4" : "hqq8";
  if (!shape_vec() || !no_stack("HQQ")) return false;
  uint64_t n;
  if (!logical_elements(&n)) return false;
  if (n % gs != 0) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s: group size %u does not divide the %llu elements", k_.n, k_.p, k_.ell, gs,
        static_cast<unsigned long long>(n));
    return false;
  }
  if (bits == 4 && gs % 2 != 0) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s: 4-bit HQQ needs an even group size, found %u", k_.n, k_.p, k_.ell, gs);
    return false;
  }
  const uint64_t W = n / gs;
  const uint64_t rows = bits == 8 ? gs : gs / 2;
  const TensorDesc *w = ent(kSufWeight);
  if (w->dtype != TBLOB_DTYPE_U8 || w->rank != 2 || w->shape[0] != rows || w->shape[1] != W) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s.weight must be U8 [%llu, %llu] for %u-bit group %u of %llu elements, found %s rank %u",
        k_.n, k_.p, k_.ell, static_cast<unsigned long long>(rows), static_cast<unsigned long long>(W), bits, gs,
        static_cast<unsigned long long>(n), dtn(w->dtype), w->rank);
    return false;
  }
  if (!float_pair(kSufScales, kSufZeros)) return false;
  for (uint32_t s : {kSufScales, kSufZeros}) {
    if (ent(s)->elements != W) {
      err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s%s has %llu values, the layer needs one per group column: %llu", k_.n, k_.p,
          k_.ell, suffix_text(s), static_cast<unsigned long long>(ent(s)->elements), static_cast<unsigned long long>(W));
      return false;
    }
  }
  li.scale_dtype = ent(kSufScales)->dtype;
  li.elements = n;
  li.weight = part(w);
  li.scales = part(ent(kSufScales));
  li.aux = part(ent(kSufZeros));
  set_rows_cols(false);
  return true;
}

bool Checker::fp8() {
  LayerInfo &li = out_->info;
  uint32_t code;
  if (!scalar_u32(kSufDtype, &code)) return false;
  static const char *const kCandle[] = {"U8", "U32", "I32", "I64", "F16", "BF16", "F32",
                                        "F64", "I16", "F8E4M3", "F6E2M3", "F6E3M2", "F4", "F8E8M0"};
  if (code > 13) {
    err(TBLOB_E_UQFF_GGML_TYPE, "%.*s%s.weight.dtype is %u, not a candle dtype code (0-13)", k_.n, k_.p, k_.ell, code);
    return false;
  }
  if (code != 9) {
    err(TBLOB_E_UQFF_GGML_TYPE, "%.*s%s.weight.dtype is %u (%s); FP8 layers store F8E4M3 (9)", k_.n, k_.p, k_.ell,
        code, kCandle[code]);
    return false;
  }
  const TensorDesc *w = ent(kSufWeight);
  if (w->dtype != TBLOB_DTYPE_F8_E4M3) {
    err(TBLOB_E_UQFF_ENTRY_DTYPE, "%.*s%s.weight must be F8_E4M3, found %s", k_.n, k_.p, k_.ell, dtn(w->dtype));
    return false;
  }
  out_->rank = w->rank;
  if (w->rank != 2 && w->rank != 3) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s.weight must be [out, in], found rank %u", k_.n, k_.p, k_.ell, w->rank);
    return false;
  }
  for (uint32_t i = 0; i < w->rank; ++i) out_->dims[i] = w->shape[i];
  if (!no_stack("FP8")) return false;
  for (uint32_t s : {kSufDequantW, kSufDequantX, kSufQuantScale}) {
    const TensorDesc *t = ent(s);
    if (!is_float_dtype(t->dtype) || t->elements != 1 || t->rank > 1) {
      err(TBLOB_E_UQFF_ENTRY_DTYPE, "%.*s%s%s must be one float value (F32 [] as mistral.rs writes it), found %s rank %u",
          k_.n, k_.p, k_.ell, suffix_text(s), dtn(t->dtype), t->rank);
      return false;
    }
  }
  const TensorDesc *sw = ent(kSufDequantW);
  const uint8_t *d = entry_data(m_, *sw);
  uint32_t u;
  if (sw->dtype == TBLOB_DTYPE_F32) {
    u = load_le32(d);
  } else {
    const uint16_t h = load_le16(d);
    u = sw->dtype == TBLOB_DTYPE_BF16 ? dq::bf16_to_f32(h) : dq::f16_to_f32(h);
  }
  li.fp8_scale = dq::f32_from_bits(u);
  li.bits = 8;
  li.label = "fp8";
  li.scale_dtype = TBLOB_DTYPE_F32;
  li.elements = w->elements;
  li.weight = part(w);
  set_rows_cols(false);
  return true;
}

bool Checker::afq() {
  LayerInfo &li = out_->info;
  uint32_t bits = 0, gs = 0;
  bool ok = scalar_u8(kSufBits, &bits);
  ok = scalar_u8(kSufGroupSize, &gs) && ok;
  if (!ok) return false;
  if (bits != 2 && bits != 3 && bits != 4 && bits != 6 && bits != 8) {
    err(TBLOB_E_UQFF_PARAM, "%.*s%s.weight.bits is %u (AFQ has 2, 3, 4, 6, 8)", k_.n, k_.p, k_.ell, bits);
    return false;
  }
  if (gs != 32 && gs != 64 && gs != 128) {
    err(TBLOB_E_UQFF_PARAM, "%.*s%s.weight.group_size is %u (AFQ has 32, 64, 128)", k_.n, k_.p, k_.ell, gs);
    return false;
  }
  li.bits = bits;
  li.group_size = gs;
  li.label = afq_label(bits);
  const TensorDesc *w = ent(kSufWeight), *s = ent(kSufScales), *b = ent(kSufBiases);
  if (w->dtype != TBLOB_DTYPE_U32 || (w->rank != 2 && w->rank != 3)) {
    err(TBLOB_E_UQFF_ENTRY_DTYPE, "%.*s%s.weight must be U32 [out, in*bits/32] or [E, out, in*bits/32], found %s rank %u",
        k_.n, k_.p, k_.ell, dtn(w->dtype), w->rank);
    return false;
  }
  if (!float_pair(kSufScales, kSufBiases)) return false;
  bool same = s->rank == w->rank && b->rank == w->rank;
  for (uint32_t i = 0; same && i < w->rank; ++i) {
    if (s->shape[i] != b->shape[i]) same = false;
    if (i + 1 < w->rank && s->shape[i] != w->shape[i]) same = false;
  }
  if (!same) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s: .weight.scales and .weight.biases must be [..., out, in/group_size] "
        "matching .weight's leading dimensions", k_.n, k_.p, k_.ell);
    return false;
  }
  const uint32_t r = w->rank;
  uint64_t in, wbits, inbits;
  if (!checked_mul(s->shape[r - 1], gs, &in) || !checked_mul(w->shape[r - 1], 32, &wbits) ||
      !checked_mul(in, bits, &inbits)) {
    err(TBLOB_E_SHAPE_OVERFLOW, "%.*s%s: AFQ size estimate overflows", k_.n, k_.p, k_.ell);
    return false;
  }
  if (wbits != inbits) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s: .weight rows hold %llu bits but %llu inputs (scales %llu x group %u) at "
        "%u bits need %llu", k_.n, k_.p, k_.ell, static_cast<unsigned long long>(wbits),
        static_cast<unsigned long long>(in), static_cast<unsigned long long>(s->shape[r - 1]), gs, bits,
        static_cast<unsigned long long>(inbits));
    return false;
  }
  out_->rank = r;
  for (uint32_t i = 0; i + 1 < r; ++i) out_->dims[i] = w->shape[i];
  out_->dims[r - 1] = in;
  uint64_t n;
  if (!logical_elements(&n)) return false;
  li.scale_dtype = s->dtype;
  li.elements = n;
  li.weight = part(w);
  li.scales = part(s);
  li.aux = part(b);
  set_rows_cols(true);
  return true;
}

bool Checker::f8q8() {
  LayerInfo &li = out_->info;
  uint32_t nb;
  if (!scalar_u32(kSufNumBlocks, &nb)) return false;
  if (!shape_vec() || !no_stack("F8Q8")) return false;
  uint64_t n;
  if (!logical_elements(&n)) return false;
  const TensorDesc *w = ent(kSufWeight);
  if (w->dtype != TBLOB_DTYPE_U8 || w->rank != 1) {
    err(TBLOB_E_UQFF_ENTRY_DTYPE, "%.*s%s.weight must be a U8 vector of 33-byte blocks, found %s rank %u", k_.n, k_.p,
        k_.ell, dtn(w->dtype), w->rank);
    return false;
  }
  const uint64_t want_blocks = ceil_div(n, 32);
  if (nb != want_blocks) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s.weight.num_blocks is %u but %llu elements make %llu blocks of 32", k_.n,
        k_.p, k_.ell, nb, static_cast<unsigned long long>(n), static_cast<unsigned long long>(want_blocks));
    return false;
  }
  const uint64_t need = static_cast<uint64_t>(nb) * 33u;
  if (w->end - w->begin != need) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s.weight holds %llu bytes, %u blocks of 33 need %llu (%s)", k_.n, k_.p, k_.ell,
        static_cast<unsigned long long>(w->end - w->begin), nb, static_cast<unsigned long long>(need),
        w->end - w->begin < need ? "truncated blocks" : "bytes past the last block");
    return false;
  }
  if (out_->dims[out_->rank - 1] % 32 != 0)
    warn(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s: last dimension %llu is not a multiple of 32, so F8Q8 blocks cross rows "
         "(mistral.rs cannot load it sharded)", k_.n, k_.p, k_.ell,
         static_cast<unsigned long long>(out_->dims[out_->rank - 1]));
  li.bits = 8;
  li.group_size = 32;
  li.label = "f8q8";
  li.f8q8_blocks = nb;
  li.elements = n;
  li.weight = part(w);
  set_rows_cols(false);
  return true;
}

bool Checker::mxfp4() {
  LayerInfo &li = out_->info;
  const TensorDesc *w = ent(kSufWeight), *s = ent(kSufScales);
  if (w->dtype != TBLOB_DTYPE_U8 || s->dtype != TBLOB_DTYPE_U8 || (w->rank != 2 && w->rank != 3) || s->rank != w->rank) {
    err(TBLOB_E_UQFF_ENTRY_DTYPE, "%.*s%s: MXFP4 .weight and .weight.scales must be U8 [N, K/2] and [N, K/32] "
        "(or [E, ...]), found %s rank %u and %s rank %u", k_.n, k_.p, k_.ell, dtn(w->dtype), w->rank, dtn(s->dtype),
        s->rank);
    return false;
  }
  const uint32_t r = w->rank;
  bool same = true;
  for (uint32_t i = 0; i + 1 < r; ++i) same = same && w->shape[i] == s->shape[i];
  uint64_t k, k2;
  if (!checked_mul(s->shape[r - 1], 32, &k) || !checked_mul(w->shape[r - 1], 2, &k2)) {
    err(TBLOB_E_SHAPE_OVERFLOW, "%.*s%s: MXFP4 size estimate overflows", k_.n, k_.p, k_.ell);
    return false;
  }
  if (!same || k != k2) {
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s: .weight [..., %llu] packs %llu values per row but .weight.scales "
        "[..., %llu] covers %llu", k_.n, k_.p, k_.ell, static_cast<unsigned long long>(w->shape[r - 1]),
        static_cast<unsigned long long>(k2), static_cast<unsigned long long>(s->shape[r - 1]),
        static_cast<unsigned long long>(k));
    return false;
  }
  out_->rank = r;
  for (uint32_t i = 0; i + 1 < r; ++i) out_->dims[i] = w->shape[i];
  out_->dims[r - 1] = k;
  uint64_t n;
  if (!logical_elements(&n)) return false;
  li.bits = 4;
  li.group_size = 32;
  li.label = "mxfp4";
  li.scale_dtype = TBLOB_DTYPE_F8_E8M0;
  li.elements = n;
  li.weight = part(w);
  li.scales = part(s);
  set_rows_cols(true);
  return true;
}

// `<key>.bias`: a float vector [out], or [E, out] for a stack.
void Checker::bias() {
  const TensorDesc *b = ent(kSufBias);
  if (!b) return;
  out_->bias = b;
  out_->info.has_bias = 1;
  const LayerInfo &li = out_->info;
  if (!is_float_dtype(b->dtype)) {
    err(TBLOB_E_UQFF_ENTRY_DTYPE, "%.*s%s.bias must be F32, F16 or BF16, found %s", k_.n, k_.p, k_.ell, dtn(b->dtype));
    return;
  }
  if (out_->rank < 2) return;
  const bool stack = li.experts != 0;
  const bool ok = stack ? (b->rank == 2 && b->shape[0] == li.experts && b->shape[1] == li.rows)
                        : (b->elements == li.rows && b->rank <= 2);
  if (!ok)
    err(TBLOB_E_UQFF_LAYER_SIZE, "%.*s%s.bias has %llu values, the layer has %llu outputs%s", k_.n, k_.p, k_.ell,
        static_cast<unsigned long long>(b->elements), static_cast<unsigned long long>(li.rows),
        stack ? " per expert ([E, out] expected)" : "");
}

bool Checker::run() {
  LayerInfo &li = out_->info;
  out_->weight = ent(kSufWeight);
  // Shards holding the entries, stored bytes.
  uint64_t files_seen = 0;  // bitmap of the first 64 shards
  uint32_t span = 0;
  for (uint32_t s = 0; s < kSufCount; ++s) {
    const TensorDesc *t = ent(s);
    if (!t) continue;
    li.stored_bytes += t->end - t->begin;
    const uint64_t fb = t->file_index < 64 ? (uint64_t{1} << t->file_index) : 0;
    if (!fb || !(files_seen & fb)) ++span;
    files_seen |= fb;
  }
  li.shard_span = span ? span : 1;
  li.shard = out_->weight ? out_->weight->file_index : 0;
  for (uint32_t i = 0; i < g_.n_unknown; ++i) {
    const TensorDesc *t = g_.unknown[i];
    const int n = static_cast<int>(t->name_len > 160 ? 160 : t->name_len);
    err(TBLOB_E_UQFF_UNRECOGNIZED, "entry %.*s is not part of any UQFF layer family", n, t->name);
  }
  const uint32_t mask = g_.mask & ~bit(kSufBias);
  // Structure: which families have exactly this entry set?
  uint32_t format_value = UINT32_MAX;
  Family declared = Family::kNone;
  if (ent(kSufFormat)) {
    uint32_t v;
    if (!scalar_u8(kSufFormat, &v)) return false;
    format_value = v;
    if (v >= kFamilyCount) {
      err(TBLOB_E_UQFF_FORMAT_TAG, "%.*s%s.weight.format is %u: QuantizedSerdeType %u is invalid (0-6)", k_.n, k_.p,
          k_.ell, v, v);
      return false;
    }
    declared = static_cast<Family>(v);
  }
  Family matches[kFamilyCount];
  uint32_t nmatch = 0;
  for (uint32_t f = 0; f < kFamilyCount; ++f)
    if ((mask | bit(kSufFormat)) == family_mask(static_cast<Family>(f))) matches[nmatch++] = static_cast<Family>(f);
  if (g_.mask == bit(kSufBias)) {
    err(TBLOB_E_UQFF_UNRECOGNIZED, "%.*s%s.bias belongs to no layer (no %.*s%s.weight in the set)", k_.n, k_.p,
        k_.ell, k_.n, k_.p, k_.ell);
    return false;
  }
  if (declared == Family::kNone) {
    if (nmatch == 0)
      err(TBLOB_E_UQFF_UNRECOGNIZED, "%.*s%s: unrecognized layer (no .weight.format, and its entries match no family)",
          k_.n, k_.p, k_.ell);
    else if (nmatch > 1)
      err(TBLOB_E_UQFF_AMBIGUOUS, "%.*s%s: ambiguous layer (no .weight.format; its entries match %s and %s)", k_.n,
          k_.p, k_.ell, family_name(matches[0]), family_name(matches[1]));
    else
      err(TBLOB_E_UQFF_ENTRIES, "%.*s%s: no .weight.format (its entries are those of a %s layer)", k_.n, k_.p, k_.ell,
          family_name(matches[0]));
    return false;
  }
  li.family = declared;
  if (!ok_) return false;
  if (mask != family_mask(declared)) {
    bool other = false;
    for (uint32_t i = 0; i < nmatch; ++i) other |= matches[i] != declared;
    if (other) {
      err(TBLOB_E_UQFF_MISMATCH, "%.*s%s declares %s (format %u) but its entries are those of a %s layer", k_.n, k_.p,
          k_.ell, family_name(declared), format_value, family_name(matches[0]));
      return false;
    }
    char missing[160] = "", extra[160] = "";
    const uint32_t want = family_mask(declared);
    for (uint32_t s = 0; s < kSufBias; ++s) {
      char *dst = (want & bit(s)) && !(mask & bit(s)) ? missing : (!(want & bit(s)) && (mask & bit(s)) ? extra : nullptr);
      if (!dst) continue;
      const size_t l = std::strlen(dst);
      std::snprintf(dst + l, 160 - l, "%s%s", l ? " " : "", suffix_text(s));
    }
    const bool no_weight = !(mask & bit(kSufWeight));
    err(TBLOB_E_UQFF_ENTRIES, "%.*s%s: %s layer%s%s%s%s%s", k_.n, k_.p, k_.ell, family_name(declared),
        missing[0] ? " lacks " : "", missing, extra[0] ? "; unexpected " : "", extra,
        no_weight || span > 1 ? " (entries straddle shards: is a shard of the set missing?)" : "");
    return false;
  }
  bool ok = false;
  switch (declared) {
    case Family::kGgml: ok = ggml(); break;
    case Family::kUnquant: ok = unquant(); break;
    case Family::kHqq: ok = hqq(); break;
    case Family::kFp8: ok = fp8(); break;
    case Family::kAfq: ok = afq(); break;
    case Family::kF8q8: ok = f8q8(); break;
    case Family::kMxfp4: ok = mxfp4(); break;
    default: break;
  }
  if (ok) bias();
  return ok && ok_;
}

}  // namespace

bool resolve_layer(const tblob_model *m, const Group &g, Resolved *out, ProblemList *probs) {
  Checker c(m, g, out, probs);
  return c.run();
}

}  // namespace uqff
}  // namespace tblob
