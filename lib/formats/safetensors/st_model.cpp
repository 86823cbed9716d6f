// One safetensors buffer into the tensor table.
#include <cstring>

#include "core/checked.h"
#include "core/dtype.h"
#include "table/meta_index.h"
#include "table/name_hash.h"
#include "table/name_index.h"
#include "core/range_check.h"
#include "formats/safetensors/safetensors.h"
#include "io/source.h"
#include "json/st_scan_loop.h"

namespace tblob {

namespace {

// FileDesc::data_bytes of a byte source of unknown size until st_check_ranges settles it.
constexpr uint64_t kRegionUnknown = UINT64_MAX;

// n >= 1 dims, most often one or two: straight moves for those, no memcpy call and no overlap
// check (the arena's fresh words never overlap the scanner's).
inline void copy_dims(uint64_t *__restrict d, const uint64_t *__restrict s, uint32_t n) {
  d[0] = s[0];
  if (n > 1) {
    d[1] = s[1];
    for (uint32_t i = 2; i < n; ++i) d[i] = s[i];
  }
}

class TableSink final : public StSink {
 public:
  TableSink(tblob_model *m, uint32_t file_index, uint64_t data_offset, const Diag &diag)
      : m_(m), file_(file_index), data_offset_(data_offset), diag_(diag) {}
  bool tiled() const { return tiled_; }
  uint64_t dtypes() const { return dtypes_; }
  uint64_t cover() const { return cover_; }

  // Inlined into the scanner, which names this class (st_scan_header_with).
  inline __attribute__((always_inline)) Status on_tensor(const StTensorEntry &e) override {
    const char *name;
    size_t name_len;
    if (!text(e.name(), &name, &name_len)) return oom();
    uint64_t *dims = nullptr;
    const uint32_t rank = e.ev.rank;
    if (rank) {
      dims = static_cast<uint64_t *>(m_->arena.alloc(sizeof(uint64_t) * rank));
      if (!dims) return oom();
      if (e.ev.shape)
        copy_dims(dims, e.ev.shape, rank);
      else
        st_parse_dims(e.ev.shape_json, e.ev.shape_json_len, dims, rank);
    }
    // The row is written where it lives, every field once (built aside, its copy into the
    // table was a sixth of this function).
    TensorDesc *t = m_->tensors.push_uninit();
    if (!t) return oom();
    t->name = name;
    t->name_len = name_len;
    t->shape = dims;
    t->rank = rank;
    t->dtype = e.ev.dtype;
    t->file_index = file_;
    t->entry_status = e.entry_status;
    const uint64_t begin = entry_field(e.ev.data_begin), end = entry_field(e.ev.data_end);
    t->begin = begin;
    t->end = end;
    t->file_offset = data_offset_ + begin;  // wraps only for offsets the range checks reject
    tiled_ &= begin == cover_;
    cover_ = end;
    dtypes_ |= uint64_t{1} << (e.ev.dtype & 63);
    t->elements = entry_field(e.elements);
    t->order = entry_field(e.ev.index);
    t->key_offset = entry_field(e.ev.header_offset);
    // Hash the name and fill its index slot now, while it is in cache; index_names would read
    // it again otherwise.
    if (!m_->tensor_index.fill(&m_->alloc, name, name_len) || !m_->scan_hashes.push(m_->tensor_index.hash(name, name_len)))
      return oom();
    return TBLOB_OK;
  }

  Status on_metadata(const StMetaEntry &e) override {
    const char *k, *v;
    size_t kn, vn;
    if (!text(e.key, &k, &kn) || !text(e.value, &v, &vn)) return oom();
    return meta_len_ok(kn, vn) && m_->metadata.push(meta_desc(k, kn, v, vn)) ? TBLOB_OK : oom();
  }

 private:
  // Names without escapes point into the source, which lives as long as the model.
  bool text(const json::StringSlice &s, const char **p, size_t *n) {
    if (!s.has_escapes) {
      *p = s.ptr;
      *n = s.len;
      return true;
    }
    char *d = static_cast<char *>(m_->arena.alloc(s.len));  // decoding only shrinks
    if (!d) return false;
    *n = json::decode_into(s, d, s.len);
    *p = d;
    return true;
  }
  Status oom() {
    return diag_.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory building the tensor table");
  }

  tblob_model *m_;
  uint32_t file_;
  uint64_t data_offset_;
  const Diag &diag_;
  // Every row began where the previous one ended: with no entry error (the scan keeps the
  // first) that is the tiling walk of st_check_ranges passing, and rows in order.
  bool tiled_ = true;
  uint64_t cover_ = 0;
  uint64_t dtypes_ = 0;  // FileDesc::dtypes
};

void meta_name_at(const void *ctx, size_t i, const char **p, size_t *n) {
  const MetaDesc &d = static_cast<const MetaDesc *>(ctx)[i];
  *p = d.name;
  *n = d.name_len;
}

}  // namespace

Status st_fetch_header(Source *src, const Limits &limits, const Allocator &a, const Diag &diag) {
  const uint64_t total = source_total(*src);
  Status s = source_grow_prefix(src, 8, a, "the header length", diag);
  if (s != TBLOB_OK || src->len < 8) return s;  // a known size under 8: the scan says so
  uint64_t n = 0;
  st_header_length(src->data, src->len, &n);
  if (n > TBLOB_SAFETENSORS_MAX_HEADER || n > limits.max_header_bytes) return TBLOB_OK;  // the scan says so
  if (total != TBLOB_SOURCE_SIZE_UNKNOWN && 8 + n > total)
    return diag.fail(TBLOB_E_HEADER_LENGTH, 0, -1, "source %s: header length %llu needs %llu bytes; the source has %llu",
                     source_name(*src), static_cast<unsigned long long>(n), static_cast<unsigned long long>(8 + n),
                     static_cast<unsigned long long>(total));
  if (total != TBLOB_SOURCE_SIZE_UNKNOWN) return source_grow_prefix(src, 8 + n, a, "the header", diag);
  // Size unknown: the header the length claims is read in doubling steps, so memory follows the
  // bytes the source delivers, not a claim it cannot back (a short step is the error).
  for (;;) {
    uint64_t want = src->len < 32768 ? 65536 : uint64_t{src->len} * 2;
    if (want > 8 + n) want = 8 + n;
    s = source_grow_prefix(src, want, a, "the header", diag);
    if (s != TBLOB_OK || want == 8 + n) return s;
  }
}

Status st_scan_into_model(tblob_model *m, uint32_t file_index, const Limits &limits,
                          const Diag &diag) {
  FileDesc &f = m->files[file_index];
  f.tensor_begin = m->tensors.size();
  f.metadata_begin = m->metadata.size();
  Limits lim = limits;
  lim.max_tensors = limits.max_tensors - (limits.max_tensors < f.tensor_begin ? limits.max_tensors : f.tensor_begin);
  // Size the table once, so a large header is not copied through repeated growth: no
  // tensor entry is shorter than `"":{"dtype":"U8","shape":[],"data_offsets":[0,0]}` (49
  // bytes), so header_len / 49 bounds the count. Pages of the reservation that are never
  // written are never touched. (Counting "data_offsets" keys first cost a quarter of open.)
  uint64_t header_len = 0;
  const bool have_len = st_header_length(f.source.data, f.source.len, &header_len);
  if (have_len && f.source.len > 8) {
    const uint64_t n = header_len;
    if (n <= f.source.len - 8 && n <= TBLOB_SAFETENSORS_MAX_HEADER) {
      source_prefault(f.source, static_cast<size_t>(8 + n));
      uint64_t bound = n / 49 + 1;
      if (bound > lim.max_tensors) bound = lim.max_tensors;
      if (!m->tensors.reserve(m->tensors.size() + static_cast<size_t>(bound)) ||
          !m->scan_hashes.reserve(m->tensors.size() + static_cast<size_t>(bound)) ||
          !m->tensor_index.reserve_fill(&m->alloc, m->tensors.size() + static_cast<size_t>(bound)))
        return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory sizing the tensor table");
    }
  }
  TableSink sink(m, file_index, header_len <= TBLOB_SAFETENSORS_MAX_HEADER ? 8 + header_len : 0, diag);
  StScanSummary sum;
  Status s = st_scan_header_with(f.source.data, f.source.len, lim, &sink, &sum, diag);
  FileDesc &g = m->files[file_index];  // the vector did not move, but stay explicit
  g.tensor_end = m->tensors.size();
  g.metadata_end = m->metadata.size();
  g.data_offset = sum.data_offset;
  g.data_bytes = sum.data_available;
  // Tiled rows with sound entries are in (begin, end) order: no sort, no walk. Anything else
  // (an error, or rows out of order) is sorted and walked by st_sort_rows and st_check_ranges.
  g.rows_tiled = sink.tiled() && sum.first_entry_status == TBLOB_OK;
  g.rows_in_order = g.rows_tiled;
  g.rows_cover = sink.cover();
  g.dtypes_known = true;
  g.dtypes = sink.dtypes();
  if (s != TBLOB_OK) return s;
  if (g.source.kind == Source::kCallback) {
    // The data region was not read: its length is what the size says, or, unknown, what the
    // tensors reach (st_check_ranges checks their last byte exists).
    const uint64_t total = source_total(g.source);
    g.data_bytes = total == TBLOB_SOURCE_SIZE_UNKNOWN ? kRegionUnknown
                   : total >= g.data_offset          ? total - g.data_offset
                                                     : 0;
  }
  // Our policy: a key twice in one __metadata__ is an error (the reference keeps the last).
  const size_t nmeta = g.metadata_end - g.metadata_begin;
  if (nmeta > 1) {
    MetaIndex idx;
    if (!idx.build(&m->alloc, nmeta, meta_name_at, m->metadata.data() + g.metadata_begin))
      return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory checking metadata keys");
    if (idx.has_duplicate()) {
      const MetaDesc &d = m->metadata[g.metadata_begin + idx.dup_second()];
      const ShownName shown_name(d.name, d.name_len);
      const int shown = shown_name.len;
      const char *ell = shown_name.ell;
      return diag.fail(TBLOB_E_METADATA, TBLOB_NO_OFFSET, -1,
                       "__metadata__ key \"%.*s%s\" appears twice", shown, shown_name.text, ell);
    }
  }
  return TBLOB_OK;
}

void st_sort_rows(tblob_model *m, uint32_t file_index) {
  const FileDesc &f = m->files[file_index];
  TensorDesc *rows = m->tensors.data() + f.tensor_begin;
  const size_t n = f.tensor_end - f.tensor_begin;
  // file_offset was set per row by the scan. Rows seen in order need no sort at all.
  if (!f.rows_in_order && sort_ranges(rows, n)) m->drop_scan_names();  // no longer row for row
}

Status st_check_ranges(tblob_model *m, uint32_t file_index, const Diag &diag) {
  FileDesc &f = m->files[file_index];
  const TensorDesc *rows = m->tensors.data() + f.tensor_begin;
  const size_t n = f.tensor_end - f.tensor_begin;
  size_t bad = 0;
  uint64_t cursor = f.rows_cover;
  Status s = f.rows_tiled ? TBLOB_OK : walk_tiling(rows, n, &bad, &cursor);
  if (s != TBLOB_OK) {
    const TensorDesc &t = rows[bad];
    json::StringSlice name;
    name.ptr = t.name;
    name.len = t.name_len;
    uint64_t expected = cursor;
    if (s == TBLOB_E_TENSOR_SIZE) {
      bool mis;
      if (!dtype_bytes(t.dtype, t.elements, &expected, &mis)) expected = 0;
    }
    return st_entry_error(diag, s, t.order, name, t.key_offset, t.begin, t.end, expected);
  }
  if (f.source.kind == Source::kCallback && f.data_bytes == kRegionUnknown) {
    if (cursor > 0) {
      uint8_t last;
      uint64_t at;
      if (!checked_add(f.data_offset, cursor - 1, &at))
        return diag.fail(TBLOB_E_TRUNCATED, f.data_offset, -1, "source %s: the tensors end past 2^64 bytes",
                         source_name(f.source));
      const Status r = source_read(f.source, at, &last, 1, "the last tensor's last byte", diag);
      if (r != TBLOB_OK) return r;
    }
    f.data_bytes = cursor;  // what follows cannot be told without reading it
  }
  s = check_region_length(cursor, f.data_bytes);
  if (s != TBLOB_OK) return st_length_error(diag, s, f.data_offset, cursor, f.data_bytes);
  return TBLOB_OK;
}

Status st_open_single(tblob_model *m, const Limits &limits, const Diag &diag) {
  const Status s = st_scan_single(m, limits, diag);
  return s == TBLOB_OK ? st_finish_single(m, limits, diag) : s;
}

Status st_scan_single(tblob_model *m, const Limits &limits, const Diag &diag) {
  m->format = TBLOB_FORMAT_SAFETENSORS;
  Status s = st_scan_into_model(m, 0, limits, diag);
  if (s == TBLOB_OK) st_sort_rows(m, 0);
  return s;
}

Status st_finish_single(tblob_model *m, const Limits &limits, const Diag &diag) {
  Status s = m->index_names(diag, true);  // duplicate names are reported before ranges (our policy)
  if (s == TBLOB_OK) s = st_check_ranges(m, 0, diag);
  if (s == TBLOB_OK) s = m->index_metadata_first_wins(diag);
  if (s == TBLOB_OK) s = st_resolve_companions_beside(m, limits, diag);
  return s;
}

}  // namespace tblob
