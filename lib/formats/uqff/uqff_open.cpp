// Opening (strict) and verifying (report) a UQFF shard set: discover the files, scan every
// shard as safetensors, index every entry of every shard before resolving any layer (entries
// straddle shards), apply the version rules of mistral.rs's UqffReader::open in order
// (docs/uqff.md), resolve each layer, and build the table.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

#include "core/checked.h"
#include "core/dtype.h"
#include "core/endian.h"
#include "formats/safetensors/safetensors.h"
#include "formats/uqff/uqff.h"
#include "formats/uqff/uqff_config.h"
#include "formats/uqff/uqff_discover.h"
#include "formats/uqff/uqff_layer.h"
#include "formats/uqff/uqff_row.h"
#include "io/source.h"

namespace tblob {
namespace uqff {

namespace {

struct Ent {
  uint32_t raw;
  uint32_t suffix;
  const char *key;
  size_t key_len;
};

int key_cmp(const Ent &a, const Ent &b) {
  const size_t n = a.key_len < b.key_len ? a.key_len : b.key_len;
  const int c = std::memcmp(a.key, b.key, n);
  if (c) return c;
  if (a.key_len != b.key_len) return a.key_len < b.key_len ? -1 : 1;
  return 0;
}

void raw_name(const void *ctx, size_t i, const char **p, size_t *n) {
  const TensorDesc *const *rows = static_cast<const TensorDesc *const *>(ctx);
  *p = rows[i]->name;
  *n = rows[i]->name_len;
}

int clipn(size_t n) { return static_cast<int>(n > 160 ? 160 : n); }

class Builder {
 public:
  Builder(tblob_model *m, const Limits &limits, const Diag &diag, ReportFn fn, void *user, VerifySummary *sum)
      : m_(m), lim_(limits), diag_(diag), fn_(fn), user_(user), sum_(sum), raw_(&m->alloc),
        set_problems_(&m->alloc), rows_(&m->alloc) {}

  Status run(const char *const *paths, size_t n);
  // Shards held by the caller (no discovery, no siblings); paths "(memory shard N)".
  void use_buffers(const uint8_t *const *bufs, const size_t *lens) {
    bufs_ = bufs;
    lens_ = lens;
  }
  // m already holds file 0, scanned as safetensors (open_scanned).
  void use_prescanned() { prescanned_ = true; }
  // ... and file 0 is a byte source: a one-shard set, small entries read at open.
  void use_source() { prescanned_ = source_ = true; }

 private:
  bool report_mode() const { return fn_ != nullptr; }

  // A set-level problem. Strict mode: errors fail at once. Report mode: recorded; the first
  // error also goes to diag. Returns the status to return now (OK = carry on).
  Status set_problem(Severity sev, Status st, uint64_t offset, const char *fmt, ...)
      __attribute__((format(printf, 5, 6)));
  // A failure captured from a lower layer (its message in local).
  Status set_failure(Status st, const tblob_diag &local);
  Status emit(const ReportEntry &e);
  Status layer_failed(const Problem &p, int64_t index);

  Status open_files(const SetPaths &sp);
  Status scan_file(uint32_t i, bool is_shard);
  Status check_versions();
  Status resolve_layers();
  Status plain_row(const TensorDesc &t, bool residual);
  Status build_table();
  Status read_small();
  void producer_check();
  Status emit_set();
  // Report mode: a fatal problem still ends with the set entry.
  Status fatal(Status s) {
    if (report_mode() && s != TBLOB_OK && first_error_ == TBLOB_OK) {  // every error is counted once
      first_error_ = s;
      ++sum_->errors;
    }
    if (report_mode() && s != TBLOB_E_CANCELLED && s != TBLOB_E_OUT_OF_MEMORY) emit_set();
    return s;
  }

  tblob_model *m_;
  const Limits &lim_;
  const Diag &diag_;
  ReportFn fn_;
  void *user_;
  VerifySummary *sum_;
  PodVec<TensorDesc> raw_;
  PodVec<Problem> set_problems_;
  PodVec<TensorDesc> rows_;
  uint32_t nshards_ = 0;
  int32_t residual_file_ = -1;
  const char *config_path_ = nullptr;
  const char *first_path_ = "";
  Status first_error_ = TBLOB_OK;
  bool version_ok_ = false;
  uint32_t ver_[3] = {0, 0, 0};
  bool have_ver_[3] = {false, false, false};
  uint64_t layers_ = 0;
  const uint8_t *const *bufs_ = nullptr;
  const size_t *lens_ = nullptr;
  bool prescanned_ = false;
  bool source_ = false;
};

// Same file (device and inode): discovery may spell a path differently from the caller.
bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return ::stat(a, &sa) == 0 && ::stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Status Builder::set_problem(Severity sev, Status st, uint64_t offset, const char *fmt, ...) {
  Problem p;
  p.severity = sev;
  p.status = st;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(p.message, sizeof(p.message), fmt, ap);
  va_end(ap);
  if (!report_mode()) {
    if (sev == Severity::kWarning) return TBLOB_OK;
    return diag_.fail(st, offset, -1, "%s", p.message);
  }
  if (sev == Severity::kError) {
    if (first_error_ == TBLOB_OK) {
      first_error_ = st;
      diag_.fail(st, offset, -1, "%s", p.message);
    }
    ++sum_->errors;
  } else {
    ++sum_->warnings;
  }
  if (!set_problems_.push(p)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  return TBLOB_OK;
}

Status Builder::set_failure(Status st, const tblob_diag &local) {
  if (st == TBLOB_E_OUT_OF_MEMORY) return diag_.fail_plain(st);
  return set_problem(Severity::kError, st, local.offset, "%s",
                     local.message[0] ? local.message : ::tblob::status_message(st));
}

Status Builder::emit(const ReportEntry &e) {
  if (!fn_) return TBLOB_OK;
  if (fn_(user_, e) != 0)
    return diag_.fail(TBLOB_E_CANCELLED, TBLOB_NO_OFFSET, -1, "the report callback stopped the verify");
  return TBLOB_OK;
}

Status Builder::layer_failed(const Problem &p, int64_t index) {
  if (!report_mode()) return diag_.fail(p.status, TBLOB_NO_OFFSET, index, "%s", p.message);
  if (first_error_ == TBLOB_OK) {
    first_error_ = p.status;
    diag_.fail(p.status, TBLOB_NO_OFFSET, index, "%s", p.message);
  }
  return TBLOB_OK;
}

Status Builder::open_files(const SetPaths &sp) {
  const size_t total = sp.shards.size() + (sp.residual ? 1 : 0) + sp.assets.size();
  if (total > lim_.max_files)
    return diag_.fail(TBLOB_E_LIMIT_FILES, TBLOB_NO_OFFSET, -1, "the UQFF export has %zu files (limit %u)", total,
                      lim_.max_files);
  auto add = [&](const char *path) -> bool {
    FileDesc f{};
    f.path = path;
    f.path_len = std::strlen(path);
    return m_->files.push(f);
  };
  // A file scanned before the set was known is kept when it is the first shard (rows,
  // metadata and source stay as the scan left them); otherwise it is dropped.
  const bool keep = prescanned_ && m_->files.size() == 1 && sp.shards.size() > 0 &&
                    same_file(m_->files[0].path, sp.shards[0]);
  if (prescanned_ && !keep) {
    for (size_t i = 0; i < m_->files.size(); ++i) source_close(&m_->files[i].source, m_->alloc);
    m_->files.clear();
    m_->tensors.clear();
    m_->metadata.clear();
    m_->drop_scan_names();
  }
  prescanned_ = keep;
  if (keep) {  // the set's spelling of the path, as for every other file
    m_->files[0].path = sp.shards[0];
    m_->files[0].path_len = std::strlen(sp.shards[0]);
  }
  for (size_t i = keep ? 1 : 0; i < sp.shards.size(); ++i)
    if (!add(sp.shards[i])) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  nshards_ = static_cast<uint32_t>(sp.shards.size());
  if (sp.residual) {
    residual_file_ = static_cast<int32_t>(m_->files.size());
    if (!add(sp.residual)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  for (size_t i = 0; i < sp.assets.size(); ++i)
    if (!add(sp.assets[i])) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  config_path_ = sp.config;
  return TBLOB_OK;
}

// Opens and scans file i as safetensors (the full container validation).
Status Builder::scan_file(uint32_t i, bool is_shard) {
  tblob_diag local = TBLOB_DIAG_INIT;
  Diag ld;
  ld.out = &local;
  Status s = TBLOB_OK;
  if (!(prescanned_ && i == 0)) {  // the prescanned file is already scanned and sorted
    FileDesc &f = m_->files[i];
    f.tensor_begin = f.tensor_end = m_->tensors.size();
    f.metadata_begin = f.metadata_end = m_->metadata.size();
    s = bufs_ ? TBLOB_OK : source_open_file(f.path, lim_.mode, m_->alloc, &m_->files[i].source, ld);
    if (s == TBLOB_OK) s = st_scan_into_model(m_, i, lim_, ld);
    if (s == TBLOB_OK) st_sort_rows(m_, i);  // by offset; sets file_offset
  }
  if (s == TBLOB_OK) s = st_check_ranges(m_, i, ld);
  ReportEntry e{};
  e.kind = EntryKind::kShard;
  e.name = m_->files[i].path;
  e.name_len = m_->files[i].path_len;
  e.family = Family::kNone;
  e.label = is_shard ? "shard" : "residual";
  e.ggml_type = UINT32_MAX;
  e.shard = i;
  e.stored_bytes = m_->files[i].source.len;
  Problem p;
  if (s != TBLOB_OK) {
    p.severity = Severity::kError;
    p.status = s;
    std::snprintf(p.message, sizeof(p.message), "%.100s: %.130s", m_->files[i].path,
                  local.message[0] ? local.message : ::tblob::status_message(s));
    e.problem_count = 1;
    e.problems = &p;
  }
  if (is_shard && sum_) ++sum_->shards;
  const Status es = emit(e);
  if (es != TBLOB_OK) return es;
  if (s != TBLOB_OK) {
    if (s == TBLOB_E_OUT_OF_MEMORY) return diag_.fail_plain(s);
    if (report_mode()) {
      ++sum_->errors;
      if (first_error_ == TBLOB_OK) first_error_ = s;
    }
    return diag_.fail(s, local.offset, local.tensor_index, "%s", p.message);
  }
  return TBLOB_OK;
}

// Rules 1-4 of UqffReader::open over the union of the shards.
Status Builder::check_versions() {
  static const char *const kPart[] = {"major", "minor", "patch"};
  Status s;
  const TensorDesc *first[3] = {nullptr, nullptr, nullptr};
  size_t nonver = 0, numeric = 0;
  for (size_t i = 0; i < raw_.size(); ++i) {
    const TensorDesc &t = raw_[i];
    if (static_cast<int32_t>(t.file_index) == residual_file_) continue;
    const char *key;
    size_t kl;
    uint32_t part = 0;
    if (parse_name(t.name, t.name_len, &key, &kl, &part) != kSufVersion) {
      ++nonver;
      bool digits = t.name_len > 0;
      for (size_t k = 0; k < t.name_len && digits; ++k) digits = t.name[k] >= '0' && t.name[k] <= '9';
      numeric += digits;
      continue;
    }
    // Rule 1: every copy is a U32 [] 4-byte scalar, and all copies are equal.
    if (t.dtype != TBLOB_DTYPE_U32 || t.rank != 0 || t.end - t.begin != 4) {
      s = set_problem(Severity::kError, TBLOB_E_UQFF_SCALAR, t.key_offset,
                      "uqff.version.%s in %s must be a scalar U32 (shape [], 4 bytes), found %s with rank %u",
                      kPart[part], m_->files[t.file_index].path, dtype_name(t.dtype), t.rank);
      if (s != TBLOB_OK) return s;
      continue;
    }
    const uint8_t *d = entry_data(m_, t);
    const uint32_t v = load_le32(d);
    if (!first[part]) {
      first[part] = &t;
      ver_[part] = v;
      have_ver_[part] = true;
    } else if (first[part]->file_index == t.file_index) {
      s = set_problem(Severity::kError, TBLOB_E_DUPLICATE_NAME, t.key_offset, "uqff.version.%s appears twice in %s",
                      kPart[part], m_->files[t.file_index].path);
      if (s != TBLOB_OK) return s;
    } else if (v != ver_[part]) {
      s = set_problem(Severity::kError, TBLOB_E_UQFF_VERSION_CONFLICT, t.key_offset,
                      "Conflicting UQFF version tensor uqff.version.%s: %u in %s, %u in %s", kPart[part], ver_[part],
                      m_->files[first[part]->file_index].path, v, m_->files[t.file_index].path);
      if (s != TBLOB_OK) return s;
    }
  }
  // Rule 2: at least one tensor and every name an unsigned integer: the 0.x layout.
  if (nonver > 0 && numeric == nonver && !first[0] && !first[1] && !first[2]) {
    return set_problem(Severity::kError, TBLOB_E_UQFF_PRE_1_0, TBLOB_NO_OFFSET,
                       "%s uses the pre-1.0 UQFF layout (tensors named by layer index); regenerate it with "
                       "mistral.rs >= 1.0 UQFF", m_->files[0].path);
  }
  // Rule 3: major required (then minor and patch).
  for (uint32_t part = 0; part < 3; ++part) {
    if (have_ver_[part]) continue;
    const char *meta = nullptr;
    size_t meta_len = 0;
    for (size_t i = 0; i < m_->metadata.size(); ++i) {
      const MetaDesc &md = m_->metadata[i];
      if (md.name_len == 12 && std::memcmp(md.name, "uqff.version", 12) == 0) {
        meta = md.value;
        meta_len = md.value_len;
        break;
      }
    }
    if (meta)
      s = set_problem(Severity::kError, TBLOB_E_UQFF_NO_VERSION, TBLOB_NO_OFFSET,
                      "no uqff.version.%s tensor in the set (pre-1.0 file?); __metadata__ says uqff.version = "
                      "\"%.*s\", but the reader requires the version tensors", kPart[part], clipn(meta_len), meta);
    else
      s = set_problem(Severity::kError, TBLOB_E_UQFF_NO_VERSION, TBLOB_NO_OFFSET,
                      "no uqff.version.%s tensor in the set: no version tag (pre-1.0 file?)", kPart[part]);
    return s;
  }
  // Rule 4: same major; minor not newer; patch ignored.
  if (ver_[0] != kVersionMajor)
    return set_problem(Severity::kError, TBLOB_E_UQFF_VERSION_MAJOR, TBLOB_NO_OFFSET,
                       "UQFF version %u.%u.%u has major %u; this reader reads major %u: regenerate the file", ver_[0],
                       ver_[1], ver_[2], ver_[0], kVersionMajor);
  if (ver_[1] > kVersionMinor)
    return set_problem(Severity::kError, TBLOB_E_UQFF_VERSION_NEWER, TBLOB_NO_OFFSET,
                       "UQFF version %u.%u.%u was written by a newer mistral.rs (this reader: %u.%u): upgrade",
                       ver_[0], ver_[1], ver_[2], kVersionMajor, kVersionMinor);
  version_ok_ = true;
  return TBLOB_OK;
}

Status Builder::plain_row(const TensorDesc &t, bool residual) {
  RowExt *e = row_ext_new(m_, t.rank);
  if (!e) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  e->is_layer = 0;
  LayerInfo &li = e->info;
  li.label = residual ? "residual" : "bias";
  li.shard = t.file_index;
  li.elements = t.elements;
  li.stored_bytes = t.end - t.begin;
  li.weight.data = entry_data(m_, t);
  li.weight.offset = t.file_offset;
  li.weight.file = t.file_index;
  li.weight.bytes = t.end - t.begin;
  li.weight.dtype = t.dtype;
  li.weight.rank = t.rank;
  li.bits = dtype_bits(t.dtype);
  uint64_t *dims = row_dims(e);
  uint64_t rows = 1;
  for (uint32_t i = 0; i < t.rank; ++i) {
    dims[i] = t.shape[i];
    if (i + 1 < t.rank) rows *= t.shape[i];
  }
  li.rows = rows;
  li.cols = t.rank ? t.shape[t.rank - 1] : 1;
  li.weight.shape = dims;
  TensorDesc r = t;
  r.shape = dims;
  if (!rows_.push(r)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  if (sum_) ++sum_->tensors;
  return TBLOB_OK;
}

Status Builder::resolve_layers() {
  // Entries of the shards (not the residual), version keys excluded.
  PodVec<Ent> ents(&m_->alloc);
  if (!ents.reserve(raw_.size())) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  Status s;
  for (size_t i = 0; i < raw_.size(); ++i) {
    const TensorDesc &t = raw_[i];
    if (static_cast<int32_t>(t.file_index) == residual_file_) continue;
    Ent e;
    uint32_t part;
    e.raw = static_cast<uint32_t>(i);
    e.suffix = parse_name(t.name, t.name_len, &e.key, &e.key_len, &part);
    if (e.suffix == kSufVersion) continue;
    if (e.suffix == kSufNone) {
      // Not a layer entry at all: mistral.rs's verify calls the layer unrecognized.
      ProblemList pl;
      pl.add(Severity::kError, TBLOB_E_UQFF_UNRECOGNIZED, "entry %.*s (in %s) is not part of any UQFF layer",
             TBLOB_NAME_ARGS(t.name, t.name_len), m_->files[t.file_index].path);
      ReportEntry re{};
      re.kind = EntryKind::kLayer;
      re.name = t.name;
      re.name_len = t.name_len;
      re.family = Family::kNone;
      re.label = "";
      re.ggml_type = UINT32_MAX;
      re.shard = t.file_index;
      re.shard_span = 1;
      re.dtype = t.dtype;
      re.rank = t.rank;
      re.shape = t.shape;
      re.stored_bytes = t.end - t.begin;
      re.problem_count = pl.count();
      re.problems = pl.items();
      if (sum_) {
        ++sum_->layers;
        ++sum_->errors;
      }
      if ((s = emit(re)) != TBLOB_OK) return s;
      if ((s = layer_failed(pl.items()[0], -1)) != TBLOB_OK) return s;
      continue;
    }
    if (!ents.push(e)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  std::sort(ents.data(), ents.data() + ents.size(), [](const Ent &a, const Ent &b) {
    const int c = key_cmp(a, b);
    if (c) return c < 0;
    return a.suffix < b.suffix;
  });
  size_t i = 0;
  while (i < ents.size()) {
    size_t j = i;
    Group g;
    g.key = ents[i].key;
    g.key_len = ents[i].key_len;
    while (j < ents.size() && key_cmp(ents[j], ents[i]) == 0) {
      const TensorDesc *t = &raw_[ents[j].raw];
      if (ents[j].suffix < kSufCount) {
        g.e[ents[j].suffix] = t;
        g.mask |= 1u << ents[j].suffix;
      } else if (g.n_unknown < 4) {
        g.unknown[g.n_unknown++] = t;
      }
      ++j;
    }
    i = j;
    Resolved r;
    ProblemList pl;
    const bool ok = resolve_layer(m_, g, &r, &pl);
    ++layers_;
    if (sum_) {
      ++sum_->layers;
      sum_->errors += pl.errors();
      sum_->warnings += pl.warnings();
    }
    // Table rows: the layer as `<key>.weight`, then its bias.
    int64_t row_index = -1;
    RowExt *ext = nullptr;
    if (ok) {
      ext = row_ext_new(m_, r.rank);
      if (!ext) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      ext->is_layer = 1;
      ext->info = r.info;
      uint64_t *dims = row_dims(ext);
      for (uint32_t k = 0; k < r.rank; ++k) dims[k] = r.dims[k];
      TensorDesc row = *r.weight;  // name `<key>.weight`, bytes of the stored weight
      row.shape = dims;
      row.rank = r.rank;
      row.elements = r.info.elements;
      row_index = static_cast<int64_t>(rows_.size());
      if (!rows_.push(row)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      if (r.bias && (s = plain_row(*r.bias, false)) != TBLOB_OK) return s;
    }
    if (report_mode()) {
      ReportEntry re{};
      re.kind = EntryKind::kLayer;
      if (r.weight) {
        re.name = r.weight->name;
        re.name_len = r.weight->name_len;
      } else {
        re.name = g.key;  // no `.weight`: the key itself
        re.name_len = g.key_len;
      }
      re.family = r.info.family;
      re.label = r.info.label;
      re.ggml_type = r.info.ggml_type;
      re.bits = r.info.bits;
      re.group_size = r.info.group_size;
      re.shard = r.info.shard;
      re.shard_span = r.info.shard_span;
      re.dtype = r.weight ? r.weight->dtype : 0;
      re.rank = ok ? r.rank : 0;
      re.shape = ok ? row_dims(ext) : nullptr;
      re.experts = r.info.experts;
      re.stored_bytes = r.info.stored_bytes;
      re.has_bias = r.info.has_bias;
      re.problem_count = pl.count();
      re.problems = pl.items();
      if ((s = emit(re)) != TBLOB_OK) return s;
    }
    if (const Problem *p = pl.first_error()) {
      if ((s = layer_failed(*p, row_index)) != TBLOB_OK) return s;
    }
  }
  return TBLOB_OK;
}

Status Builder::build_table() {
  // Residual tensors under their own names.
  Status s;
  for (size_t i = 0; i < raw_.size(); ++i)
    if (static_cast<int32_t>(raw_[i].file_index) == residual_file_ && (s = plain_row(raw_[i], true)) != TBLOB_OK)
      return s;
  // Rows in file order, by offset inside each file (the tblob_tensor_at order).
  std::sort(rows_.data(), rows_.data() + rows_.size(), [](const TensorDesc &a, const TensorDesc &b) {
    if (a.file_index != b.file_index) return a.file_index < b.file_index;
    return a.begin < b.begin;
  });
  m_->tensors.reset();
  if (!m_->tensors.reserve(rows_.size())) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  for (size_t f = 0; f < m_->files.size(); ++f) m_->files[f].tensor_begin = m_->files[f].tensor_end = 0;
  for (size_t i = 0; i < rows_.size(); ++i) {
    FileDesc &f = m_->files[rows_[i].file_index];
    if (f.tensor_end == 0 || f.tensor_begin == f.tensor_end) f.tensor_begin = i;
    f.tensor_end = i + 1;
    m_->tensors.push(rows_[i]);
  }
  tblob_diag local = TBLOB_DIAG_INIT;
  Diag ld;
  ld.out = &local;
  s = m_->index_names(ld);
  if (s == TBLOB_E_DUPLICATE_NAME) {
    const TensorDesc &a = m_->tensors[m_->tensor_index.dup_first()];
    const TensorDesc &b = m_->tensors[m_->tensor_index.dup_second()];
    return set_problem(Severity::kError, TBLOB_E_UQFF_DUPLICATE_KEY, b.key_offset,
                       "tensor %.*s is both in %s and in %s", TBLOB_NAME_ARGS(b.name, b.name_len),
                       m_->files[a.file_index].path, m_->files[b.file_index].path);
  }
  if (s != TBLOB_OK) return set_failure(s, local);
  s = m_->index_metadata_first_wins(ld);
  if (s != TBLOB_OK) return set_failure(s, local);
  if (!ext_build(m_)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  return TBLOB_OK;
}

void Builder::producer_check() {
  for (uint32_t f = 0; f < m_->files.size(); ++f) {
    if (f >= nshards_ && static_cast<int32_t>(f) != residual_file_) continue;
    const FileDesc &fd = m_->files[f];
    bool found = false;
    for (size_t i = fd.metadata_begin; i < fd.metadata_end && i < m_->metadata.size(); ++i)
      found |= m_->metadata[i].name_len == 13 && std::memcmp(m_->metadata[i].name, "uqff.producer", 13) == 0;
    if (!found)
      set_problem(Severity::kWarning, TBLOB_E_UQFF_PRODUCER, TBLOB_NO_OFFSET,
                  "%s has no uqff.producer in __metadata__", fd.path);
  }
}

Status Builder::emit_set() {
  ReportEntry e{};
  e.kind = EntryKind::kSet;
  e.name = first_path_;
  e.name_len = std::strlen(first_path_);
  e.family = Family::kNone;
  e.label = "";
  e.ggml_type = UINT32_MAX;
  e.shard = nshards_;
  e.version_major = ver_[0];
  e.version_minor = ver_[1];
  e.version_patch = ver_[2];
  e.problem_count = static_cast<uint32_t>(set_problems_.size());
  e.problems = set_problems_.data();
  if (sum_) {
    sum_->version_major = ver_[0];
    sum_->version_minor = ver_[1];
    sum_->version_patch = ver_[2];
  }
  return emit(e);
}

// A source-backed shard: reads every entry of at most kSmallEntryBytes into one arena buffer
// (adjacent entries in one read) and lists them in a UqffExt for entry_data; the layers'
// large parts are read when dequantized.
Status Builder::read_small() {
  FileDesc &f = m_->files[0];
  uint64_t total = 0;
  size_t count = 0;
  for (size_t i = f.tensor_begin; i < f.tensor_end; ++i) {
    const TensorDesc &t = m_->tensors[i];
    if (t.end - t.begin > kSmallEntryBytes) continue;
    total += t.end - t.begin;  // no overflow: entries tile the data region
    ++count;
  }
  size_t nbytes;
  if (!to_size(total, &nbytes)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  uint8_t *buf = static_cast<uint8_t *>(m_->arena.alloc(nbytes ? nbytes : 1));
  SmallEntry *list = count ? static_cast<SmallEntry *>(m_->arena.alloc(count * sizeof(SmallEntry))) : nullptr;
  UqffExt *x = static_cast<UqffExt *>(m_->arena.alloc(sizeof(UqffExt)));
  if (!buf || (count && !list) || !x) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  // Rows are sorted by offset (st_sort_rows), so the list is too.
  size_t k = 0, at = 0;
  size_t run_at = 0;
  uint64_t run_off = 0, run_len = 0;
  for (size_t i = f.tensor_begin; i < f.tensor_end; ++i) {
    const TensorDesc &t = m_->tensors[i];
    const uint64_t len = t.end - t.begin;
    if (len > kSmallEntryBytes) continue;
    if (run_len > 0 && run_off + run_len != t.file_offset) {
      const Status r = source_read(f.source, run_off, buf + run_at, static_cast<size_t>(run_len), "UQFF small entries", diag_);
      if (r != TBLOB_OK) return r;
      run_len = 0;
    }
    if (run_len == 0) {
      run_off = t.file_offset;
      run_at = at;
    }
    run_len += len;
    list[k].offset = t.file_offset;
    list[k].bytes = len;
    list[k].data = buf + at;
    ++k;
    at += static_cast<size_t>(len);
  }
  if (run_len > 0) {
    const Status r = source_read(f.source, run_off, buf + run_at, static_cast<size_t>(run_len), "UQFF small entries", diag_);
    if (r != TBLOB_OK) return r;
  }
  x->magic = kExtMagic;
  x->rows = 0;
  x->row = nullptr;
  x->small_count = count;
  x->small = list;
  m_->ext = x;
  return TBLOB_OK;
}

Status Builder::run(const char *const *paths, size_t n) {
  m_->format = TBLOB_FORMAT_UQFF;
  m_->ops = &kFormat;
  first_path_ = n && paths && paths[0] ? paths[0] : "";
  Status s;
  if (source_) {
    nshards_ = 1;
    first_path_ = m_->files[0].path ? m_->files[0].path : "";
  } else if (bufs_) {
    if (n > lim_.max_files) {
      const Status r = set_problem(Severity::kError, TBLOB_E_LIMIT_FILES, TBLOB_NO_OFFSET, "%zu shards (limit %u)", n,
                                   lim_.max_files);
      return fatal(r != TBLOB_OK ? r : TBLOB_E_LIMIT_FILES);
    }
    for (size_t i = 0; i < n; ++i) {
      char name[48];
      const int k = std::snprintf(name, sizeof(name), "(memory shard %zu)", i);
      FileDesc f{};
      char *p = m_->arena.copy(name, static_cast<size_t>(k) + 1);
      if (!p) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      f.path = p;
      f.path_len = static_cast<size_t>(k);
      source_borrow(bufs_[i], lens_[i], &f.source);
      if (!m_->files.push(f)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
    nshards_ = static_cast<uint32_t>(n);
  } else {
    SetPaths sp(&m_->alloc);
    tblob_diag local = TBLOB_DIAG_INIT;
    Diag ld;
    ld.out = &local;
    s = discover(m_, paths, n, lim_, &sp, ld);
    if (s == TBLOB_OK) s = open_files(sp);
    if (s != TBLOB_OK) {
      if (s == TBLOB_E_OUT_OF_MEMORY) return diag_.fail_plain(s);
      const Status r = set_failure(s, local);
      return fatal(r != TBLOB_OK ? r : s);
    }
  }
  // Every shard (and the residual) validated as safetensors and indexed before any layer.
  for (uint32_t i = 0; i < m_->files.size(); ++i) {
    if (i >= nshards_ && static_cast<int32_t>(i) != residual_file_) continue;
    if ((s = scan_file(i, i < nshards_)) != TBLOB_OK) return fatal(s);
  }
  if (source_ && (s = read_small()) != TBLOB_OK) return s;
  if (report_mode()) producer_check();  // before metadata is de-duplicated across files
  if (!raw_.reserve(m_->tensors.size())) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  for (size_t i = 0; i < m_->tensors.size(); ++i) raw_.push(m_->tensors[i]);
  m_->tensors.reset();
  // Duplicate keys: inside one file, across shards, and between shards and the residual
  // (version copies are checked by the version rules instead).
  {
    PodVec<const TensorDesc *> named(&m_->alloc);
    if (!named.reserve(raw_.size())) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    for (size_t i = 0; i < raw_.size(); ++i) {
      const char *key;
      size_t kl;
      uint32_t part;
      if (static_cast<int32_t>(raw_[i].file_index) != residual_file_ &&
          parse_name(raw_[i].name, raw_[i].name_len, &key, &kl, &part) == kSufVersion)
        continue;
      named.push(&raw_[i]);
    }
    NameIndex idx;
    if (!idx.build(&m_->alloc, named.size(), raw_name, named.data())) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    if (idx.has_duplicate()) {
      const TensorDesc &a = *named[idx.dup_first()];
      const TensorDesc &b = *named[idx.dup_second()];
      if (a.file_index == b.file_index)
        s = set_problem(Severity::kError, TBLOB_E_DUPLICATE_NAME, b.key_offset, "tensor %.*s appears twice in %s",
                        TBLOB_NAME_ARGS(b.name, b.name_len), m_->files[b.file_index].path);
      else
        s = set_problem(Severity::kError, TBLOB_E_UQFF_DUPLICATE_KEY, b.key_offset,
                        "Duplicate UQFF tensor key %.*s: in %s and in %s", TBLOB_NAME_ARGS(b.name, b.name_len),
                        m_->files[a.file_index].path, m_->files[b.file_index].path);
      if (s != TBLOB_OK) return s;
    }
  }
  if ((s = check_versions()) != TBLOB_OK) return s;
  const bool pre10 = first_error_ == TBLOB_E_UQFF_PRE_1_0;
  if (!pre10 && (s = resolve_layers()) != TBLOB_OK) return s;
  if ((s = build_table()) != TBLOB_OK) return s;
  if (report_mode()) {
    if (config_path_) {
      ConfigFacts cf;
      tblob_diag local = TBLOB_DIAG_INIT;
      Diag ld;
      ld.out = &local;
      const Status cs = read_config(m_, config_path_, lim_, &cf, ld);
      if (cs != TBLOB_OK) {
        set_problem(Severity::kWarning, TBLOB_E_UQFF_CONFIG, TBLOB_NO_OFFSET, "%s",
                    local.message[0] ? local.message : "config.json cannot be read");
      } else {
        check_completeness(m_, cf, [&](const char *msg) {
          set_problem(Severity::kWarning, TBLOB_E_UQFF_INCOMPLETE, TBLOB_NO_OFFSET, "%s", msg);
        });
      }
    }
    if ((s = emit_set()) != TBLOB_OK) return s;
    return first_error_;
  }
  return TBLOB_OK;
}

}  // namespace

Status open_set(tblob_model *m, const char *const *paths, size_t path_count, const Limits &limits,
                const Diag &diag) {
  Builder b(m, limits, diag, nullptr, nullptr, nullptr);
  return b.run(paths, path_count);
}

Status open_scanned(tblob_model *m, const char *path, const Limits &limits, const Diag &diag) {
  Builder b(m, limits, diag, nullptr, nullptr, nullptr);
  b.use_prescanned();
  const char *paths[1] = {path};
  return b.run(paths, 1);
}

Status open_source_shard(tblob_model *m, const Limits &limits, const Diag &diag) {
  Builder b(m, limits, diag, nullptr, nullptr, nullptr);
  b.use_source();
  return b.run(nullptr, 1);
}

Status open_buffers(tblob_model *m, const uint8_t *const *bufs, const size_t *lens, size_t count,
                    const Limits &limits, ReportFn fn, void *user, VerifySummary *summary, const Diag &diag) {
  VerifySummary local;
  if (fn && !summary) summary = &local;
  if (summary) *summary = VerifySummary();
  Builder b(m, limits, diag, fn, user, summary);
  b.use_buffers(bufs, lens);
  return b.run(nullptr, count);
}

Status verify_set(tblob_model *m, const char *const *paths, size_t path_count, const Limits &limits,
                  ReportFn fn, void *user, VerifySummary *summary, const Diag &diag) {
  VerifySummary local;
  if (!summary) summary = &local;
  *summary = VerifySummary();
  static auto noop = [](void *, const ReportEntry &) { return 0; };
  Builder b(m, limits, diag, fn ? fn : +noop, user, summary);
  return b.run(paths, path_count);
}

}  // namespace uqff
}  // namespace tblob
