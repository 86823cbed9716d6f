// The extern "C" dequantization API: descriptors in and out, argument checks, diagnostics
// that name the tensor, the companion and the field. Decoding itself is lib/dequant/.
#include "capi/capi_common.h"
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "core/checked.h"
#include "core/dtype.h"
#include "table/model.h"
#include "io/source.h"
#include "dequant/dequant.h"
#include "dequant/quant_desc.h"
#include "capi/dequant_internal.h"
#include "capi/quant_desc_public.h"

#if defined(__has_include)
#if __has_include("dequant/dispatch.h")
#include "dequant/dispatch.h"
#define TBLOB_HAVE_DISPATCH 1
#endif
#endif

using tblob::Diag;
using tblob::GlobalScaleMode;
using tblob::kNoTensor;
using tblob::QuantDesc;
using tblob::QuantRecord;
using tblob::QuantScheme;
using tblob::Status;
using tblob::capi::bad_arg;
using tblob::capi::begin;
using tblob::capi::desc_from_public;

// The public enums are the internal ones, number for number.
static_assert(TBLOB_QUANT_MLX_AFFINE == static_cast<int>(QuantScheme::kMlxAffine), "scheme");
static_assert(TBLOB_QUANT_MXFP4 == static_cast<int>(QuantScheme::kMxfp4), "scheme");
static_assert(TBLOB_QUANT_MXFP8 == static_cast<int>(QuantScheme::kMxfp8), "scheme");
static_assert(TBLOB_QUANT_NVFP4 == static_cast<int>(QuantScheme::kNvfp4), "scheme");
static_assert(TBLOB_QUANT_F8_E4M3 == static_cast<int>(QuantScheme::kF8E4M3), "scheme");
static_assert(TBLOB_QUANT_F8_E5M2 == static_cast<int>(QuantScheme::kF8E5M2), "scheme");
static_assert(TBLOB_QUANT_F8_E8M0 == static_cast<int>(QuantScheme::kF8E8M0), "scheme");
static_assert(TBLOB_QUANT_F8_E4M3FNUZ == static_cast<int>(QuantScheme::kF8E4M3Fnuz), "scheme");
static_assert(TBLOB_QUANT_F8_E5M2FNUZ == static_cast<int>(QuantScheme::kF8E5M2Fnuz), "scheme");
static_assert(TBLOB_QUANT_F4 == static_cast<int>(QuantScheme::kF4E2M1), "scheme");
static_assert(TBLOB_QUANT_F16 == static_cast<int>(QuantScheme::kF16), "scheme");
static_assert(TBLOB_QUANT_BF16 == static_cast<int>(QuantScheme::kBF16), "scheme");
static_assert(TBLOB_QUANT_F32 == static_cast<int>(QuantScheme::kF32), "scheme");
static_assert(TBLOB_QUANT_BLOCK_FP8 == static_cast<int>(QuantScheme::kBlockFp8), "scheme");
static_assert(TBLOB_QUANT_SLM1_Q8_0 == static_cast<int>(QuantScheme::kSlm1Q8), "scheme");
static_assert(TBLOB_QUANT_SLM1_Q4_0 == static_cast<int>(QuantScheme::kSlm1Q4), "scheme");
static_assert(TBLOB_QUANT_SLM1_Q4_0 + 1 == tblob::kQuantSchemeCount, "every scheme is numbered");
static_assert(TBLOB_SPECIAL_E4M3_MAX_FINITE == tblob::kSpecE4M3MaxFinite, "special");
static_assert(TBLOB_SPECIAL_E8M0_MAX_INF == tblob::kSpecE8M0MaxInf, "special");
static_assert(TBLOB_SPECIAL_E8M0_ZERO_IS_ZERO == tblob::kSpecE8M0ZeroIsZero, "special");
static_assert(TBLOB_SPECIAL_MLX == tblob::kSpecialMlx, "special");
static_assert(TBLOB_SPECIAL_MISTRALRS == tblob::kSpecialMistralRs, "special");
static_assert(TBLOB_GLOBAL_SCALE_MULTIPLIER == static_cast<int>(GlobalScaleMode::kMultiplier), "gs");
static_assert(TBLOB_GLOBAL_SCALE_MLX_AMAX == static_cast<int>(GlobalScaleMode::kMlxAmax), "gs");

namespace {

// First versions of the structs: every field up to here is required.

const char *scheme_name(uint32_t s) { return s == 0 ? "none" : tblob::quant_scheme_label(s); }

const char *sname(uint32_t s) {
  const char *n = scheme_name(s);
  return n ? n : "unknown";
}

const char *dtname(uint32_t dt) {
  if (dt == 0) return "none";
  const char *n = tblob_dtype_name(dt);
  return n ? n : "invalid";
}

bool is_block(const QuantDesc &q) { return q.scheme == QuantScheme::kBlockFp8; }

uint32_t scale_bytes_of(uint32_t dt) { return tblob::dtype_size(dt); }


// Which input a status is about (for the model API's offsets and names).
enum Field { kFieldNone, kFieldData, kFieldScale, kFieldBias, kFieldGlobal };

// Explains a descriptor status in one sentence (no tensor name). Returns the field.
Field explain(Status s, const QuantDesc &q, uint32_t out_dtype, uint64_t rb, uint64_t re,
              size_t dst_bytes, char *buf, size_t cap) {
  const uint32_t sv = static_cast<uint32_t>(q.scheme);
  const unsigned long long rows = q.rows, cols = q.cols;
  const uint32_t bits = tblob::quant_element_bits(q);
  switch (s) {
    case TBLOB_E_QUANT_SCHEME:
      std::snprintf(buf, cap,
                    "scheme %s (%u) with bits %u, special 0x%x, global-scale mode %u is not a valid "
                    "combination",
                    sname(sv), sv, q.bits, q.special, static_cast<unsigned>(q.global_scale_mode));
      return kFieldNone;
    case TBLOB_E_QUANT_GROUP_SIZE: {
      const uint32_t fixed = q.scheme == QuantScheme::kNvfp4 ? 16u
                             : (q.scheme == QuantScheme::kMxfp4 || q.scheme == QuantScheme::kMxfp8) ? 32u
                                                                                                   : 0u;
      const bool grouped = q.scheme == QuantScheme::kMlxAffine || fixed || is_block(q) ||
                           sv == TBLOB_QUANT_SLM1_Q8_0 || sv == TBLOB_QUANT_SLM1_Q4_0;
      if (sv == TBLOB_QUANT_SLM1_Q8_0 && q.group_size != q.cols)
        std::snprintf(buf, cap, "group size %u, but %s has one scale per row: the group size is the row length %llu",
                      q.group_size, sname(sv), cols);
      else if (sv == TBLOB_QUANT_SLM1_Q4_0 && q.group_size % 2 != 0)
        std::snprintf(buf, cap, "block size %u is odd; %s blocks are an even number of 4-bit codes",
                      q.group_size, sname(sv));
      else if (!grouped)
        std::snprintf(buf, cap, "group size %u given for %s, which has no groups (use 0)",
                      q.group_size, sname(sv));
      else if (q.group_size == 0)
        std::snprintf(buf, cap, "group size is 0");
      else if (fixed && q.group_size != fixed)
        std::snprintf(buf, cap, "group size %u, but %s groups are %u elements", q.group_size,
                      sname(sv), fixed);
      else
        std::snprintf(buf, cap, "group size %u does not divide the row length %llu", q.group_size, cols);
      return kFieldScale;
    }
    case TBLOB_E_QUANT_PACKING:
      if (q.group_size)
        std::snprintf(buf, cap, "a row of %llu %u-bit codes is %llu bits, not whole 32-bit words",
                      cols, bits, cols * bits);
      else
        std::snprintf(buf, cap, "%llu x %llu %u-bit elements do not fill whole bytes", rows, cols, bits);
      return kFieldData;
    case TBLOB_E_QUANT_DATA_SIZE: {
      uint64_t e = 0, b = 0;
      const bool ok = tblob::checked_mul(q.rows, q.cols, &e) && tblob::checked_mul(e, bits, &b);
      std::snprintf(buf, cap, "packed data is %llu bytes, but %llu x %llu %u-bit codes need %llu",
                    static_cast<unsigned long long>(q.data_bytes), rows, cols, bits,
                    static_cast<unsigned long long>(ok ? b / 8 : 0));
      return kFieldData;
    }
    case TBLOB_E_QUANT_SCALE_DTYPE: {
      const char *allowed = "none (plain types have no scales)";
      if (q.scheme == QuantScheme::kMlxAffine || is_block(q)) allowed = "F32, F16 or BF16";
      if (q.scheme == QuantScheme::kMxfp4 || q.scheme == QuantScheme::kMxfp8) allowed = "F8_E8M0";
      if (q.scheme == QuantScheme::kNvfp4) allowed = "F8_E4M3";
      if (sv == TBLOB_QUANT_SLM1_Q8_0 || sv == TBLOB_QUANT_SLM1_Q4_0) allowed = "F32";
      std::snprintf(buf, cap, "scale dtype %s is not allowed for %s (allowed: %s)",
                    dtname(q.scale_dtype), sname(sv), allowed);
      return kFieldScale;
    }
    case TBLOB_E_QUANT_SCALE_SIZE: {
      const uint64_t n = tblob::quant_scale_count(q);
      const uint32_t sb = scale_bytes_of(q.scale_dtype);
      std::snprintf(buf, cap, "scales are %llu bytes, but %llu scales of %u bytes need %llu",
                    static_cast<unsigned long long>(q.scales_bytes),
                    static_cast<unsigned long long>(n), sb,
                    static_cast<unsigned long long>(n * sb));
      return kFieldScale;
    }
    case TBLOB_E_QUANT_BIAS_DTYPE:
      if (q.scheme == QuantScheme::kMlxAffine)
        std::snprintf(buf, cap, "bias dtype %s differs from the scale dtype %s (affine needs both)",
                      dtname(q.bias_dtype), dtname(q.scale_dtype));
      else
        std::snprintf(buf, cap, "%s has no bias, but one is given (dtype %s, %llu bytes)", sname(sv),
                      dtname(q.bias_dtype), static_cast<unsigned long long>(q.biases_bytes));
      return kFieldBias;
    case TBLOB_E_QUANT_BIAS_SIZE: {
      const uint64_t n = tblob::quant_scale_count(q);
      const uint32_t bb = scale_bytes_of(q.bias_dtype);
      std::snprintf(buf, cap, "biases are %llu bytes, but %llu biases of %u bytes need %llu",
                    static_cast<unsigned long long>(q.biases_bytes),
                    static_cast<unsigned long long>(n), bb,
                    static_cast<unsigned long long>(n * bb));
      return kFieldBias;
    }
    case TBLOB_E_QUANT_GLOBAL_SCALE:
      std::snprintf(buf, cap,
                    "global scale (mode %u, %llu bytes) needs the nvfp4 scheme, a mode, and exactly one F32",
                    static_cast<unsigned>(q.global_scale_mode),
                    static_cast<unsigned long long>(q.global_scale_bytes));
      return kFieldGlobal;
    case TBLOB_E_DEQUANT_OUT_DTYPE:
      std::snprintf(buf, cap, "output dtype %s (%u) is not F32, F16 or BF16", dtname(out_dtype), out_dtype);
      return kFieldNone;
    case TBLOB_E_RANGE:
      std::snprintf(buf, cap, "rows [%llu, %llu) are not a range inside the %llu rows",
                    static_cast<unsigned long long>(rb), static_cast<unsigned long long>(re), rows);
      return kFieldNone;
    case TBLOB_E_BUFFER_TOO_SMALL: {
      uint64_t need = 0;
      tblob::dequant_output_bytes(q, out_dtype, rb, re, &need);
      std::snprintf(buf, cap, "rows [%llu, %llu) as %s need %llu bytes; the buffer holds %llu",
                    static_cast<unsigned long long>(rb), static_cast<unsigned long long>(re),
                    dtname(out_dtype), static_cast<unsigned long long>(need),
                    static_cast<unsigned long long>(dst_bytes));
      return kFieldNone;
    }
    case TBLOB_E_SHAPE_OVERFLOW:
      std::snprintf(buf, cap, "%llu x %llu elements overflow 64-bit sizes", rows, cols);
      return kFieldNone;
    case TBLOB_E_INVALID_ARGUMENT:
      std::snprintf(buf, cap, "a data/scale/bias/global-scale or output pointer is NULL with a non-zero length");
      return kFieldNone;
    default:
      std::snprintf(buf, cap, "%s", tblob_status_message(s));
      return kFieldNone;
  }
}

// Runs a validated-or-not descriptor: the one place decoding is entered.
Status run(const QuantDesc &q, uint32_t out_dtype, uint64_t rb, uint64_t re, void *dst,
           size_t dst_bytes) {
  return tblob::dequantize_rows(q, out_dtype, rb, re, dst, dst_bytes);
}

// ---- model tensors -----------------------------------------------------------------------

const QuantRecord *record_of(const tblob_model *m, size_t i) {
  if (!m->quant_of || i >= m->tensors.size()) return nullptr;
  const uint32_t id = m->quant_of[i];
  return id && id <= m->quant.size() ? &m->quant[id - 1] : nullptr;
}

// Bytes of tensor i, range-checked against its file. A byte source's tensor that is not in
// its in-memory prefix gets a null pointer: fetch_view reads it before decoding.
bool tensor_bytes(const tblob_model *m, uint64_t i, const uint8_t **p, uint64_t *n) {
  const tblob::TensorDesc &t = m->tensors[static_cast<size_t>(i)];
  const tblob::Source &src = m->files[t.file_index].source;
  if (!tblob::range_inside(t.file_offset, t.end - t.begin, tblob::source_total(src))) return false;
  const bool here = tblob::range_inside(t.file_offset, t.end - t.begin, src.len);
  *p = src.data && here ? src.data + t.file_offset : nullptr;
  *n = t.end - t.begin;
  return true;
}

// Scratch for the bytes of a dequantization from a byte source: at most the packed weight and
// its three companions, each no larger than its header declares.
struct Fetched {
  explicit Fetched(const tblob::Allocator &a) : a_(a) {}
  ~Fetched() {
    for (int i = 0; i < n_; ++i) a_.free(p_[i], sz_[i]);
  }
  Fetched(const Fetched &) = delete;
  Fetched &operator=(const Fetched &) = delete;
  // Reads [offset, offset + len) of tensor i's stored bytes into new scratch.
  Status read(const tblob_model *m, uint64_t i, uint64_t offset, uint64_t len, const uint8_t **out, const Diag &d) {
    const tblob::TensorDesc &t = m->tensors[static_cast<size_t>(i)];
    size_t n;
    if (!tblob::to_size(len, &n))
      return d.fail(TBLOB_E_LIMIT_HEADER_BYTES, t.file_offset, static_cast<int64_t>(i),
                    "tensor %llu: %llu bytes do not fit in this platform's memory", static_cast<unsigned long long>(i),
                    static_cast<unsigned long long>(len));
    const size_t k = n ? n : 1;
    uint8_t *b = static_cast<uint8_t *>(a_.alloc(k));
    if (!b) return d.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    p_[n_] = b;
    sz_[n_++] = k;
    *out = b;
    return tblob::source_read(m->files[t.file_index].source, t.file_offset + offset, b, n, "tensor data", d);
  }
  // The same for bytes [at, at + len) of file 0 (an SLM1 tensor's scale array).
  Status read_file0(const tblob_model *m, uint64_t at, uint64_t len, const uint8_t **out, const Diag &d) {
    size_t n;
    if (!tblob::to_size(len, &n)) return d.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    uint8_t *b = static_cast<uint8_t *>(a_.alloc(n ? n : 1));
    if (!b) return d.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    p_[n_] = b;
    sz_[n_++] = n ? n : 1;
    *out = b;
    return tblob::source_read(m->files[0].source, at, b, n, "scales", d);
  }
  tblob::Allocator a_;
  uint8_t *p_[4] = {nullptr, nullptr, nullptr, nullptr};
  size_t sz_[4] = {0, 0, 0, 0};
  int n_ = 0;
};

// For checks only: q with a stand-in for each pointer a byte source left null (its bytes are
// read when decoding); never dereferenced.
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
    if (m->files[i].source.kind == tblob::Source::kCallback) return true;
  return false;
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

// What a model tensor decodes as.
struct TensorView {
  QuantDesc q;
  const QuantRecord *rec = nullptr;  // the record it belongs to (weight or companion)
  bool logical = false;              // it is the record's packed weight
  bool own_scheme = false;           // quantized by its container (SLM1 q8_0/q4_0), no record
  Status status = TBLOB_OK;          // resolution / dtype status before validation
  const char *note = nullptr;
  const uint64_t *shape = nullptr;   // logical shape
  uint32_t rank = 0;
};

void rows_cols(const uint64_t *shape, uint32_t rank, uint64_t *rows, uint64_t *cols, Status *st) {
  if (rank == 0) {
    *rows = *cols = 1;
    return;
  }
  uint64_t r = 1;
  for (uint32_t k = 0; k + 1 < rank; ++k)
    if (!tblob::checked_mul(r, shape[k], &r)) {
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
  const Status s = m->dequant_hooks->describe(m, index, &v->q, &shape, &rank);
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

Status view_of(const tblob_model *m, uint64_t index, TensorView *v) {
  if (m->dequant_hooks && m->dequant_hooks->describe) return own_view_of(m, index, v);
  const size_t i = static_cast<size_t>(index);
  const tblob::TensorDesc &t = m->tensors[i];
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
  q.special = tblob::kSpecialOcp;
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

const char *name_of(const tblob_model *m, uint64_t i, int *shown, const char **ell) {
  const tblob::TensorDesc &t = m->tensors[static_cast<size_t>(i)];
  *shown = tblob::clip_name(t.name_len, ell);
  if (*shown > 120) *shown = 120;
  return t.name;
}

// Reports a status for model tensor `index` with names and offsets.
Status fail_tensor(const Diag &d, const tblob_model *m, uint64_t index, const TensorView &v,
                   Status s, uint32_t out_dtype, uint64_t rb, uint64_t re, size_t dst_bytes) {
  int shown;
  const char *ell;
  const char *name = name_of(m, index, &shown, &ell);
  char detail[200];
  Field f = kFieldNone;
  if (v.note && s == v.status)
    std::snprintf(detail, sizeof(detail), "%s", v.note);
  else
    f = explain(s, v.q, out_dtype, rb, re, dst_bytes, detail, sizeof(detail));
  uint64_t comp = kNoTensor;
  const char *what = "";
  if (v.logical) {
    if (f == kFieldScale) comp = v.rec->scale, what = "scale";
    if (f == kFieldBias) comp = v.rec->bias, what = "bias";
    if (f == kFieldGlobal) comp = v.rec->global_scale, what = "global scale";
    if (f == kFieldNone && v.note && s == v.status) {  // a resolution-time status
      if (s == TBLOB_E_QUANT_BIAS_SIZE || s == TBLOB_E_QUANT_BIAS_DTYPE)
        comp = v.rec->bias, what = "bias";
      else if (s == TBLOB_E_QUANT_GLOBAL_SCALE)
        comp = v.rec->global_scale, what = "global scale";
      else if (s != TBLOB_E_QUANT_PACKING && s != TBLOB_E_SHAPE_OVERFLOW && s != TBLOB_E_RANGE)
        comp = v.rec->scale, what = "scale";
    }
  }
  const tblob::TensorDesc &t = m->tensors[static_cast<size_t>(index)];
  if (comp != kNoTensor) {
    int cs;
    const char *cell;
    const char *cname = name_of(m, comp, &cs, &cell);
    const tblob::TensorDesc &c = m->tensors[static_cast<size_t>(comp)];
    return d.fail(s, c.file_offset, static_cast<int64_t>(index),
                  "tensor \"%.*s%s\" (%s): %s tensor \"%.*s%s\" (file byte %llu): %s", shown, name,
                  ell, sname(static_cast<uint32_t>(v.q.scheme)), what, cs, cname, cell,
                  static_cast<unsigned long long>(c.file_offset), detail);
  }
  if (!v.logical && !v.own_scheme)  // a plain tensor: its dtype says it all
    return d.fail(s, t.file_offset, static_cast<int64_t>(index), "tensor \"%.*s%s\" (%s, file byte %llu): %s",
                  shown, name, ell, dtname(t.dtype), static_cast<unsigned long long>(t.file_offset), detail);
  return d.fail(s, t.file_offset, static_cast<int64_t>(index),
                "tensor \"%.*s%s\" (%s, stored %s, file byte %llu): %s", shown, name, ell,
                sname(static_cast<uint32_t>(v.q.scheme)), dtname(t.dtype),
                static_cast<unsigned long long>(t.file_offset), detail);
}

void desc_to_public(const QuantDesc &q, tblob_quant_desc *p) {
  p->scheme = static_cast<uint32_t>(q.scheme);
  p->bits = q.bits;
  p->group_size = q.group_size;
  p->scale_dtype = q.scale_dtype;
  p->bias_dtype = q.bias_dtype;
  p->special = q.special;
  p->global_scale_mode = static_cast<uint32_t>(q.global_scale_mode);
  p->rows = q.rows;
  p->cols = q.cols;
  p->data = q.data;
  p->data_bytes = q.data_bytes;
  p->scales = q.scales;
  p->scales_bytes = q.scales_bytes;
  p->biases = q.biases;
  p->biases_bytes = q.biases_bytes;
  p->global_scale = q.global_scale;
  p->global_scale_bytes = q.global_scale_bytes;
}

// ---- kernel choice (until lib/dequant/dispatch.h exists: the scalar set only) --------------
#ifndef TBLOB_HAVE_DISPATCH
bool known_isa(const char *n) {
  return std::strcmp(n, "avx2") == 0 || std::strcmp(n, "avx512") == 0 || std::strcmp(n, "neon") == 0;
}
#endif

}  // namespace

namespace tblob {

void tensor_info_quant_fields(const tblob_model *m, size_t index, tblob_tensor_info *info) {
  if (!m || !info || index >= m->tensors.size()) return;
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
  if (m->dequant_hooks && m->dequant_hooks->describe && own_view_of(m, index, &sv) == TBLOB_OK &&
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
  if (TBLOB_COVERS(info, logical_shape)) info->logical_shape = shape;
  if (TBLOB_COVERS(info, logical_elements)) info->logical_elements = elems;
  if (TBLOB_COVERS(info, logical_rank)) info->logical_rank = rank;
  if (TBLOB_COVERS(info, quant_scheme)) info->quant_scheme = scheme;
  if (TBLOB_COVERS(info, quant_flags))
    info->quant_flags = quantized ? TBLOB_TENSOR_QUANTIZED : r ? TBLOB_TENSOR_COMPANION : 0u;
}

}  // namespace tblob

extern "C" {

TBLOB_API const char *tblob_quant_scheme_name(uint32_t scheme) noexcept { return scheme_name(scheme); }

TBLOB_API tblob_status tblob_quant_dequantize(const tblob_quant_desc *desc, uint32_t out_dtype,
                                         uint64_t row_begin, uint64_t row_end, void *dst,
                                         size_t dst_bytes, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  QuantDesc q;
  if (!desc_from_public(desc, &q))
    return bad_arg(d, "desc is NULL or its struct_size is too small (use TBLOB_QUANT_DESC_INIT)");
  if (row_end == TBLOB_ALL_ROWS) row_end = q.rows;
  const Status s = run(q, out_dtype, row_begin, row_end, dst, dst_bytes);
  if (s == TBLOB_OK) return TBLOB_OK;
  char detail[200];
  const Field f = explain(s, q, out_dtype, row_begin, row_end, dst_bytes, detail, sizeof(detail));
  static const char *const kField[] = {"", "data: ", "scales: ", "biases: ", "global_scale: "};
  return d.fail(s, TBLOB_NO_OFFSET, -1, "quant descriptor (%s): %s%s",
                sname(static_cast<uint32_t>(q.scheme)), kField[f], detail);
}

TBLOB_API tblob_status tblob_tensor_dequantize(const tblob_model *model, uint64_t index,
                                        uint32_t out_dtype, uint64_t row_begin,
                                        uint64_t row_end, void *dst, size_t dst_bytes,
                                        tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::tensor_dequantize(model, index, out_dtype, row_begin, row_end, dst, dst_bytes, d);
}

}  // extern "C"

namespace tblob {

Status tensor_dequantize(const tblob_model *model, uint64_t index, uint32_t out_dtype,
                         uint64_t row_begin, uint64_t row_end, void *dst, size_t dst_bytes,
                         const Diag &d) {
  if (!model) return bad_arg(d, "model is required");
  if (index >= model->tensors.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%zu tensors)",
                  static_cast<unsigned long long>(index), model->tensors.size());
  if (model->dequant_hooks && model->dequant_hooks->decode)  // the format decodes its own
    return model->dequant_hooks->decode(model, index, out_dtype, row_begin, row_end, dst, dst_bytes, d);
  TensorView v;
  Status s = view_of(model, index, &v);
  if (row_end == TBLOB_ALL_ROWS) row_end = v.q.rows;
  if (s == TBLOB_OK && is_source_model(model)) {
    // Sizes, rows and the output buffer are checked before a byte is read.
    uint64_t need = 0;
    s = tblob::dequant_output_bytes(sized(v.q), out_dtype, row_begin, row_end, &need);
    if (s == TBLOB_OK && need > dst_bytes) s = TBLOB_E_BUFFER_TOO_SMALL;
    if (s != TBLOB_OK) return fail_tensor(d, model, index, v, s, out_dtype, row_begin, row_end, dst_bytes);
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
    if (s == TBLOB_OK && v.own_scheme && !q.scales && q.scales_bytes && model->dequant_hooks->scales_offset)
      s = f.read_file0(model, model->dequant_hooks->scales_offset(model, index), q.scales_bytes, &q.scales, d);
    if (s == TBLOB_OK && r && r->global_scale != kNoTensor && !q.global_scale)
      s = f.read(model, r->global_scale, 0, q.global_scale_bytes, &q.global_scale, d);
    if (sliced) {
      q.rows = keep;
      re -= rb;
      rb = 0;
    }
    if (s != TBLOB_OK) return s;  // a read status, with its message
    s = run(q, out_dtype, rb, re, dst, dst_bytes);
    if (s == TBLOB_OK) return TBLOB_OK;
    return fail_tensor(d, model, index, v, s, out_dtype, row_begin, row_end, dst_bytes);
  }
  if (s == TBLOB_OK) s = run(v.q, out_dtype, row_begin, row_end, dst, dst_bytes);
  if (s == TBLOB_OK) return TBLOB_OK;
  return fail_tensor(d, model, index, v, s, out_dtype, row_begin, row_end, dst_bytes);
}

Status tensor_dequant_size(const tblob_model *model, uint64_t index, uint32_t out_dtype,
                           uint64_t row_begin, uint64_t row_end, uint64_t *bytes, const Diag &d) {
  if (!model || !bytes) return bad_arg(d, "model and bytes are required");
  if (index >= model->tensors.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%zu tensors)",
                  static_cast<unsigned long long>(index), model->tensors.size());
  if (model->dequant_hooks && model->dequant_hooks->output_bytes)
    return model->dequant_hooks->output_bytes(model, index, out_dtype, row_begin, row_end, bytes, d);
  TensorView v;
  Status s = view_of(model, index, &v);
  if (row_end == TBLOB_ALL_ROWS) row_end = v.q.rows;
  if (s == TBLOB_OK) s = tblob::dequant_output_bytes(sized(v.q), out_dtype, row_begin, row_end, bytes);
  if (s == TBLOB_OK) return TBLOB_OK;
  return fail_tensor(d, model, index, v, s, out_dtype, row_begin, row_end, SIZE_MAX);
}

}  // namespace tblob

extern "C" {

TBLOB_API tblob_status tblob_tensor_dequant_size(const tblob_model *model, uint64_t index,
                                                 uint32_t out_dtype, uint64_t row_begin,
                                                 uint64_t row_end, uint64_t *bytes,
                                                 tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  return tblob::tensor_dequant_size(model, index, out_dtype, row_begin, row_end, bytes, d);
}

TBLOB_API tblob_status tblob_tensor_quant_info(const tblob_model *model, uint64_t index,
                                          tblob_quant_info *info, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !info) return bad_arg(d, "model and info are required");
  if (!TBLOB_COVERS(info, global_scale_index))
    return bad_arg(d, "info->struct_size too small (use TBLOB_QUANT_INFO_INIT)");
  if (index >= model->tensors.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%zu tensors)",
                  static_cast<unsigned long long>(index), model->tensors.size());
  TensorView v;
  Status s = view_of(model, index, &v);
  if (s == TBLOB_OK) s = tblob::validate_desc(sized(v.q));
  const QuantDesc &q = v.q;
  info->scheme = static_cast<uint32_t>(q.scheme);
  info->flags = (v.logical || v.own_scheme) ? TBLOB_TENSOR_QUANTIZED : v.rec ? TBLOB_TENSOR_COMPANION : 0u;
  info->source = v.logical      ? v.rec->source
                 : v.own_scheme ? static_cast<uint32_t>(TBLOB_QUANT_SOURCE_SLM1)  // only SLM1 rows carry their own
                                : static_cast<uint32_t>(TBLOB_QUANT_SOURCE_PLAIN);
  info->bits = tblob::quant_element_bits(q);
  info->group_size = q.group_size;
  info->scale_dtype = q.scale_dtype;
  info->bias_dtype = q.bias_dtype;
  info->special = q.special;
  info->global_scale_mode = static_cast<uint32_t>(q.global_scale_mode);
  info->shape = v.shape;
  info->rank = v.rank;
  info->status = s;
  info->rows = q.rows;
  info->cols = q.cols;
  auto idx = [](uint64_t t) { return t == kNoTensor ? int64_t{-1} : static_cast<int64_t>(t); };
  info->weight_index = v.rec ? idx(v.rec->tensor) : v.own_scheme ? static_cast<int64_t>(index) : -1;
  info->scale_index = v.rec ? idx(v.rec->scale) : -1;
  info->bias_index = v.rec ? idx(v.rec->bias) : -1;
  info->global_scale_index = v.rec ? idx(v.rec->global_scale) : -1;
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_tensor_quant_desc(const tblob_model *model, uint64_t index,
                                               tblob_quant_desc *desc, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!model || !desc) return bad_arg(d, "model and desc are required");
  if (!TBLOB_COVERS(desc, global_scale_bytes))
    return bad_arg(d, "desc->struct_size too small (use TBLOB_QUANT_DESC_INIT)");
  if (index >= model->tensors.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "tensor index %llu out of range (%zu tensors)",
                  static_cast<unsigned long long>(index), model->tensors.size());
  TensorView v;
  Status s = view_of(model, index, &v);
  desc_to_public(v.q, desc);  // a byte source's bytes not in memory: NULL pointers
  if (s == TBLOB_OK) s = tblob::validate_desc(sized(v.q));
  if (s == TBLOB_OK) return TBLOB_OK;
  return fail_tensor(d, model, index, v, s, TBLOB_DTYPE_F32, 0, v.q.rows, 0);
}

TBLOB_API tblob_status tblob_kernel_set(const char *name, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
#ifdef TBLOB_HAVE_DISPATCH
  const Status s = tblob::set_kernel(name ? name : "auto");
  if (s == TBLOB_OK) return TBLOB_OK;
  return d.fail(s, TBLOB_NO_OFFSET, -1, "kernel set \"%.40s\" is unknown, compiled out or not runnable on this host",
                name ? name : "auto");
#else
  if (!name || std::strcmp(name, "auto") == 0 || std::strcmp(name, "scalar") == 0) return TBLOB_OK;
  return d.fail(TBLOB_E_KERNEL_UNAVAILABLE, TBLOB_NO_OFFSET, -1,
                known_isa(name) ? "kernel set \"%.40s\" is not built into this library (only \"scalar\")"
                                : "unknown kernel set \"%.40s\" (scalar, avx2, avx512, neon)",
                name);
#endif
}

TBLOB_API const char *tblob_kernel_active(void) noexcept {
#ifdef TBLOB_HAVE_DISPATCH
  return tblob::active_kernel_name();
#else
  return "scalar";
#endif
}

}  // extern "C"
