// A store model as one tblob_model: every tensor of every tensor blob, each blob a file.
// Also the tblob_model_open hooks: a store root, "<root>/<name>", a manifest file.
#include <cerrno>
#include <cstdio>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

#include "table/name_index.h"
#include "formats/ollama/ollama.h"
#include "formats/safetensors/safetensors.h"
#include "tblob_config.h"
#if TBLOB_HAVE_GGUF
#include "formats/gguf/gguf.h"
#endif

namespace tblob {
namespace ollama {

namespace {

void digest_of(const void *ctx, size_t i, const char **p, size_t *n) {
  const LayerRec &r = static_cast<const LayerRec *>(ctx)[i];
  *p = r.digest;
  *n = kDigestChars;
}

void meta_name(const void *ctx, size_t i, const char **p, size_t *n) {
  const MetaDesc &d = static_cast<const MetaDesc *>(ctx)[i];
  *p = d.name;
  *n = d.name_len;
}

bool push_meta(tblob_model *m, const char *k, const char *v, size_t vn) {
  const char *copy = meta_len_ok(std::strlen(k), vn) ? m->arena.copy(v, vn) : nullptr;
  return copy && m->metadata.push(meta_desc(k, std::strlen(k), copy, vn));
}

#if TBLOB_HAVE_GGUF
constexpr char kModelType[] = "application/vnd.ollama.image.model";

Status read_gguf_blob(tblob_model *m, uint32_t fi, const char *file, size_t layer_index, const Limits &limits,
                      const Diag &diag);

// The model layer's blob as the model's only file, read as GGUF (formats/gguf).
Status fill_gguf(tblob_model *m, const tblob_store &s, const LayerRec &layer, size_t layer_index,
                 const char *full_name, const Limits &limits, const Diag &diag) {
  const char *file = nullptr;
  Status st = add_blob_file(m, s, layer, layer_index, limits, &file, diag);
  if (st != TBLOB_OK) return st;
  const uint32_t fi = static_cast<uint32_t>(m->files.size() - 1);
  const Source &src = m->files[fi].source;
  if (!gguf::looks_like(src.data, src.len))
    return diag.fail(TBLOB_E_OLLAMA_NO_TENSORS, 0, -1,
                     "model %s: its %s layer (blob %s) is not a GGUF file and it has no tensor layers", full_name,
                     kModelType, file);
  return read_gguf_blob(m, fi, file, layer_index, limits, diag);
}

// File fi of m (a blob) read as GGUF, then indexed.
Status read_gguf_blob(tblob_model *m, uint32_t fi, const char *file, size_t layer_index, const Limits &limits,
                      const Diag &diag) {
  tblob_diag inner = TBLOB_DIAG_INIT;
  Diag d;
  d.out = &inner;
  Status st = gguf::read_file(m, fi, limits, d);
  if (st != TBLOB_OK)  // name the blob: the offsets are in it
    return diag.fail(st, inner.offset, inner.tensor_index, "blob %s (layers[%zu]): %s", file, layer_index, inner.message);
  if ((st = m->index_names(diag)) != TBLOB_OK) return st;
  if (!m->metadata_index.build(&m->alloc, m->metadata.size(), meta_name, m->metadata.data()))
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  return TBLOB_OK;
}
#endif

constexpr char kProjectorType[] = "application/vnd.ollama.image.projector";
constexpr char kAdapterType[] = "application/vnd.ollama.image.adapter";

bool media_is(const LayerRec &l, const char *type, size_t n) {
  return l.media_type_len == n && std::memcmp(l.media_type, type, n) == 0;
}

// One layer's blob alone as the model (a projector, an adapter, or any layer by index): GGUF
// when its content says so, else safetensors, after the store keys and the layer's own.
Status fill_part(tblob_model *m, const tblob_store &s, const tblob_manifest &man, const char *full_name,
                 const Limits &limits, const PartSelect &sel, const Diag &diag) {
  m->format = TBLOB_FORMAT_OLLAMA;
  const size_t n = man.layers.size();
  size_t pick = n;
  if (sel.part == TBLOB_STORE_PART_LAYER) {
    if (sel.index < n) pick = static_cast<size_t>(sel.index);
  } else {
    const char *type = sel.part == TBLOB_STORE_PART_PROJECTOR ? kProjectorType : kAdapterType;
    const size_t tn = std::strlen(type);
    uint64_t seen = 0;
    for (size_t i = 0; i < n && pick == n; ++i)
      if (media_is(man.layers[i], type, tn) && seen++ == sel.index) pick = i;
  }
  if (pick == n) {
    const unsigned long long k = static_cast<unsigned long long>(sel.index);
    if (sel.part == TBLOB_STORE_PART_LAYER)
      return diag.fail(TBLOB_E_OLLAMA_COMPONENT, TBLOB_NO_OFFSET, -1, "model %s has %zu layers; there is no layers[%llu]",
                       full_name, n, k);
    return diag.fail(TBLOB_E_OLLAMA_COMPONENT, TBLOB_NO_OFFSET, -1, "model %s has no %s layer number %llu (%s)", full_name,
                     sel.part == TBLOB_STORE_PART_PROJECTOR ? "projector" : "adapter", k,
                     sel.part == TBLOB_STORE_PART_PROJECTOR ? kProjectorType : kAdapterType);
  }
  const LayerRec &layer = man.layers[pick];
  char idx[24];
  const int il = std::snprintf(idx, sizeof(idx), "%zu", pick);
  if (!push_meta(m, "ollama.name", full_name, std::strlen(full_name)) ||
      !push_meta(m, "ollama.manifest_id", man.id, 64) || !push_meta(m, "ollama.layer", idx, static_cast<size_t>(il)) ||
      !push_meta(m, "ollama.media_type", layer.media_type, layer.media_type_len))
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  LayerRec copy = layer;
  if (layer.name_len) {
    copy.name = m->arena.copy(layer.name, layer.name_len);
    if (!copy.name) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
#if TBLOB_HAVE_GGUF
  {
    const char *file = nullptr;
    Status st = add_blob_file(m, s, copy, pick, limits, &file, diag);
    if (st != TBLOB_OK) return st;
    const uint32_t fi = static_cast<uint32_t>(m->files.size() - 1);
    const Source &src = m->files[fi].source;
    if (gguf::looks_like(src.data, src.len)) return read_gguf_blob(m, fi, file, pick, limits, diag);
    // Not GGUF: read the same file as safetensors below.
    source_close(&m->files[fi].source, m->alloc);
    m->files.pop();
  }
#endif
  bool is_data = false;
  Status st = add_blob(m, s, copy, pick, limits, &is_data, diag);
  if (st != TBLOB_OK) return st;
  if ((st = m->index_names(diag)) != TBLOB_OK) return st;
  if (!m->metadata_index.build(&m->alloc, m->metadata.size(), meta_name, m->metadata.data()))
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  CompanionOptions companions;
  companions.per_file_metadata = true;
  companions.max_json_depth = limits.max_json_depth;
  return st_resolve_companions(m, companions, diag);
}

Status fill_model(tblob_model *m, const tblob_store &s, const tblob_manifest &man, const char *full_name,
                  const Limits &limits, const char *component, size_t component_len, const Diag &diag) {
  m->format = TBLOB_FORMAT_OLLAMA;
  if (!push_meta(m, "ollama.name", full_name, std::strlen(full_name)) ||
      !push_meta(m, "ollama.manifest_id", man.id, 64))
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  const size_t n = man.layers.size();
  size_t tensor_layers = 0;
  for (size_t i = 0; i < n; ++i) tensor_layers += man.layers[i].kind == TBLOB_LAYER_TENSOR;
  if (tensor_layers == 0) {
#if TBLOB_HAVE_GGUF
    // Most models in a store are one GGUF blob: the layer of media type ...image.model.
    for (size_t i = 0; i < n; ++i)
      if (man.layers[i].media_type_len == sizeof(kModelType) - 1 &&
          std::memcmp(man.layers[i].media_type, kModelType, sizeof(kModelType) - 1) == 0)
        return fill_gguf(m, s, man.layers[i], i, full_name, limits, diag);
#endif
    return diag.fail(TBLOB_E_OLLAMA_NO_TENSORS, TBLOB_NO_OFFSET, -1,
                     "model %s has no %s layers (%zu layers in all; a GGUF model?)", full_name,
                     "application/vnd.ollama.image.tensor", n);
  }
  // First layer of each digest; state per first layer: 0 not opened, 1 opened, 2 opened
  // as a renamed "data" blob (each further layer of that digest gets its own row over the
  // same file, data_row[first]: one file per distinct blob, however many layers share it).
  NameIndex by_digest;
  if (!by_digest.build(&m->alloc, n, digest_of, man.layers.data())) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  PodVec<uint8_t> state(&m->alloc);
  PodVec<size_t> data_row(&m->alloc);
  if (!state.reserve(n) || !data_row.reserve(n)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  for (size_t i = 0; i < n; ++i) {
    state.push(0);
    data_row.push(0);
  }
  size_t opened = 0;
  for (size_t i = 0; i < n; ++i) {
    const LayerRec &layer = man.layers[i];
    if (layer.kind != TBLOB_LAYER_TENSOR) continue;
    if (component) {
      const char *slash = layer.name_len ? static_cast<const char *>(std::memchr(layer.name, '/', layer.name_len)) : nullptr;
      if (!slash || static_cast<size_t>(slash - layer.name) != component_len ||
          std::memcmp(layer.name, component, component_len) != 0)
        continue;
    }
    const size_t first = by_digest.find(layer.digest, kDigestChars);
    if (first < n && state[first] == 1) continue;  // the same blob, already listed
    LayerRec copy = layer;
    if (layer.name_len) {
      copy.name = m->arena.copy(layer.name, layer.name_len);
      if (!copy.name) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
    if (first < n && state[first] == 2) {
      if (m->tensors.size() >= limits.max_tensors)
        return diag.fail(TBLOB_E_LIMIT_TENSORS, TBLOB_NO_OFFSET, -1, "the model has more than %llu tensors (max_tensors)",
                         static_cast<unsigned long long>(limits.max_tensors));
      const Status st = add_data_alias(m, copy, data_row[first], diag);
      if (st != TBLOB_OK) return st;
      ++opened;
      continue;
    }
    bool is_data = false;
    const Status st = add_blob(m, s, copy, i, limits, &is_data, diag);
    if (st != TBLOB_OK) return st;
    if (first < n) {
      state[first] = is_data ? 2 : 1;
      if (is_data) data_row[first] = m->files[m->files.size() - 1].tensor_begin;
    }
    ++opened;
  }
  if (opened == 0)
    return diag.fail(TBLOB_E_OLLAMA_COMPONENT, TBLOB_NO_OFFSET, -1,
                     "model %s has no tensor layer named \"%.*s/...\"", full_name,
                     static_cast<int>(component_len > 64 ? 64 : component_len), component);
  Status st = m->index_names(diag);
  if (st != TBLOB_OK) return st;
  if (!m->metadata_index.build(&m->alloc, m->metadata.size(), meta_name, m->metadata.data()))
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  // Combined quantized blobs (name + name.scale + name.bias, quant_type / group_size in each
  // blob's own __metadata__) become one logical tensor, as in a single safetensors file.
  CompanionOptions companions;
  companions.per_file_metadata = true;
  companions.max_json_depth = limits.max_json_depth;
  return st_resolve_companions(m, companions, diag);
}

}  // namespace

Status open_model(const tblob_store &s, const ModelName &name, const Limits &limits,
                  const char *component, size_t component_len, tblob_model **out,
                  const Diag &diag, const PartSelect &part) {
  *out = nullptr;
  tblob_manifest *man = nullptr;
  Status st = load_manifest(s, name, &man, nullptr, diag);
  if (st != TBLOB_OK) return st;
  tblob_model *m = model_new(limits.allocator);
  if (!m) {
    manifest_free(man);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  char full[kFullNameBuf];
  format_full_name(name, full);
  st = part.part == TBLOB_STORE_PART_MODEL ? fill_model(m, s, *man, full, limits, component, component_len, diag)
                                           : fill_part(m, s, *man, full, limits, part, diag);
  manifest_free(man);
  if (st != TBLOB_OK) {
    model_free(m);
    return st;
  }
  *out = m;
  return TBLOB_OK;
}

namespace {

Status open_in_store(const char *root, const char *name, size_t name_len, const Limits &limits,
                     tblob_model **out, const Diag &diag) {
  ModelName mn;
  Status st = parse_name(name, name_len, &mn, diag);
  if (st != TBLOB_OK) return st;
  tblob_store *s = nullptr;
  tblob_store_options o = TBLOB_STORE_OPTIONS_INIT;
  o.allocator = limits.allocator;
  if ((st = store_open(root, &o, &s, diag)) != TBLOB_OK) return st;
  st = open_model(*s, mn, limits, nullptr, 0, out, diag);
  store_close(s);
  return st;
}

// A store root given to tblob_model_open: its only model.
Status open_store_root(const char *root, const Limits &limits, tblob_model **out, const Diag &diag) {
  tblob_store *s = nullptr;
  tblob_store_options o = TBLOB_STORE_OPTIONS_INIT;
  o.allocator = limits.allocator;
  Status st = store_open(root, &o, &s, diag);
  if (st != TBLOB_OK) return st;
  PodVec<ListedName> names(&s->alloc);
  st = list_manifest_names(*s, &names, diag);
  size_t valid = 0, pick = 0;
  for (size_t i = 0; st == TBLOB_OK && i < names.size(); ++i)
    if (names[i].status == TBLOB_OK) {
      if (valid == 0) pick = i;
      ++valid;
    }
  if (st == TBLOB_OK) {
    if (valid == 1) {
      st = open_model(*s, names[pick].name, limits, nullptr, 0, out, diag);
    } else if (valid == 0) {
      st = diag.fail(TBLOB_E_OLLAMA_MODEL_NOT_FOUND, TBLOB_NO_OFFSET, -1, "store %s holds no models", root);
    } else {
      st = diag.fail(TBLOB_E_OLLAMA_MODEL_REQUIRED, TBLOB_NO_OFFSET, -1,
                     "store %s holds %zu models; open \"%s/<name>\", e.g. %s/%s", root, valid, root, root,
                     names[pick].raw);
    }
  }
  names.reset();
  store_close(s);
  return st;
}

// realpath(path) = <root>/manifests/<h>/<n>/<m>/<t>: the store root and the name.
bool split_manifest_path(const char *path, char *root, size_t root_cap, char *name, size_t name_cap) {
  char real[PATH_MAX];
  if (!::realpath(path, real)) return false;
  size_t n = std::strlen(real);
  size_t cut[5];
  for (int k = 0; k < 5; ++k) {
    while (n > 0 && real[n - 1] != '/') --n;
    if (n == 0) return false;
    cut[k] = n;  // start of component k from the end
    --n;         // the '/'
  }
  // cut[4] starts "manifests"
  if (std::strncmp(real + cut[4], "manifests/", 10) != 0) return false;
  const size_t root_len = cut[4] - 1;
  if (root_len + 1 > root_cap) return false;
  std::memcpy(root, real, root_len);
  root[root_len] = '\0';
  if (root_len == 0) {
    root[0] = '/';
    root[1] = '\0';
  }
  // h/n/m/t -> "h/n/m:t"
  const size_t tail = std::strlen(real + cut[3]);
  if (tail + 1 > name_cap) return false;
  std::memcpy(name, real + cut[3], tail + 1);
  char *last = std::strrchr(name, '/');
  if (!last) return false;
  *last = ':';
  return true;
}

}  // namespace

bool looks_like_manifest(const uint8_t *p, size_t n) {
  size_t i = 0;
  while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')) ++i;
  if (i >= n || p[i] != '{') return false;
  static const char kKey[] = "\"schemaVersion\"";
  const size_t k = sizeof(kKey) - 1;
  for (; i + k <= n; ++i)
    if (std::memcmp(p + i, kKey, k) == 0) return true;
  return false;
}

Status open_manifest_path(const char *path, const Limits &limits, tblob_model **out, const Diag &diag) {
  char root[PATH_MAX], name[PATH_MAX];
  if (!split_manifest_path(path, root, sizeof(root), name, sizeof(name)) || !looks_like_store(root))
    return diag.fail(TBLOB_E_OLLAMA_NOT_A_STORE, TBLOB_NO_OFFSET, -1,
                     "%s looks like an Ollama manifest but is not at <store>/manifests/<host>/<namespace>/<model>/<tag>, "
                     "so its blobs cannot be found", path);
  return open_in_store(root, name, std::strlen(name), limits, out, diag);
}

Status try_open_path(const char *path, const Limits &limits, tblob_model **out, bool *handled,
                     const Diag &diag) {
  *handled = false;
  struct stat st;
  if (::stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      if (!looks_like_store(path)) return TBLOB_OK;
      *handled = true;
      return open_store_root(path, limits, out, diag);
    }
    if (S_ISREG(st.st_mode)) {
      char root[PATH_MAX], name[PATH_MAX];
      if (split_manifest_path(path, root, sizeof(root), name, sizeof(name)) && looks_like_store(root)) {
        *handled = true;
        return open_in_store(root, name, std::strlen(name), limits, out, diag);
      }
    }
    return TBLOB_OK;
  }
  if (errno != ENOENT) return TBLOB_OK;
  // "<root>/<name>": the nearest ancestor that is a store; the rest is the model name.
  const size_t n = std::strlen(path);
  if (n >= PATH_MAX) return TBLOB_OK;
  char prefix[PATH_MAX];
  for (size_t i = n; i > 0; --i) {
    if (path[i - 1] != '/') continue;
    const size_t plen = i - 1;
    if (plen == 0) break;
    std::memcpy(prefix, path, plen);
    prefix[plen] = '\0';
    if (!looks_like_store(prefix)) continue;
    *handled = true;
    return open_in_store(prefix, path + i, n - i, limits, out, diag);
  }
  return TBLOB_OK;
}

}  // namespace ollama
}  // namespace tblob
