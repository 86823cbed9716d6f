// Quantized companions: a packed weight plus its scale/bias/global-scale tensors become one
// logical tensor (a QuantRecord in tblob_model::quant), for the three layouts of
// docs/dequant.md. Nothing here fails the open except running out of memory: a companion set
// that does not make sense is recorded with the status dequantizing it will return.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "core/checked.h"
#include "dequant/quant_desc.h"
#include "formats/safetensors/safetensors.h"
#include "json/json_lex.h"
#include "json/json_walk.h"

namespace tblob {

namespace {

using json::Cursor;
using json::StringSlice;

// ---- config.json: the quantization block -----------------------------------------------------

// A "group_size" or "bits" entry: absent, an unsigned integer, or present with any other
// value (null, string, negative, fraction, beyond 64 bits), which is an error, never absent.
struct QuantParam {
  enum : uint8_t { kAbsent = 0, kNumber, kOther };
  uint8_t state;
  uint64_t value;
  const uint8_t *text;  // the value as written, for messages
  size_t text_len;
};

struct QuantOverride {
  StringSlice key;  // module path, e.g. "model.layers.0.mlp.down_proj"
  QuantParam group_size, bits;
  StringSlice mode;
  bool disabled;    // "path": false
};

struct QuantConfig {
  explicit QuantConfig(const Allocator *a) : overrides(a) {}
  bool present = false;       // a quantization / quantization_config object was found
  const char *block_name = "";  // which of the two
  QuantParam group_size = QuantParam(), bits = QuantParam();
  StringSlice mode;           // "affine", "mxfp4", ... (len 0: absent)
  uint64_t block[2] = {0, 0}; // weight_block_size
  uint32_t block_n = 0;
  PodVec<QuantOverride> overrides;
};

bool parse_u64(Cursor &c, uint64_t *v) {
  json::NumKind k;
  if (!json::scan_number(c, &k, v)) return false;
  if (k != json::NumKind::kUnsigned) *v = 0;
  return true;
}

bool parse_param(Cursor &c, uint32_t depth, uint32_t max_depth, QuantParam *p) {
  const uint8_t *start = c.p;
  const uint8_t ch = c.p < c.end ? *c.p : 0;
  bool ok;
  *p = QuantParam();
  if (ch == '-' || (ch >= '0' && ch <= '9')) {
    json::NumKind k;
    ok = json::scan_number(c, &k, &p->value);
    p->state = k == json::NumKind::kUnsigned ? QuantParam::kNumber : QuantParam::kOther;
  } else {
    ok = json::skip_value(c, depth, max_depth);
    p->state = QuantParam::kOther;
  }
  if (p->state != QuantParam::kNumber) p->value = 0;
  p->text = start;
  p->text_len = static_cast<size_t>(c.p - start);
  return ok;
}

bool parse_params(Cursor &c, uint32_t depth, uint32_t max_depth, QuantParam *group,
                  QuantParam *bits, StringSlice *mode, uint64_t *block, uint32_t *block_n,
                  QuantConfig *cfg, bool top) {
  return json::walk_object(c, depth, max_depth, [&](const StringSlice &k, Cursor &) -> bool {
    const uint32_t d = depth + 1;
    const uint8_t ch = c.p < c.end ? *c.p : 0;
    if (json::decoded_equals(k, "group_size", 10)) return parse_param(c, d, max_depth, group);
    if (json::decoded_equals(k, "bits", 4)) return parse_param(c, d, max_depth, bits);
    if (json::decoded_equals(k, "mode", 4) && ch == '"') return json::scan_string(c, mode);
    if (top && block && json::decoded_equals(k, "weight_block_size", 17) && ch == '[') {
      ++c.p;
      json::skip_ws(c);
      *block_n = 0;
      if (c.p < c.end && *c.p == ']') {
        ++c.p;
        return true;
      }
      for (;;) {
        uint64_t v = 0;
        if (!parse_u64(c, &v)) return false;
        if (*block_n < 2) block[*block_n] = v;
        ++*block_n;
        json::skip_ws(c);
        if (c.p < c.end && *c.p == ',') {
          ++c.p;
          json::skip_ws(c);
          continue;
        }
        if (c.p < c.end && *c.p == ']') {
          ++c.p;
          return true;
        }
        return c.fail(json::Err::kGrammar, c.p, "expected ',' or ']'");
      }
    }
    if (top && cfg && ch == '{') {  // per-module override (mlx-lm)
      QuantOverride o = QuantOverride();
      o.key = k;
      if (!parse_params(c, d, max_depth, &o.group_size, &o.bits, &o.mode, nullptr, nullptr,
                        nullptr, false))
        return false;
      return cfg->overrides.push(o) || c.fail(json::Err::kGrammar, c.p, "out of memory");
    }
    if (top && cfg && ch == 'f') {  // "module": false -> not quantized
      if (!json::scan_literal(c, "false", 5)) return false;
      QuantOverride o = QuantOverride();
      o.key = k;
      o.disabled = true;
      return cfg->overrides.push(o) || c.fail(json::Err::kGrammar, c.p, "out of memory");
    }
    return json::skip_value(c, d, max_depth);
  });
}

// The top-level object: "quantization" (mlx-lm) wins over "quantization_config" (HF, also
// written by mlx-lm); either may sit under "text_config" (multimodal configs).
bool parse_config(Cursor &c, uint32_t max_depth, QuantConfig *cfg, uint32_t depth, int *rank) {
  json::skip_ws(c);
  if (c.p >= c.end || *c.p != '{') return c.fail(json::Err::kGrammar, c.p, "not an object");
  return json::walk_object(c, depth, max_depth, [&](const StringSlice &k, Cursor &) -> bool {
    const uint32_t d = depth + 1;
    const bool is_q = json::decoded_equals(k, "quantization", 12);
    const bool is_qc = json::decoded_equals(k, "quantization_config", 19);
    const int r = is_q ? 3 : is_qc ? 2 : 0;  // top level beats text_config (rank - 1)
    const int r_here = depth == 0 ? r : r - 1 > 0 ? r - 1 : 0;
    if (r && c.p < c.end && *c.p == '{' && r_here > *rank) {
      // Reset and refill: the winning block replaces an earlier, weaker one.
      cfg->group_size = cfg->bits = QuantParam();
      cfg->block_name = is_q ? "quantization" : "quantization_config";
      cfg->mode = StringSlice();
      cfg->block_n = 0;
      while (cfg->overrides.size()) cfg->overrides.pop();
      *rank = r_here;
      cfg->present = true;
      return parse_params(c, d, max_depth, &cfg->group_size, &cfg->bits, &cfg->mode, cfg->block,
                          &cfg->block_n, cfg, true);
    }
    if (depth == 0 && json::decoded_equals(k, "text_config", 11) && c.p < c.end && *c.p == '{')
      return parse_config(c, max_depth, cfg, d, rank);
    return json::skip_value(c, d, max_depth);
  });
}

// ---- the resolver --------------------------------------------------------------------------

struct QuantType {
  QuantScheme scheme = QuantScheme::kInvalid;
  uint32_t bits = 0;
  uint32_t group = 0;  // 0: not implied by the type name
};

bool ieq(const char *a, size_t n, const char *lit) {
  const size_t m = std::strlen(lit);
  if (n != m) return false;
  for (size_t i = 0; i < n; ++i) {
    char x = a[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (x != lit[i]) return false;
  }
  return true;
}

// Ollama quant_type values (current and legacy), mlx-lm modes. Unknown: kInvalid.
QuantType parse_type(const char *s, size_t n) {
  QuantType t;
  if (ieq(s, n, "nvfp4")) return {QuantScheme::kNvfp4, 4, 16};
  if (ieq(s, n, "mxfp4")) return {QuantScheme::kMxfp4, 4, 32};
  if (ieq(s, n, "mxfp8")) return {QuantScheme::kMxfp8, 8, 32};
  if (ieq(s, n, "q4")) return {QuantScheme::kMlxAffine, 4, 32};  // legacy (early 2026)
  if (ieq(s, n, "q8")) return {QuantScheme::kMlxAffine, 8, 64};
  if (ieq(s, n, "affine")) return {QuantScheme::kMlxAffine, 0, 0};
  if (n == 4 && (s[0] == 'i' || s[0] == 'I') && (s[1] == 'n' || s[1] == 'N') &&
      (s[2] == 't' || s[2] == 'T') && s[3] >= '1' && s[3] <= '8' && s[3] != '7')
    return {QuantScheme::kMlxAffine, static_cast<uint32_t>(s[3] - '0'), 0};
  return t;
}

bool parse_dec(const char *s, size_t n, uint64_t *v) {
  if (n == 0 || n > 19) return false;
  uint64_t x = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    x = x * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  *v = x;
  return true;
}

bool is_float_scale(uint32_t dt) {
  return dt == TBLOB_DTYPE_F32 || dt == TBLOB_DTYPE_F16 || dt == TBLOB_DTYPE_BF16;
}

class Resolver {
 public:
  Resolver(tblob_model *m, const CompanionOptions &o, const Diag &diag)
      : m_(m), o_(o), diag_(diag), name_(&m->alloc), cfg_(&m->alloc) {}
  ~Resolver() {
    if (cfg_src_.kind != Source::kNone) source_close(&cfg_src_, m_->alloc);
  }

  Status run();

 private:
  // Row of `base` + `suffix`, kNoTensor if absent.
  uint64_t find_with(const char *base, size_t n, const char *suffix);
  bool meta(uint32_t file, const char *key, size_t key_len, const char **v, size_t *vn);
  bool meta_suffixed(uint32_t file, const char *base, size_t n, const char *suffix,
                     const char **v, size_t *vn);
  Status add(QuantRecord &r);
  const QuantConfig &config();
  bool claimable(uint64_t i) const { return i != kNoTensor && (!m_->quant_of || !m_->quant_of[i]); }

  void ollama(uint64_t i);
  void mlx_community(uint64_t i, uint64_t scale, const char *base, size_t base_len);
  void block_fp8(uint64_t i, uint64_t scale);
  // Shared by the U32 layouts: logical shape and rows/cols from the packed shape and bits.
  void finish_packed(QuantRecord &r);
  bool consistent(const QuantType &t, uint64_t packed_cols, uint64_t scale_cols,
                  uint32_t scale_dtype) const;
  QuantType infer(uint64_t packed_cols, uint64_t scale_cols, uint32_t scale_dtype,
                  const char *hint, size_t hint_len) const;
  void check_companion_shapes(QuantRecord &r);
  // Formats a resolution note into the model's arena (it lives as long as the model); a
  // static fallback when that fails.
  const char *note(const char *fallback, const char *fmt, ...);

  tblob_model *m_;
  const CompanionOptions &o_;
  const Diag &diag_;
  PodVec<char> name_;
  QuantConfig cfg_;
  bool cfg_loaded_ = false;
  Source cfg_src_;
  Status oom_ = TBLOB_OK;
};

// Printable ASCII of a key or value for a message, clipped; other bytes become '?'.
void clip_text(const void *src, size_t n, char *out, size_t cap) {
  const unsigned char *p = static_cast<const unsigned char *>(src);
  const size_t keep = n < cap - 1 ? n : cap - 4;
  size_t o = 0;
  for (size_t i = 0; i < keep; ++i) out[o++] = p[i] >= 0x20 && p[i] < 0x7F ? static_cast<char>(p[i]) : '?';
  if (keep < n)
    for (int i = 0; i < 3; ++i) out[o++] = '.';
  out[o] = '\0';
}

const char *Resolver::note(const char *fallback, const char *fmt, ...) {
  char buf[200];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n < 0) return fallback;
  const size_t len = static_cast<size_t>(n) < sizeof(buf) ? static_cast<size_t>(n) : sizeof(buf) - 1;
  char *text = static_cast<char *>(m_->arena.alloc(len + 1));
  if (!text) return fallback;
  std::memcpy(text, buf, len);
  text[len] = '\0';
  return text;
}

uint64_t Resolver::find_with(const char *base, size_t n, const char *suffix) {
  const size_t k = std::strlen(suffix);
  if (n > SIZE_MAX - k || !name_.reserve(n + k)) {
    oom_ = TBLOB_E_OUT_OF_MEMORY;
    return kNoTensor;
  }
  while (name_.size()) name_.pop();
  for (size_t i = 0; i < n; ++i) name_.push(base[i]);
  for (size_t i = 0; i < k; ++i) name_.push(suffix[i]);
  const size_t pos = m_->tensor_index.find(name_.data(), name_.size());
  return pos == SIZE_MAX ? kNoTensor : static_cast<uint64_t>(pos);
}

bool Resolver::meta(uint32_t file, const char *key, size_t key_len, const char **v, size_t *vn) {
  if (o_.per_file_metadata && file < m_->files.size()) {
    const FileDesc &f = m_->files[file];
    for (size_t i = f.metadata_begin; i < f.metadata_end && i < m_->metadata.size(); ++i) {
      const MetaDesc &d = m_->metadata[i];
      if (d.name_len == key_len && std::memcmp(d.name, key, key_len) == 0) {
        *v = d.value;
        *vn = d.value_len;
        return true;
      }
    }
    return false;
  }
  const size_t pos = m_->metadata_index.find(key, key_len);
  if (pos == SIZE_MAX) return false;
  *v = m_->metadata[pos].value;
  *vn = m_->metadata[pos].value_len;
  return true;
}

bool Resolver::meta_suffixed(uint32_t file, const char *base, size_t n, const char *suffix,
                             const char **v, size_t *vn) {
  const size_t k = std::strlen(suffix);
  if (n > SIZE_MAX - k || !name_.reserve(n + k)) {
    oom_ = TBLOB_E_OUT_OF_MEMORY;
    return false;
  }
  while (name_.size()) name_.pop();
  for (size_t i = 0; i < n; ++i) name_.push(base[i]);
  for (size_t i = 0; i < k; ++i) name_.push(suffix[i]);
  return meta(file, name_.data(), name_.size(), v, vn);
}

const QuantConfig &Resolver::config() {
  if (cfg_loaded_) return cfg_;
  cfg_loaded_ = true;
  const uint8_t *p = o_.config_json;
  size_t n = o_.config_json_len;
  if (!p && o_.config_dir) {
    const size_t dn = std::strlen(o_.config_dir);
    static const char kName[] = "/config.json";
    char *path = static_cast<char *>(m_->alloc.alloc(dn + sizeof(kName)));
    if (!path) {
      oom_ = TBLOB_E_OUT_OF_MEMORY;
      return cfg_;
    }
    std::memcpy(path, o_.config_dir, dn);
    std::memcpy(path + dn, kName, sizeof(kName));
    // A missing, unreadable or oversized config is not an error of this container.
    Diag quiet;
    if (source_read_bounded(path, kMaxConfigJsonBytes, TBLOB_E_IO, m_->alloc, &cfg_src_, quiet) == TBLOB_OK) {
      p = cfg_src_.data;
      n = cfg_src_.len;
    }
    m_->alloc.free(path, dn + sizeof(kName));
  }
  if (!p && o_.config_parent) {
    // A missing or unreadable sibling is not an error of this container either.
    Diag quiet;
    if (source_open_sibling(*o_.config_parent, "config.json", 11, m_->alloc, &cfg_src_, quiet) == TBLOB_OK &&
        source_read_whole(&cfg_src_, kMaxConfigJsonBytes, TBLOB_E_IO, m_->alloc, "config.json", quiet) == TBLOB_OK) {
      p = cfg_src_.data;
      n = cfg_src_.len;
    }
  }
  if (!p || n == 0 || n > kMaxConfigJsonBytes) return cfg_;
  Cursor c{p, p, p + n};
  int rank = 0;
  if (!parse_config(c, o_.max_json_depth, &cfg_, 0, &rank)) {
    // Not valid JSON (or OOM while listing overrides): behave as if there were none.
    cfg_.present = false;
    cfg_.block_n = 0;
    while (cfg_.overrides.size()) cfg_.overrides.pop();
  }
  return cfg_;
}

Status Resolver::add(QuantRecord &r) {
  const size_t n = m_->tensors.size();
  if (!m_->quant_of) {
    uint64_t bytes;
    size_t sz;
    if (!checked_mul(n, sizeof(uint32_t), &bytes) || !to_size(bytes, &sz)) return TBLOB_E_OUT_OF_MEMORY;
    m_->quant_of = static_cast<uint32_t *>(m_->arena.alloc(sz ? sz : 1));
    if (!m_->quant_of) return TBLOB_E_OUT_OF_MEMORY;
    std::memset(m_->quant_of, 0, sz);
  }
  if (m_->quant.size() >= UINT32_MAX - 1 || !m_->quant.push(r)) return TBLOB_E_OUT_OF_MEMORY;
  const uint32_t id = static_cast<uint32_t>(m_->quant.size());  // 1 + record index
  m_->quant_of[r.tensor] = id;
  if (r.scale != kNoTensor) m_->quant_of[r.scale] = id;
  if (r.bias != kNoTensor) m_->quant_of[r.bias] = id;
  if (r.global_scale != kNoTensor) m_->quant_of[r.global_scale] = id;
  return TBLOB_OK;
}

QuantRecord blank(uint64_t i) {
  QuantRecord r;
  std::memset(&r, 0, sizeof(r));
  r.tensor = i;
  r.scale = r.bias = r.global_scale = kNoTensor;
  r.status = TBLOB_OK;
  return r;
}

bool Resolver::consistent(const QuantType &t, uint64_t packed_cols, uint64_t scale_cols,
                          uint32_t scale_dtype) const {
  if (t.scheme == QuantScheme::kInvalid || t.bits == 0 || t.group == 0) return false;
  const bool fp = t.scheme != QuantScheme::kMlxAffine;
  if (fp ? !(scale_dtype == TBLOB_DTYPE_U8 || scale_dtype == TBLOB_DTYPE_F8_E8M0 ||
             scale_dtype == TBLOB_DTYPE_F8_E4M3)
         : !is_float_scale(scale_dtype))
    return false;
  uint64_t bits;
  if (!checked_mul(packed_cols, 32, &bits) || bits % t.bits) return false;
  const uint64_t cols = bits / t.bits;
  return cols % t.group == 0 && cols / t.group == scale_cols;
}

// Ollama's shape inference (x/mlxrunner/model/quant.go), extended to the fp modes by the
// U8 scale dtype: g4 = packed_cols*8/scale_cols, g8 = packed_cols*4/scale_cols.
QuantType Resolver::infer(uint64_t packed_cols, uint64_t scale_cols, uint32_t scale_dtype,
                          const char *hint, size_t hint_len) const {
  QuantType t;
  if (scale_cols == 0 || packed_cols > UINT64_MAX / 8) return t;
  const uint64_t g4 = packed_cols * 8 % scale_cols ? 0 : packed_cols * 8 / scale_cols;
  const uint64_t g8 = packed_cols * 4 % scale_cols ? 0 : packed_cols * 4 / scale_cols;
  if (!is_float_scale(scale_dtype)) {  // U8 (or F8_*) scales: fp modes
    if (scale_dtype != TBLOB_DTYPE_U8 && scale_dtype != TBLOB_DTYPE_F8_E8M0 &&
        scale_dtype != TBLOB_DTYPE_F8_E4M3)
      return t;
    if (g4 == 16) return {QuantScheme::kNvfp4, 4, 16};
    if (g4 == 32) return {QuantScheme::kMxfp4, 4, 32};
    if (g8 == 32) return {QuantScheme::kMxfp8, 8, 32};
    return t;
  }
  auto usual = [](uint64_t g) { return g == 16 || g == 32 || g == 64 || g == 128; };
  if (g4 == 32) return {QuantScheme::kMlxAffine, 4, 32};
  if (g8 == 64) return {QuantScheme::kMlxAffine, 8, 64};
  if (g4 == 64 && g8 == 32) {
    bool has8 = false;
    for (size_t i = 0; i < hint_len; ++i) has8 = has8 || hint[i] == '8';
    // Ollama decides by the hint; without one MLX's default (4 bits, group 64) wins.
    return has8 ? QuantType{QuantScheme::kMlxAffine, 8, 32} : QuantType{QuantScheme::kMlxAffine, 4, 64};
  }
  if (usual(g4) && !usual(g8)) return {QuantScheme::kMlxAffine, 4, static_cast<uint32_t>(g4)};
  if (usual(g8) && !usual(g4)) return {QuantScheme::kMlxAffine, 8, static_cast<uint32_t>(g8)};
  return t;
}

void Resolver::finish_packed(QuantRecord &r) {
  const TensorDesc &w = m_->tensors[r.tensor];
  r.rank = w.rank;
  r.shape = w.shape;
  if (w.rank == 0) {
    r.rows = r.cols = 1;
    if (r.status == TBLOB_OK) {
      r.status = TBLOB_E_QUANT_PACKING;
      r.note = "a packed weight needs at least one dimension";
    }
    return;
  }
  uint64_t *dims = static_cast<uint64_t *>(m_->arena.alloc(sizeof(uint64_t) * w.rank));
  if (!dims) {
    oom_ = TBLOB_E_OUT_OF_MEMORY;
    return;
  }
  std::memcpy(dims, w.shape, sizeof(uint64_t) * w.rank);
  uint64_t bits = 0;
  if (r.bits && checked_mul(dims[w.rank - 1], 32, &bits) && bits % r.bits == 0)
    dims[w.rank - 1] = bits / r.bits;
  else if (r.status == TBLOB_OK && r.bits) {
    r.status = TBLOB_E_QUANT_PACKING;
    r.note = "the packed row length times 32 is not a multiple of the bit width";
  }
  r.shape = dims;
  uint64_t rows = 1;
  for (uint32_t k = 0; k + 1 < w.rank; ++k)
    if (!checked_mul(rows, dims[k], &rows)) {
      rows = 0;
      if (r.status == TBLOB_OK) r.status = TBLOB_E_SHAPE_OVERFLOW;
    }
  r.rows = rows;
  r.cols = dims[w.rank - 1];
}

// MLX's rule: scales (and biases) have the weight's leading dims and one entry per group.
// Byte lengths are checked again by the descriptor validation; this catches shapes whose
// byte count happens to match (e.g. [2, 8] scales for a [4, ...] weight).
void Resolver::check_companion_shapes(QuantRecord &r) {
  if (r.status != TBLOB_OK) return;
  const TensorDesc &w = m_->tensors[r.tensor];
  const uint64_t comp[2] = {r.scale, r.bias};
  for (int k = 0; k < 2; ++k) {
    if (comp[k] == kNoTensor) continue;
    const TensorDesc &s = m_->tensors[comp[k]];
    bool ok = s.rank == w.rank;
    for (uint32_t d = 0; ok && d + 1 < w.rank; ++d) ok = s.shape[d] == w.shape[d];
    if (!ok) {
      r.status = k == 0 ? TBLOB_E_QUANT_SCALE_SIZE : TBLOB_E_QUANT_BIAS_SIZE;
      r.note = k == 0 ? "the scale tensor's leading dimensions differ from the weight's"
                      : "the bias tensor's leading dimensions differ from the weight's";
      return;
    }
  }
}

// Ollama combined blob: N (U32) + N.scale [+ N.bias] [+ N.global_scale], or the runner's
// N_scale / N_qbias names.
void Resolver::ollama(uint64_t i) {
  const TensorDesc &w = m_->tensors[i];
  uint64_t scale = find_with(w.name, w.name_len, ".scale");
  if (!claimable(scale)) scale = find_with(w.name, w.name_len, "_scale");
  if (!claimable(scale) || scale == i) return;
  QuantRecord r = blank(i);
  r.source = TBLOB_QUANT_SOURCE_OLLAMA;
  r.special = kSpecialMlx;
  r.scale = scale;
  uint64_t bias = find_with(w.name, w.name_len, ".bias");
  if (!claimable(bias) || bias == scale) bias = find_with(w.name, w.name_len, "_qbias");
  if (claimable(bias) && bias != scale && bias != i) r.bias = bias;
  const uint64_t gs = find_with(w.name, w.name_len, ".global_scale");
  if (claimable(gs) && gs != scale && gs != r.bias && gs != i) r.global_scale = gs;

  const TensorDesc &s = m_->tensors[scale];
  const uint64_t packed_cols = w.rank ? w.shape[w.rank - 1] : 0;
  const uint64_t scale_cols = s.rank ? s.shape[s.rank - 1] : 0;

  // Parameters: per-tensor metadata, then the blob's global pair, then shapes. A key that is
  // present with a value that is not a known type or a positive 32-bit group size is an
  // error of this tensor: the shapes never stand in for it.
  const char *qt = nullptr, *gs_text = nullptr;
  size_t qt_n = 0, gs_n = 0;
  const bool qt_local = meta_suffixed(w.file_index, w.name, w.name_len, ".quant_type", &qt, &qt_n);
  const bool gs_local = meta_suffixed(w.file_index, w.name, w.name_len, ".group_size", &gs_text, &gs_n);
  const bool per_tensor = qt_local || gs_local;
  if (!qt) meta(w.file_index, "quant_type", 10, &qt, &qt_n);
  if (!gs_text) meta(w.file_index, "group_size", 10, &gs_text, &gs_n);
  QuantType t = qt ? parse_type(qt, qt_n) : QuantType();
  char key[72], val[40];
  if (qt && t.scheme == QuantScheme::kInvalid) {
    clip_text(w.name, w.name_len, key, sizeof(key) - 12);
    clip_text(qt, qt_n, val, sizeof(val));
    r.status = TBLOB_E_QUANT_SCHEME;
    r.note = note("__metadata__ quant_type is not a known quantization type",
                  "__metadata__ \"%s%s\" = \"%s\" is not a known quantization type or width",
                  qt_local ? key : "", qt_local ? ".quant_type" : "quant_type", val);
  }
  uint64_t g = 0;
  if (r.status == TBLOB_OK && gs_text) {
    if (parse_dec(gs_text, gs_n, &g) && g != 0 && g <= UINT32_MAX) {
      t.group = static_cast<uint32_t>(g);
    } else {
      clip_text(w.name, w.name_len, key, sizeof(key) - 12);
      clip_text(gs_text, gs_n, val, sizeof(val));
      r.status = TBLOB_E_QUANT_GROUP_SIZE;
      r.note = note("__metadata__ group_size is not a positive 32-bit decimal number",
                    "__metadata__ \"%s%s\" = \"%s\" is not a positive 32-bit decimal group size",
                    gs_local ? key : "", gs_local ? ".group_size" : "group_size", val);
    }
  }
  if (r.status == TBLOB_OK) {
    if (t.scheme == QuantScheme::kMlxAffine && t.bits != 0 && t.group == 0 && scale_cols) {
      // "intN" without a group size: the one the shapes give.
      uint64_t b;
      if (checked_mul(packed_cols, 32, &b) && b % t.bits == 0 && (b / t.bits) % scale_cols == 0)
        t.group = static_cast<uint32_t>((b / t.bits) / scale_cols);
    }
    const bool complete = t.scheme != QuantScheme::kInvalid && t.bits != 0 && t.group != 0;
    if (!complete || (!per_tensor && !consistent(t, packed_cols, scale_cols, s.dtype))) {
      // Missing metadata, or a blob-wide pair these shapes contradict (Ollama then prefers
      // the shapes too): infer.
      const QuantType inf = infer(packed_cols, scale_cols, s.dtype, qt, qt_n);
      if (inf.scheme != QuantScheme::kInvalid) {
        t = inf;
      } else if (!complete) {
        r.status = TBLOB_E_QUANT_SCHEME;
        r.note = qt ? "__metadata__ quant_type gives no group size and the shapes fit no known type"
                    : "no quant_type/group_size in __metadata__ and the shapes fit no known type";
      }
    }
  }
  if (t.scheme == QuantScheme::kInvalid) t.scheme = QuantScheme::kMlxAffine;  // for the record
  r.scheme = static_cast<uint32_t>(t.scheme);
  r.bits = t.bits;
  r.group_size = t.group;
  if (t.scheme == QuantScheme::kMlxAffine) {
    r.scale_dtype = s.dtype;
    r.bias_dtype = r.bias != kNoTensor ? m_->tensors[r.bias].dtype : 0;
  } else {
    // MLX stores E8M0 / E4M3 scales as U8: the scheme names the encoding.
    const uint32_t enc = t.scheme == QuantScheme::kNvfp4 ? TBLOB_DTYPE_F8_E4M3 : TBLOB_DTYPE_F8_E8M0;
    r.scale_dtype = (s.dtype == TBLOB_DTYPE_U8 || s.dtype == enc) ? enc : s.dtype;
    r.bias_dtype = r.bias != kNoTensor ? m_->tensors[r.bias].dtype : 0;
  }
  if (r.global_scale != kNoTensor) {
    r.global_scale_mode = static_cast<uint32_t>(GlobalScaleMode::kMultiplier);
    const TensorDesc &gt = m_->tensors[r.global_scale];
    if (r.status == TBLOB_OK && (gt.dtype != TBLOB_DTYPE_F32 || gt.elements != 1)) {
      r.status = TBLOB_E_QUANT_GLOBAL_SCALE;
      r.note = "the global scale tensor is not a single F32 value";
    }
  }
  finish_packed(r);
  check_companion_shapes(r);
  if (oom_ == TBLOB_OK) oom_ = add(r);
}

// mlx-community: X.weight (U32) + X.scales [+ X.biases], parameters from config.json.
void Resolver::mlx_community(uint64_t i, uint64_t scale, const char *base, size_t base_len) {
  const TensorDesc &w = m_->tensors[i];
  QuantRecord r = blank(i);
  r.source = TBLOB_QUANT_SOURCE_MLX_COMMUNITY;
  r.special = kSpecialMlx;
  r.scale = scale;
  const uint64_t bias = find_with(base, base_len, ".biases");
  if (claimable(bias) && bias != i && bias != scale) r.bias = bias;
  const TensorDesc &s = m_->tensors[scale];
  const uint64_t packed_cols = w.rank ? w.shape[w.rank - 1] : 0;
  const uint64_t scale_cols = s.rank ? s.shape[s.rank - 1] : 0;

  const QuantConfig &cfg = config();
  QuantType t;
  bool from_config = false;
  if (cfg.present) {
    QuantParam g = cfg.group_size, b = cfg.bits;
    bool g_module = false, b_module = false;
    StringSlice mode = cfg.mode;
    for (size_t k = 0; k < cfg.overrides.size(); ++k) {
      const QuantOverride &o = cfg.overrides[k];
      if (json::decoded_equals(o.key, base, base_len)) {
        if (!o.disabled) {
          if (o.group_size.state != QuantParam::kAbsent) g = o.group_size, g_module = true;
          if (o.bits.state != QuantParam::kAbsent) b = o.bits, b_module = true;
          if (o.mode.len) mode = o.mode;
        }
        break;
      }
    }
    char mbuf[16];
    const size_t mn = mode.len ? json::decode_into(mode, mbuf, sizeof(mbuf)) : 0;
    QuantType named;  // the scheme the mode names (affine when absent)
    if (mn == 0 || (mn <= sizeof(mbuf) && ieq(mbuf, mn, "affine")))
      named = {QuantScheme::kMlxAffine, 0, 0};
    else if (mn <= sizeof(mbuf))
      named = parse_type(mbuf, mn);
    // A present value must be valid: bits a width the scheme has, group size in 1..2^32-1.
    const bool b_bad = b.state == QuantParam::kOther ||
                       (b.state == QuantParam::kNumber &&
                        (b.value == 0 || b.value > 8 || b.value == 7 ||
                         (named.scheme != QuantScheme::kInvalid && named.scheme != QuantScheme::kMlxAffine &&
                          b.value != named.bits)));
    const bool g_bad = g.state == QuantParam::kOther ||
                       (g.state == QuantParam::kNumber && (g.value == 0 || g.value > UINT32_MAX));
    char path[96], val[40];
    if (named.scheme == QuantScheme::kInvalid) {
      clip_text(mbuf, mn <= sizeof(mbuf) ? mn : sizeof(mbuf), val, sizeof(val));
      r.status = TBLOB_E_QUANT_SCHEME;
      r.note = note("config.json quantization mode is not a known mode",
                    "config.json %s mode \"%s%s\" is not a known mode", cfg.block_name, val,
                    mn > sizeof(mbuf) ? "..." : "");
    } else if (b_bad || g_bad) {
      const QuantParam &p = b_bad ? b : g;
      const bool module = b_bad ? b_module : g_module;
      clip_text(base, base_len, path, sizeof(path));
      clip_text(p.text, p.text_len, val, sizeof(val));
      r.status = b_bad ? TBLOB_E_QUANT_SCHEME : TBLOB_E_QUANT_GROUP_SIZE;
      r.note = note(b_bad ? "config.json quantization bits is not a supported width"
                          : "config.json quantization group_size is not a positive 32-bit integer",
                    "config.json %s.%s%s%s = %s is not %s", cfg.block_name, module ? path : "",
                    module ? "." : "", b_bad ? "bits" : "group_size", val,
                    b_bad ? "a bit width this scheme has" : "a group size in 1..4294967295");
    } else if (g.state == QuantParam::kNumber && b.state == QuantParam::kNumber) {
      t = {named.scheme, static_cast<uint32_t>(b.value), static_cast<uint32_t>(g.value)};
      from_config = true;
    }
  }
  if (!from_config && r.status == TBLOB_OK) {
    t = infer(packed_cols, scale_cols, s.dtype, nullptr, 0);
    if (t.scheme == QuantScheme::kInvalid) {
      r.status = TBLOB_E_QUANT_SCHEME;
      r.note = "no quantization block in config.json and the shapes fit no known type";
      t.scheme = QuantScheme::kMlxAffine;
    }
  }
  if (t.scheme == QuantScheme::kInvalid) t.scheme = QuantScheme::kMlxAffine;
  r.scheme = static_cast<uint32_t>(t.scheme);
  r.bits = t.bits;
  r.group_size = t.group;
  if (t.scheme == QuantScheme::kMlxAffine) {
    r.scale_dtype = s.dtype;
  } else {
    const uint32_t enc = t.scheme == QuantScheme::kNvfp4 ? TBLOB_DTYPE_F8_E4M3 : TBLOB_DTYPE_F8_E8M0;
    r.scale_dtype = (s.dtype == TBLOB_DTYPE_U8 || s.dtype == enc) ? enc : s.dtype;
  }
  r.bias_dtype = r.bias != kNoTensor ? m_->tensors[r.bias].dtype : 0;
  finish_packed(r);
  check_companion_shapes(r);
  if (oom_ == TBLOB_OK) oom_ = add(r);
}

// Hugging Face block FP8: X.weight (F8_E4M3) + X.weight_scale_inv, square blocks.
void Resolver::block_fp8(uint64_t i, uint64_t scale) {
  const TensorDesc &w = m_->tensors[i];
  const TensorDesc &s = m_->tensors[scale];
  QuantRecord r = blank(i);
  r.source = TBLOB_QUANT_SOURCE_HF_BLOCK_FP8;
  r.special = kSpecialOcp;
  r.scale = scale;
  r.scheme = static_cast<uint32_t>(QuantScheme::kBlockFp8);
  r.bits = 8;
  r.scale_dtype = s.dtype;
  r.rank = w.rank;
  r.shape = w.shape;
  uint64_t g = 128;
  const QuantConfig &cfg = config();
  if (cfg.present && cfg.block_n) {
    if (cfg.block_n != 2 || cfg.block[0] != cfg.block[1] || cfg.block[0] == 0 ||
        cfg.block[0] > UINT32_MAX) {
      r.status = TBLOB_E_QUANT_GROUP_SIZE;
      r.note = "config.json weight_block_size is not two equal non-zero sizes (square blocks)";
    } else {
      g = cfg.block[0];
    }
  }
  r.group_size = static_cast<uint32_t>(g);
  // Rows fold the leading axes; blocks run over the last two, so a 3-D weight folds only
  // when its middle dimension is whole blocks.
  if (w.rank < 2) {
    r.rows = 1;
    r.cols = w.rank ? w.shape[0] : 1;
    if (r.status == TBLOB_OK) {
      r.status = TBLOB_E_UNSUPPORTED;
      r.note = "a block-FP8 weight must have at least two dimensions";
    }
  } else {
    uint64_t rows = 1;
    for (uint32_t k = 0; k + 1 < w.rank; ++k)
      if (!checked_mul(rows, w.shape[k], &rows) && r.status == TBLOB_OK) r.status = TBLOB_E_SHAPE_OVERFLOW;
    r.rows = rows;
    r.cols = w.shape[w.rank - 1];
    bool ok = s.rank == w.rank;
    for (uint32_t k = 0; ok && k + 2 < w.rank; ++k) ok = s.shape[k] == w.shape[k];
    if (ok && w.rank > 2 && w.shape[w.rank - 2] % g != 0) {
      if (r.status == TBLOB_OK) {
        r.status = TBLOB_E_UNSUPPORTED;
        r.note = "a stacked block-FP8 weight whose rows are not whole blocks";
      }
    } else if (!ok || s.shape[s.rank - 2] != ceil_div(w.shape[w.rank - 2], g) ||
               s.shape[s.rank - 1] != ceil_div(w.shape[w.rank - 1], g)) {
      if (r.status == TBLOB_OK) {
        r.status = TBLOB_E_QUANT_SCALE_SIZE;
        r.note = "weight_scale_inv is not one scale per block of the weight";
      }
    }
  }
  if (oom_ == TBLOB_OK) oom_ = add(r);
}

Status Resolver::run() {
  const size_t n = m_->tensors.size();
  static const char kWeight[] = ".weight";
  const size_t kw = sizeof(kWeight) - 1;
  for (size_t i = 0; i < n && oom_ == TBLOB_OK; ++i) {
    if (m_->quant_of && m_->quant_of[i]) continue;  // already someone's companion
    const TensorDesc &w = m_->tensors[i];
    if (w.dtype == TBLOB_DTYPE_U32) {
      const size_t before = m_->quant.size();
      ollama(i);
      if (m_->quant.size() != before || oom_ != TBLOB_OK) continue;
      if (w.name_len > kw && std::memcmp(w.name + w.name_len - kw, kWeight, kw) == 0) {
        const uint64_t sc = find_with(w.name, w.name_len - kw, ".scales");
        if (claimable(sc) && sc != i) mlx_community(i, sc, w.name, w.name_len - kw);
      }
    } else if (w.dtype == TBLOB_DTYPE_F8_E4M3) {
      const uint64_t sc = find_with(w.name, w.name_len, "_scale_inv");
      if (claimable(sc) && sc != i) block_fp8(i, sc);
    }
  }
  if (oom_ != TBLOB_OK)
    return diag_.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1,
                      "out of memory resolving quantized companions");
  return TBLOB_OK;
}

}  // namespace

Status st_resolve_companions(tblob_model *m, const CompanionOptions &options, const Diag &diag) {
  if (m->tensors.size() == 0) return TBLOB_OK;
  // Only U32 (packed) and F8_E4M3 weights start a record: a table known to hold neither has
  // nothing to resolve (reading its rows was a twentieth of opening 20,000 plain tensors).
  constexpr uint64_t kStarts = uint64_t{1} << TBLOB_DTYPE_U32 | uint64_t{1} << TBLOB_DTYPE_F8_E4M3;
  bool maybe = false;
  for (size_t f = 0; f < m->files.size(); ++f)
    maybe = maybe || !m->files[f].dtypes_known || (m->files[f].dtypes & kStarts) != 0;
  if (!maybe) return TBLOB_OK;
  Resolver r(m, options, diag);
  return r.run();
}

Status st_resolve_companions_beside(tblob_model *m, const Limits &limits, const Diag &diag) {
  CompanionOptions o;
  o.max_json_depth = limits.max_json_depth;
  char *dir = nullptr;
  size_t dir_bytes = 0;
  if (m->files.size() && m->files[0].source.kind == Source::kCallback) {
    o.config_parent = &m->files[0].source;  // config.json is its sibling, not a local file
  } else if (m->files.size() && m->files[0].path && m->files[0].path_len) {
    const FileDesc &f = m->files[0];
    size_t cut = f.path_len;
    while (cut > 0 && f.path[cut - 1] != '/') --cut;
    // "model.safetensors" -> "."; "/x.safetensors" -> "" (+ "/config.json" = root's).
    const size_t dn = cut == 0 ? 1 : cut - 1;
    dir_bytes = dn + 1;
    dir = static_cast<char *>(m->alloc.alloc(dir_bytes));
    if (!dir) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory");
    if (cut == 0)
      dir[0] = '.';
    else
      std::memcpy(dir, f.path, dn);
    dir[dn] = '\0';
    o.config_dir = dir;
  }
  const Status s = st_resolve_companions(m, o, diag);
  if (dir) m->alloc.free(dir, dir_bytes);
  return s;
}

}  // namespace tblob
