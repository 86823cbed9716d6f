// Tensor blobs: each is a safetensors file (docs/ollama.md). Every tensor of
// every blob goes into the table under its header name, with two layout rules:
//  - a blob whose single tensor is keyed "data" (Jan-Feb 2026, incl. the three-blob
//    <name> / <name>_scale / <name>_qbias quantized layers) takes its layer's name;
//  - a path-style layer ("component/tensor", image generation) prefixes the component to
//    header keys that lack it, so components never collide.
// A layer that carries dtype/shape (image-generation manifests) is cross-checked against
// the blob header. Combined quantized blobs (N, N.scale, N.bias + __metadata__) and
// packed expert groups (all three historical layouts) need no rule: their headers list
// their tensors, which are listed as stored.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include "core/checked.h"
#include "core/dtype.h"
#include "formats/ollama/ollama.h"
#include "formats/safetensors/safetensors.h"
#include "io/source.h"

namespace tblob {
namespace ollama {

namespace {

Status reframe(const Diag &diag, const tblob_diag &inner, const char *file, const LayerRec &layer) {
  const ShownName shown_name(layer.name, layer.name_len);
  const int shown = shown_name.len;
  const char *ell = shown_name.ell;
  return diag.fail(inner.status, inner.offset, inner.tensor_index, "blob %s (layer \"%.*s%s\"): %s", file,
                   shown, shown_name.text, ell, inner.message);
}

bool starts_with(const char *p, size_t n, const char *q, size_t k) {
  return n >= k && std::memcmp(p, q, k) == 0;
}

// "[2, 3]" into buf (cut with "..." when long); for messages that show two shapes.
const char *shape_text(const uint64_t *shape, uint32_t rank, char *buf, size_t cap) {
  size_t at = 0;
  buf[at++] = '[';
  for (uint32_t k = 0; k < rank; ++k) {
    const int w = std::snprintf(buf + at, cap - at, "%s%llu", k ? ", " : "", static_cast<unsigned long long>(shape[k]));
    if (w < 0 || static_cast<size_t>(w) + 5 >= cap - at) {
      std::snprintf(buf + at, cap - at, ", ...");
      at = std::strlen(buf);
      break;
    }
    at += static_cast<size_t>(w);
  }
  buf[at++] = ']';
  buf[at] = '\0';
  return buf;
}

// The dtype/shape a layer states against its blob's tensor t.
Status check_layer_tensor(const LayerRec &layer, const TensorDesc &t, size_t row, const char *file,
                          const Diag &diag) {
  const ShownName shown_name(layer.name, layer.name_len);
  const int shown = shown_name.len;
  const char *ell = shown_name.ell;
  if (layer.dtype != TBLOB_DTYPE_INVALID && layer.dtype != t.dtype)
    return diag.fail(TBLOB_E_OLLAMA_LAYER_MISMATCH, t.key_offset, static_cast<int64_t>(row),
                     "layer \"%.*s%s\": manifest dtype %s, blob %s header dtype %s", shown, shown_name.text, ell,
                     dtype_name(layer.dtype), file, dtype_name(t.dtype));
  if (layer.has_shape) {
    bool same = layer.rank == t.rank;
    for (uint32_t k = 0; same && k < t.rank; ++k) same = layer.shape[k] == t.shape[k];
    if (!same) {
      char a[160], b[160];
      return diag.fail(TBLOB_E_OLLAMA_LAYER_MISMATCH, t.key_offset, static_cast<int64_t>(row),
                       "layer \"%.*s%s\": manifest shape %s differs from blob %s header shape %s", shown,
                       shown_name.text, ell, shape_text(layer.shape, layer.rank, a, sizeof(a)), file,
                       shape_text(t.shape, t.rank, b, sizeof(b)));
    }
  }
  return TBLOB_OK;
}

Status scan_and_layout(tblob_model *m, uint32_t fi, const LayerRec &layer, const char *file,
                       const Limits &limits, bool *is_data, const Diag &diag) {
  *is_data = false;
  tblob_diag inner = TBLOB_DIAG_INIT;
  Diag d;
  d.out = &inner;
  Status s = st_scan_into_model(m, fi, limits, d);
  if (s != TBLOB_OK) return reframe(diag, inner, file, layer);
  FileDesc &f = m->files[fi];
  const size_t count = f.tensor_end - f.tensor_begin;
  const ShownName shown_name(layer.name, layer.name_len);
  const int shown = shown_name.len;
  const char *ell = shown_name.ell;
  if (count == 1 && m->tensors[f.tensor_begin].name_len == 4 &&
      std::memcmp(m->tensors[f.tensor_begin].name, "data", 4) == 0) {
    *is_data = true;
    if (layer.name_len == 0)
      return diag.fail(TBLOB_E_OLLAMA_LAYER_MISMATCH, TBLOB_NO_OFFSET, -1,
                       "blob %s holds the single tensor \"data\", which takes its layer's name, "
                       "but the layer has no name", file);
    m->tensors[f.tensor_begin].name = layer.name;  // copied into m's arena by the caller
    m->tensors[f.tensor_begin].name_len = layer.name_len;
  } else if (layer.name_len) {
    const char *slash = static_cast<const char *>(std::memchr(layer.name, '/', layer.name_len));
    if (slash) {
      const size_t comp = static_cast<size_t>(slash - layer.name) + 1;  // "component/"
      for (size_t i = f.tensor_begin; i < f.tensor_end; ++i) {
        TensorDesc &t = m->tensors[i];
        if (starts_with(t.name, t.name_len, layer.name, comp)) continue;
        uint64_t n;
        size_t nn;
        if (!checked_add(t.name_len, comp, &n) || !to_size(n, &nn)) return diag.fail_plain(TBLOB_E_SHAPE_OVERFLOW);
        char *p = static_cast<char *>(m->arena.alloc(nn));
        if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
        std::memcpy(p, layer.name, comp);
        std::memcpy(p + comp, t.name, t.name_len);
        t.name = p;
        t.name_len = nn;
      }
    }
  }
  if (layer.dtype != TBLOB_DTYPE_INVALID || layer.has_shape) {
    size_t hit = SIZE_MAX;
    for (size_t i = f.tensor_begin; i < f.tensor_end; ++i) {
      const TensorDesc &t = m->tensors[i];
      if (t.name_len == layer.name_len && std::memcmp(t.name, layer.name, t.name_len) == 0) hit = i;
    }
    if (hit == SIZE_MAX && count == 1) hit = f.tensor_begin;
    if (hit == SIZE_MAX)
      return diag.fail(TBLOB_E_OLLAMA_LAYER_MISMATCH, TBLOB_NO_OFFSET, -1,
                       "layer \"%.*s%s\" states a dtype/shape but blob %s has no tensor of that name",
                       shown, shown_name.text, ell, file);
    const Status c = check_layer_tensor(layer, m->tensors[hit], hit, file, diag);
    if (c != TBLOB_OK) return c;
  }
  inner = TBLOB_DIAG_INIT;
  st_sort_rows(m, fi);
  s = st_check_ranges(m, fi, d);
  if (s != TBLOB_OK) return reframe(diag, inner, file, layer);
  return TBLOB_OK;
}

}  // namespace

Status add_blob_file(tblob_model *m, const tblob_store &s, const LayerRec &layer, size_t layer_index,
                     const Limits &limits, const char **file_name, const Diag &diag) {
  if (m->files.size() >= limits.max_files)
    return diag.fail(TBLOB_E_LIMIT_FILES, TBLOB_NO_OFFSET, -1,
                     "the model has more than %u tensor blobs (max_files)", limits.max_files);
  char path[4096 + 128];
  const size_t plen = blob_path(s, layer.digest, path, sizeof(path));
  if (plen == 0) return check_digest(layer.digest, std::strlen(layer.digest), DigestForm::kManifest, "digest", diag);
  const char *file = path + plen - kDigestChars;
  int fd;
  struct stat st;
  Status r = open_blob(s, layer.digest, kDigestChars, &fd, &st, diag);
  if (r != TBLOB_OK) return r;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return diag.fail(TBLOB_E_OLLAMA_BLOB_EMPTY, 0, -1,
                     "blob %s (layers[%zu]) is empty: its content hash would be sha256:e3b0c442..., "
                     "the hash of no bytes; the manifest says %llu bytes",
                     file, layer_index, static_cast<unsigned long long>(layer.size));
  }
  if (size != layer.size) {
    ::close(fd);
    return diag.fail(TBLOB_E_OLLAMA_BLOB_SIZE, TBLOB_NO_OFFSET, -1,
                     "blob %s (layers[%zu]) is %llu bytes; the manifest says %llu", file, layer_index,
                     static_cast<unsigned long long>(size), static_cast<unsigned long long>(layer.size));
  }
  size_t len;
  if (!to_size(size, &len)) {
    ::close(fd);
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "blob %s is too large for this platform", file);
  }
  FileDesc f{};
  char *p = m->arena.copy(path, plen + 1);
  if (!p) {
    ::close(fd);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  f.path = p;
  f.path_len = plen;
  r = source_from_fd(fd, len, limits.mode, m->alloc, &f.source, file, diag);
  ::close(fd);
  if (r != TBLOB_OK) return r;
  if (!m->files.push(f)) {
    source_close(&f.source, m->alloc);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  *file_name = m->files[m->files.size() - 1].path + plen - kDigestChars;
  return TBLOB_OK;
}

Status add_blob(tblob_model *m, const tblob_store &s, const LayerRec &layer, size_t layer_index,
                const Limits &limits, bool *is_data_blob, const Diag &diag) {
  *is_data_blob = false;
  const char *file = nullptr;
  const Status r = add_blob_file(m, s, layer, layer_index, limits, &file, diag);
  if (r != TBLOB_OK) return r;
  return scan_and_layout(m, static_cast<uint32_t>(m->files.size() - 1), layer, file, limits, is_data_blob, diag);
}

Status add_data_alias(tblob_model *m, const LayerRec &layer, size_t row, const Diag &diag) {
  const FileDesc &f = m->files[m->tensors[row].file_index];
  const char *file = f.path + f.path_len - kDigestChars;
  if (layer.name_len == 0)
    return diag.fail(TBLOB_E_OLLAMA_LAYER_MISMATCH, TBLOB_NO_OFFSET, -1,
                     "blob %s holds the single tensor \"data\", which takes its layer's name, "
                     "but the layer has no name", file);
  TensorDesc t = m->tensors[row];
  t.name = layer.name;  // copied into m's arena by the caller
  t.name_len = layer.name_len;
  const Status c = check_layer_tensor(layer, t, m->tensors.size(), file, diag);
  if (c != TBLOB_OK) return c;
  if (!m->tensors.push(t)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  return TBLOB_OK;
}

}  // namespace ollama
}  // namespace tblob
