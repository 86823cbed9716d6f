#include "table/model.h"

#include <cstring>
#include <new>

namespace tblob {

namespace {
void tensor_name(const void *ctx, size_t i, const char **p, size_t *n) {
  const TensorDesc &t = static_cast<const TensorDesc *>(ctx)[i];
  *p = t.name;
  *n = t.name_len;
}
void meta_name(const void *ctx, size_t i, const char **p, size_t *n) {
  const MetaDesc &m = static_cast<const MetaDesc *>(ctx)[i];
  *p = m.name;
  *n = m.name_len;
}
}  // namespace

tblob_model *model_new(const tblob_allocator *hook) {
  Allocator a(hook);
  void *mem = a.alloc(sizeof(tblob_model));
  if (!mem) return nullptr;
  return new (mem) tblob_model(hook);
}

Status model_add_file(tblob_model *m, const char *path, uint32_t mode, const Diag &diag) {
  FileDesc f{};
  const size_t n = std::strlen(path);
  char *p = m->arena.copy(path, n + 1);
  if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  f.path = p;
  f.path_len = n;
  const Status s = source_open_file(path, mode, m->alloc, &f.source, diag);
  if (s != TBLOB_OK) return s;
  if (!m->files.push(f)) {
    source_close(&f.source, m->alloc);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  return TBLOB_OK;
}

Status model_add_buffer(tblob_model *m, const void *buf, size_t len, const Diag &diag) {
  FileDesc f{};
  f.path = "";
  source_borrow(buf, len, &f.source);
  return m->files.push(f) ? TBLOB_OK : diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
}

void model_free(tblob_model *m) {
  if (!m) return;
  Allocator a = m->alloc;
  m->~tblob_model();
  a.free(m, sizeof(tblob_model));
}

}  // namespace tblob

tblob_model::~tblob_model() {
  for (size_t i = 0; i < files.size(); ++i) tblob::source_close(&files[i].source, alloc);
}

tblob::Status tblob_model::index_names(const tblob::Diag &diag, bool use_scan_hashes) {
  using namespace tblob;
  const bool built = use_scan_hashes && scan_hashes.size() == tensors.size() && tensor_index.filled() == tensors.size()
                         ? tensor_index.build_filled(&alloc, tensor_name, tensors.data(), scan_hashes.data())
                         : tensor_index.build(&alloc, tensors.size(), tensor_name, tensors.data());
  scan_hashes.reset();
  if (!built) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory building the name index");
  if (tensor_index.has_duplicate()) {
    const TensorDesc &a = tensors[tensor_index.dup_first()];
    const TensorDesc &b = tensors[tensor_index.dup_second()];
    const TensorDesc &later = a.order > b.order ? a : b;
    const char *ell;
    const int shown = clip_name(later.name_len, &ell);
    return diag.fail(TBLOB_E_DUPLICATE_NAME, later.key_offset,
                     static_cast<int64_t>(tensor_index.dup_second()),
                     "tensor \"%.*s%s\" (byte %llu) appears twice%s", shown, later.name, ell,
                     static_cast<unsigned long long>(later.key_offset),
                     a.file_index != b.file_index ? " (in two files)" : "");
  }
  return TBLOB_OK;
}

tblob::Status tblob_model::index_metadata_first_wins(const tblob::Diag &diag) {
  using namespace tblob;
  if (!metadata_index.build(&alloc, metadata.size(), meta_name, metadata.data()))
    return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory building the metadata index");
  if (!metadata_index.has_duplicate()) return TBLOB_OK;
  // The index keeps the first of equal names; keep only entries that are their own hit.
  size_t kept = 0;
  for (size_t i = 0; i < metadata.size(); ++i) {
    if (metadata_index.find(metadata[i].name, metadata[i].name_len) == i) metadata[kept++] = metadata[i];
  }
  while (metadata.size() > kept) metadata.pop();
  if (!metadata_index.build(&alloc, metadata.size(), meta_name, metadata.data()))
    return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory building the metadata index");
  return TBLOB_OK;
}

tblob::Status tblob_model::metadata_ready() const {
  if (!build_metadata) return TBLOB_OK;
  // The table is built once, by the first caller; the others wait here for it. The model is
  // otherwise immutable after open, so only this builder writes to it (and to its arena).
  tblob_model *self = const_cast<tblob_model *>(this);
  return metadata_once.get([self](tblob::Status *st) { *st = self->build_metadata(self); });
}
