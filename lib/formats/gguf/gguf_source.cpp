// GGUF through a byte source (gguf.h open_source_prefix): the header's length is known only
// once parsed, so the parser runs on a prefix that grows.
#include "core/checked.h"
#include "formats/gguf/gguf.h"
#include "io/source.h"

namespace tblob {
namespace gguf {
namespace {

Status finish(tblob_model *m, Status s, tblob_model **out) {
  if (s != TBLOB_OK) {
    model_free(m);
    return s;
  }
  *out = m;
  return TBLOB_OK;
}

// Copies the caller diag's record of a failed attempt (one whose error is final after all).
void diag_copy(const tblob_diag &from, const Diag &to) {
  if (!to.out) return;
  to.reset();
  to.fail(from.status, from.offset, from.tensor_index, "%s", from.message);
}

}  // namespace

// GGUF through a byte source: the header's length is known only once parsed, so the parser
// runs on a prefix that doubles while it says the bytes ran out, up to the size or the
// header limit. A failed attempt's model is freed without its source (kept for the next).
Status open_source_prefix(tblob_model *m, const Limits &limits, tblob_model **out, const Diag &diag) {
  Source src = m->files[0].source;
  FileDesc f0 = m->files[0];
  m->files[0].source = Source{};
  model_free(m);
  const Allocator a(limits.allocator);
  uint64_t want = 64 * 1024;
  for (;;) {
    // An unknown size becomes known when a read reaches the end.
    uint64_t total = source_total(src);
    uint64_t cap = limits.max_header_bytes;
    if (total != TBLOB_SOURCE_SIZE_UNKNOWN && total < cap) cap = total;
    if (want > cap) want = cap;
    Status s = source_grow_prefix(&src, want, a, "the GGUF header", diag, true);
    if (s != TBLOB_OK) {
      source_close(&src, a);
      return s;
    }
    tblob_model *t = model_new(limits.allocator);
    if (!t) {
      source_close(&src, a);
      return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
    f0.source = src;
    if (!t->files.push(f0)) {
      model_free(t);  // owns no source yet
      source_close(&src, a);
      return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
    total = source_total(src);
    if (total != TBLOB_SOURCE_SIZE_UNKNOWN && total < cap) cap = total;
    tblob_diag local = TBLOB_DIAG_INIT;
    Diag ld;
    ld.out = &local;
    s = open_detected(t, limits, ld);
    const bool short_of_bytes = s == TBLOB_E_GGUF_TRUNCATED || s == TBLOB_E_GGUF_STRING || s == TBLOB_E_GGUF_ARRAY ||
                                s == TBLOB_E_GGUF_COUNT;
    const bool more = src.len < cap && (total == TBLOB_SOURCE_SIZE_UNKNOWN || src.len < total);
    if (s == TBLOB_OK) {
      // Size unknown: the last tensor's last byte must exist.
      if (total == TBLOB_SOURCE_SIZE_UNKNOWN) {
        uint64_t end = 0;
        for (size_t i = 0; i < t->tensors.size(); ++i) {
          const TensorDesc &d = t->tensors[i];
          uint64_t e;
          if (d.end > d.begin && checked_add(d.file_offset, d.end - d.begin, &e) && e > end) end = e;
        }
        uint8_t last;
        if (end > src.len) s = source_read(src, end - 1, &last, 1, "the last tensor's last byte", diag);
        FileDesc &g = t->files[0];
        if (end >= g.data_offset) g.data_bytes = end - g.data_offset;
      }
      if (s == TBLOB_OK) s = open_source_set(&t, limits, diag);  // a split set: all its parts
      return finish(t, s, out);
    }
    if (!short_of_bytes || !more) {
      if (short_of_bytes && src.len >= limits.max_header_bytes &&
          (total == TBLOB_SOURCE_SIZE_UNKNOWN || total > src.len)) {
        // The message first: the name dies with the model (and its source).
        s = diag.fail(TBLOB_E_LIMIT_HEADER_BYTES, src.len, -1,
                      "source %s: the GGUF header goes on past max_header_bytes (%llu)", f0.path,
                      static_cast<unsigned long long>(limits.max_header_bytes));
        model_free(t);
        return s;
      }
      diag_copy(local, diag);
      return finish(t, s, out);  // closes the source with the model
    }
    t->files[0].source = Source{};  // keep it for the next attempt
    model_free(t);
    want = src.len * 2;
  }
}

}  // namespace gguf
}  // namespace tblob
