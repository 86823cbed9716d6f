#include "formats/open.h"

#include <cstring>

#include "formats/safetensors/safetensors.h"
#include "tblob_config.h"

namespace tblob {

namespace {

constexpr char kShardIndexName[] = "model.safetensors.index.json";

Status add_file(tblob_model *m, const char *path, uint32_t mode, const Diag &diag) {
  FileDesc f{};
  const size_t n = std::strlen(path);
  char *p = m->arena.copy(path, n + 1);
  if (!p) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  f.path = p;
  f.path_len = n;
  Status s = source_open_file(path, mode, m->alloc, &f.source, diag);
  if (s != TBLOB_OK) return s;
  if (!m->files.push(f)) {
    source_close(&f.source, m->alloc);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  return TBLOB_OK;
}

// Opens the shard index at index_path (its directory holds the shards).
Status open_shard_index(tblob_model *m, const char *index_path, const Limits &limits,
                        const Diag &diag) {
  Source idx;
  Status s = source_open_file(index_path, TBLOB_OPEN_READ, m->alloc, &idx, diag);
  if (s != TBLOB_OK) return s;
  const size_t n = std::strlen(index_path);
  size_t cut = n;
  while (cut > 0 && index_path[cut - 1] != '/') --cut;
  char *dir = static_cast<char *>(m->arena.alloc(cut + 2));
  if (!dir) {
    source_close(&idx, m->alloc);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  if (cut == 0) {
    dir[0] = '.';
    dir[1] = '\0';
  } else {
    std::memcpy(dir, index_path, cut - 1 ? cut - 1 : 1);
    dir[cut - 1 ? cut - 1 : 1] = '\0';
  }
  s = st_open_sharded(m, dir, idx.data, idx.len, limits, diag);
  source_close(&idx, m->alloc);
  return s;
}

Status finish(tblob_model *m, Status s, tblob_model **out) {
  if (s != TBLOB_OK) {
    model_free(m);
    return s;
  }
  *out = m;
  return TBLOB_OK;
}

}  // namespace

Status open_path(const char *path, const Limits &limits, tblob_model **out, const Diag &diag) {
  tblob_model *m = model_new(limits.allocator);
  if (!m) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  Status s;
#if TBLOB_HAVE_OLLAMA
  {  // Ollama: a store root, "<root>/<model>[:tag]" or <root>/manifests/<h>/<n>/<m>/<t>
    Status ollama_try_open_path(const char *, const Limits &, tblob_model **, bool *, const Diag &);
    bool handled = false;
    s = ollama_try_open_path(path, limits, out, &handled, diag);
    if (handled) {
      model_free(m);
      return s;
    }
  }
#endif
  // @@detect-path (formats that recognise a path before the safetensors fallbacks)
#if TBLOB_HAVE_UQFF
  {  // UQFF: a directory holding *.uqff shards or uqff_report.json (formats/uqff/uqff_detect.cpp)
    bool uqff_is_dir(const char *);
    Status uqff_open_detected(tblob_model *, const char *, const Limits &, const Diag &);
    if (path_is_directory(path) && uqff_is_dir(path)) return finish(m, uqff_open_detected(m, path, limits, diag), out);
  }
#endif
  if (path_is_directory(path)) {
    const size_t n = std::strlen(path);
    char *index = static_cast<char *>(m->arena.alloc(n + sizeof(kShardIndexName) + 1));
    if (!index) return finish(m, diag.fail_plain(TBLOB_E_OUT_OF_MEMORY), out);
    std::memcpy(index, path, n);
    size_t k = n;
    if (k == 0 || index[k - 1] != '/') index[k++] = '/';
    std::memcpy(index + k, kShardIndexName, sizeof(kShardIndexName));
    if (path_is_regular_file(index)) return finish(m, open_shard_index(m, index, limits, diag), out);
    return finish(m, diag.fail(TBLOB_E_UNKNOWN_FORMAT, TBLOB_NO_OFFSET, -1,
                               "directory %s holds no container this build reads (no %s)", path,
                               kShardIndexName),
                  out);
  }
  uint8_t head[4096];
  const long long got = read_file_prefix(path, head, sizeof(head));
  if (got < 0) {
    s = add_file(m, path, limits.mode, diag);  // reports the open error
    return finish(m, s == TBLOB_OK ? diag.fail_plain(TBLOB_E_IO) : s, out);
  }
#if TBLOB_HAVE_OLLAMA
  {  // an Ollama manifest outside a store layout: say so instead of reading it as safetensors
    bool ollama_looks_like_manifest(const uint8_t *, size_t);
    Status ollama_open_manifest_path(const char *, const Limits &, tblob_model **, const Diag &);
    if (ollama_looks_like_manifest(head, static_cast<size_t>(got))) {
      model_free(m);
      return ollama_open_manifest_path(path, limits, out, diag);
    }
  }
#endif
  // @@detect-content (formats recognised by their first bytes: magic numbers)
#if TBLOB_HAVE_GGUF
  {  // GGUF: magic "GGUF" (docs/gguf.md); formats/gguf/gguf_reader.cpp defines these
    bool gguf_looks_like(const uint8_t *, size_t);
    Status gguf_open_detected(tblob_model *, const Limits &, const Diag &);
    if (gguf_looks_like(head, static_cast<size_t>(got))) {
      s = add_file(m, path, limits.mode, diag);
      if (s == TBLOB_OK) s = gguf_open_detected(m, limits, diag);
      return finish(m, s, out);
    }
  }
#endif
#if TBLOB_HAVE_SLM1
  {  // SLM1: magic "SLM1" (docs/slm1.md); formats/slm1/slm1.h declares these
    bool slm1_looks_like(const uint8_t *, size_t);
    Status slm1_open_detected(tblob_model *, const Limits &, const Diag &);
    if (slm1_looks_like(head, static_cast<size_t>(got))) {
      s = add_file(m, path, limits.mode, diag);
      if (s == TBLOB_OK) s = slm1_open_detected(m, limits, diag);
      return finish(m, s, out);
    }
  }
#endif
  if (st_looks_like_shard_index(head, static_cast<size_t>(got), path_file_size(path)))
    return finish(m, open_shard_index(m, path, limits, diag), out);
  // Anything else is read as safetensors, whose checks say precisely what is wrong.
  s = add_file(m, path, limits.mode, diag);
  if (s == TBLOB_OK) s = st_open_single(m, limits, diag);
#if TBLOB_HAVE_UQFF
  {  // A UQFF shard is a valid safetensors file whose entry names say UQFF: decided from the
     // table just built, then opened as a shard set (formats/uqff/uqff_detect.cpp).
    bool uqff_table_says_shard(const tblob_model *, const char *);
    Status uqff_open_detected(tblob_model *, const char *, const Limits &, const Diag &);
    if (s == TBLOB_OK && uqff_table_says_shard(m, path)) {
      model_free(m);
      m = model_new(limits.allocator);
      if (!m) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      return finish(m, uqff_open_detected(m, path, limits, diag), out);
    }
  }
#endif
  return finish(m, s, out);
}

Status open_memory(const void *buf, size_t len, const Limits &limits, tblob_model **out,
                   const Diag &diag) {
  tblob_model *m = model_new(limits.allocator);
  if (!m) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  FileDesc f{};
  f.path = "";
  source_borrow(buf, len, &f.source);
  if (!m->files.push(f)) return finish(m, diag.fail_plain(TBLOB_E_OUT_OF_MEMORY), out);
#if TBLOB_HAVE_GGUF
  {
    bool gguf_looks_like(const uint8_t *, size_t);
    Status gguf_open_detected(tblob_model *, const Limits &, const Diag &);
    if (gguf_looks_like(static_cast<const uint8_t *>(buf), len)) return finish(m, gguf_open_detected(m, limits, diag), out);
  }
#endif
  return finish(m, st_open_single(m, limits, diag), out);
}

}  // namespace tblob
