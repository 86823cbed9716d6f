// The extern "C" functions of the Ollama part: argument checks, then the internals.
#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "capi/capi_common.h"
#include "formats/ollama/ollama.h"
#include "hash/sha256.h"

using tblob::Diag;
using tblob::Status;
using tblob::capi::bad_arg;
using tblob::capi::begin;
namespace ol = tblob::ollama;

namespace {

bool has_field(uint32_t struct_size, size_t offset, size_t size) { return offset + size <= struct_size; }

void fill_layer_info(const ol::LayerRec &l, uint32_t kind, tblob_layer_info *info) {
  const uint32_t n = info->struct_size;
#define TBLOB_SET(field, value) \
  if (has_field(n, offsetof(tblob_layer_info, field), sizeof(info->field))) info->field = value;
  TBLOB_SET(kind, kind)
  TBLOB_SET(media_type, l.media_type)
  TBLOB_SET(media_type_len, l.media_type_len)
  TBLOB_SET(digest, l.digest)
  TBLOB_SET(digest_len, ol::kDigestChars)
  TBLOB_SET(size, l.size)
  TBLOB_SET(name, l.name ? l.name : "")
  TBLOB_SET(name_len, l.name_len)
  TBLOB_SET(from, l.from ? l.from : "")
  TBLOB_SET(from_len, l.from_len)
  TBLOB_SET(dtype, l.dtype)
  TBLOB_SET(has_shape, l.has_shape)
  TBLOB_SET(shape, l.shape)
  TBLOB_SET(rank, l.rank)
#undef TBLOB_SET
}

}  // namespace

extern "C" {

TBLOB_API tblob_status tblob_store_open(const char *root, const tblob_store_options *options,
                                        tblob_store **out, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!out) return bad_arg(d, "out is required");
  *out = nullptr;
  return ol::store_open(root, options, out, d);
}

TBLOB_API void tblob_store_close(tblob_store *store) noexcept { ol::store_close(store); }

TBLOB_API tblob_status tblob_store_root(const tblob_store *store, const char **path, size_t *path_len,
                                        tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!store || !path) return bad_arg(d, "store and path are required");
  *path = store->root;
  if (path_len) *path_len = store->root_len;
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_ollama_name_canonical(const char *name, size_t name_len, char *buf,
                                                   size_t buf_capacity, size_t *out_len,
                                                   tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if ((!name && name_len) || !out_len || (!buf && buf_capacity)) return bad_arg(d, "name, out_len (and buf with a capacity)");
  ol::ModelName mn;
  Status s = ol::parse_name(name, name_len, &mn, d);
  if (s != TBLOB_OK) return s;
  char full[ol::kFullNameBuf];
  const size_t n = ol::format_full_name(mn, full);
  *out_len = n;
  if (buf_capacity < n + 1)
    return d.fail(TBLOB_E_BUFFER_TOO_SMALL, TBLOB_NO_OFFSET, -1, "the name needs %zu bytes", n + 1);
  std::memcpy(buf, full, n + 1);
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_ollama_digest_check(const char *digest, size_t digest_len, uint32_t form,
                                                 tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (form > 1 || (!digest && digest_len)) return bad_arg(d, "form is 0 or 1; digest when digest_len > 0");
  if (ol::digest_valid(digest, digest_len, form == 0 ? ol::DigestForm::kManifest : ol::DigestForm::kFile))
    return TBLOB_OK;
  const char *ell;
  const int shown = tblob::clip_name(digest_len, &ell);
  return d.fail(TBLOB_E_OLLAMA_DIGEST, TBLOB_NO_OFFSET, -1, "digest \"%.*s%s\" is not %s<64 lowercase hex>",
                shown, digest ? digest : "", ell, form == 0 ? "sha256:" : "sha256-");
}

TBLOB_API tblob_status tblob_store_list(const tblob_store *store, tblob_store_entry_fn fn, void *user,
                                        tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!store || !fn) return bad_arg(d, "store and fn are required");
  tblob::PodVec<ol::ListedName> names(&store->alloc);
  Status s = ol::list_manifest_names(*store, &names, d);
  if (s != TBLOB_OK) return s;
  for (size_t i = 0; i < names.size(); ++i) {
    const ol::ListedName &ln = names[i];
    tblob_store_entry e;
    std::memset(&e, 0, sizeof(e));
    e.struct_size = sizeof(e);
    char full[ol::kFullNameBuf], short_name[ol::kFullNameBuf];
    tblob_diag inner = TBLOB_DIAG_INIT;
    Diag id;
    id.out = &inner;
    tblob_manifest *man = nullptr;
    if (ln.status == TBLOB_OK) {
      e.name_len = ol::format_full_name(ln.name, full);
      e.short_name_len = ol::format_short_name(ln.name, short_name);
      e.name = full;
      e.short_name = short_name;
      e.status = ol::load_manifest(*store, ln.name, &man, &e.modified_unix, id);
    } else {
      e.name = e.short_name = ln.raw;
      e.name_len = e.short_name_len = std::strlen(ln.raw);
      if (ln.name.host_len) {  // a valid name whose manifest is not a readable file
        e.name_len = ol::format_full_name(ln.name, full);
        e.short_name_len = ol::format_short_name(ln.name, short_name);
        e.name = full;
        e.short_name = short_name;
      }
      e.status = ln.status;
      id.fail(ln.status, TBLOB_NO_OFFSET, -1, "manifest entry %s %s", ln.raw,
              ln.status == TBLOB_E_OLLAMA_PATH       ? "is a symlink"
              : ln.status == TBLOB_E_OLLAMA_NOT_A_FILE ? "is not a file"
                                                     : "does not follow the name grammar");
    }
    e.manifest_id = "";
    if (man) {
      e.manifest_id = man->id;
      e.manifest_id_len = 64;
      e.manifest_bytes = man->bytes;
      e.total_bytes = man->config.size;
      e.layer_count = man->layers.size();
      for (size_t k = 0; k < man->layers.size(); ++k) {
        e.total_bytes += man->layers[k].size;
        e.tensor_layer_count += man->layers[k].kind == TBLOB_LAYER_TENSOR;
      }
    }
    e.message = inner.message;
    const int stop = fn(user, &e);
    ol::manifest_free(man);
    if (stop) return d.fail(TBLOB_E_CANCELLED, TBLOB_NO_OFFSET, -1, "listing stopped by the callback");
  }
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_store_manifest_open(const tblob_store *store, const char *name, size_t name_len,
                                                 tblob_manifest **out, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (out) *out = nullptr;
  if (!store || !out || (!name && name_len)) return bad_arg(d, "store, name and out are required");
  ol::ModelName mn;
  Status s = ol::parse_name(name, name_len, &mn, d);
  if (s != TBLOB_OK) return s;
  return ol::load_manifest(*store, mn, out, nullptr, d);
}

TBLOB_API tblob_status tblob_manifest_parse(const void *buf, size_t len, const tblob_store_options *options,
                                            tblob_manifest **out, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (out) *out = nullptr;
  if (!out || (!buf && len)) return bad_arg(d, "buf (when len > 0) and out are required");
  uint64_t max = TBLOB_OLLAMA_MAX_MANIFEST;
  const tblob_allocator *hook = nullptr;
  if (options) {
    if (!TBLOB_COVERS(options, flags))
      return bad_arg(d, "options->struct_size");
    if (has_field(options->struct_size, offsetof(tblob_store_options, max_manifest_bytes), sizeof(uint64_t)))
      max = options->max_manifest_bytes;
    if (has_field(options->struct_size, offsetof(tblob_store_options, allocator), sizeof(void *)))
      hook = options->allocator;
  }
  tblob_manifest *m = ol::manifest_new(hook);
  if (!m) return d.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  Status s = ol::parse_manifest(static_cast<const uint8_t *>(buf), len, max, m, d);
  if (s != TBLOB_OK) {
    ol::manifest_free(m);
    return s;
  }
  *out = m;
  return TBLOB_OK;
}

TBLOB_API void tblob_manifest_close(tblob_manifest *manifest) noexcept { ol::manifest_free(manifest); }

TBLOB_API uint64_t tblob_manifest_layer_count(const tblob_manifest *manifest) noexcept {
  return manifest ? manifest->layers.size() : 0;
}

TBLOB_API tblob_status tblob_manifest_layer_at(const tblob_manifest *manifest, uint64_t index,
                                               tblob_layer_info *info, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!manifest || !info) return bad_arg(d, "manifest and info are required");
  if (!TBLOB_COVERS(info, kind))
    return bad_arg(d, "info->struct_size (use TBLOB_LAYER_INFO_INIT)");
  if (index == TBLOB_LAYER_CONFIG_INDEX) {
    if (!manifest->has_config) return d.fail(TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1, "the manifest has no config");
    fill_layer_info(manifest->config, TBLOB_LAYER_CONFIG, info);
    return TBLOB_OK;
  }
  if (index >= manifest->layers.size())
    return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "layer %llu out of range (%zu layers)",
                  static_cast<unsigned long long>(index), manifest->layers.size());
  const ol::LayerRec &l = manifest->layers[static_cast<size_t>(index)];
  fill_layer_info(l, l.kind, info);
  return TBLOB_OK;
}

TBLOB_API tblob_status tblob_store_read_layer(const tblob_store *store, const tblob_manifest *manifest,
                                              uint64_t index, void *buf, size_t buf_capacity, size_t *out_len,
                                              tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!store || !manifest || !out_len || (!buf && buf_capacity)) return bad_arg(d, "store, manifest, out_len");
  *out_len = 0;
  const ol::LayerRec *l;
  bool json;
  if (index == TBLOB_LAYER_CONFIG_INDEX) {
    if (!manifest->has_config) return d.fail(TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1, "the manifest has no config");
    l = &manifest->config;
    json = true;
  } else {
    if (index >= manifest->layers.size())
      return d.fail(TBLOB_E_RANGE, TBLOB_NO_OFFSET, -1, "layer %llu out of range", static_cast<unsigned long long>(index));
    l = &manifest->layers[static_cast<size_t>(index)];
    json = l->kind == TBLOB_LAYER_JSON;
  }
  int fd;
  struct stat st;
  Status s = ol::open_blob(*store, l->digest, ol::kDigestChars, &fd, &st, d);
  if (s != TBLOB_OK) return s;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  Status r = TBLOB_OK;
  if (size == 0) {
    r = d.fail(TBLOB_E_OLLAMA_BLOB_EMPTY, 0, -1, "blob of %.19s... is empty (hash e3b0c442...)", l->digest);
  } else if (size != l->size) {
    r = d.fail(TBLOB_E_OLLAMA_BLOB_SIZE, TBLOB_NO_OFFSET, -1, "blob sha256-%.12s... is %llu bytes; the manifest says %llu",
               l->digest + 7, static_cast<unsigned long long>(size), static_cast<unsigned long long>(l->size));
  } else if (json && size > store->max_config_bytes) {
    r = d.fail(TBLOB_E_OLLAMA_LIMIT_CONFIG, TBLOB_NO_OFFSET, -1, "layer blob sha256-%.12s... is %llu bytes, above max_config_bytes",
               l->digest + 7, static_cast<unsigned long long>(size));
  } else if (size > SIZE_MAX) {
    r = d.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "blob too large for this platform");
  } else {
    *out_len = static_cast<size_t>(size);
    if (buf_capacity < size) {
      r = d.fail(TBLOB_E_BUFFER_TOO_SMALL, TBLOB_NO_OFFSET, -1, "the layer is %llu bytes",
                 static_cast<unsigned long long>(size));
    } else {
      size_t got = 0;
      uint8_t *dst = static_cast<uint8_t *>(buf);
      while (got < size) {
        const ssize_t k = ::pread(fd, dst + got, static_cast<size_t>(size) - got, static_cast<off_t>(got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += static_cast<size_t>(k);
      }
      uint8_t dg[tblob::kSha256Bytes];
      char hex[64];
      if (got != size) {
        r = d.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "short read of blob sha256-%.12s...", l->digest + 7);
      } else if (!tblob::sha256(dst, got, dg)) {
        r = d.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      } else if (tblob::sha256_hex(dg, hex), std::memcmp(hex, l->digest + 7, 64) != 0) {
        r = d.fail(TBLOB_E_DIGEST_MISMATCH, TBLOB_NO_OFFSET, -1, "blob sha256-%.12s... has content hash sha256:%.12s...",
                   l->digest + 7, hex);
      } else if (json && !ol::json_document_valid(dst, got)) {
        r = d.fail(TBLOB_E_OLLAMA_CONFIG_JSON, TBLOB_NO_OFFSET, -1, "layer \"%.*s\" (blob sha256-%.12s...) is not valid JSON",
                   TBLOB_NAME_ARGS(l->name, l->name_len), l->digest + 7);
      }
    }
  }
  ::close(fd);
  return r;
}

TBLOB_API tblob_status tblob_store_open_model(const tblob_store *store, const char *name, size_t name_len,
                                              const tblob_store_open_options *options, tblob_model **out,
                                              tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (out) *out = nullptr;
  if (!store || !out || (!name && name_len)) return bad_arg(d, "store, name and out are required");
  const tblob_open_options *open = nullptr;
  const char *component = nullptr;
  size_t component_len = 0;
  ol::PartSelect part;
  if (options) {
    const uint32_t n = options->struct_size;
    if (n < offsetof(tblob_store_open_options, flags) + sizeof(uint32_t)) return bad_arg(d, "options->struct_size");
    if (has_field(n, offsetof(tblob_store_open_options, open), sizeof(void *))) open = options->open;
    if (has_field(n, offsetof(tblob_store_open_options, component_len), sizeof(size_t))) {
      component = options->component;
      component_len = options->component_len;
      if (!component) component_len = 0;
      if (component && component_len == 0) component = nullptr;
    }
    if (has_field(n, offsetof(tblob_store_open_options, part_index), sizeof(uint64_t))) {
      part.part = options->part;
      part.index = options->part_index;
      if (part.part > TBLOB_STORE_PART_LAYER) return bad_arg(d, "options->part: not a tblob_store_part");
      if (part.part != TBLOB_STORE_PART_MODEL && component)
        return bad_arg(d, "options->component applies to the model part only");
    }
  }
  tblob::Limits limits;
  if (!tblob::resolve_limits(open, &limits)) return bad_arg(d, "options->open: struct_size or mode");
  ol::ModelName mn;
  Status s = ol::parse_name(name, name_len, &mn, d);
  if (s != TBLOB_OK) return s;
  return ol::open_model(*store, mn, limits, component, component_len, out, d, part);
}

TBLOB_API tblob_status tblob_store_verify(const tblob_store *store, const char *name, size_t name_len,
                                          const tblob_verify_options *options, tblob_verify_summary *summary,
                                          tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!store) return bad_arg(d, "store is required");
  tblob_verify_options o = TBLOB_VERIFY_OPTIONS_INIT;
  if (options) {
    const uint32_t n = options->struct_size;
    if (n < offsetof(tblob_verify_options, threads) + sizeof(uint32_t)) return bad_arg(d, "options->struct_size");
    o.threads = options->threads;
    if (has_field(n, offsetof(tblob_verify_options, progress_user), sizeof(void *))) {
      o.progress = options->progress;
      o.progress_user = options->progress_user;
    }
    if (has_field(n, offsetof(tblob_verify_options, on_blob_user), sizeof(void *))) {
      o.on_blob = options->on_blob;
      o.on_blob_user = options->on_blob_user;
    }
    if (has_field(n, offsetof(tblob_verify_options, reserved), sizeof(uint32_t))) {
      if ((options->flags & ~TBLOB_VERIFY_MAP) != 0 || options->reserved != 0)
        return bad_arg(d, "options->flags has unknown bits or reserved is not 0");
      o.flags = options->flags;
    }
  }
  if (summary && !TBLOB_COVERS(summary, bytes_hashed)) return bad_arg(d, "summary->struct_size");
  return ol::verify_store(*store, name, name_len, &o, summary, d);
}

TBLOB_API tblob_status tblob_verifier_open(const char *digest, size_t digest_len, uint64_t expected_size,
                                           tblob_verifier **out, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (out) *out = nullptr;
  if (!out || (!digest && digest_len)) return bad_arg(d, "digest and out are required");
  return ol::verifier_open(digest, digest_len, expected_size, out, d);
}

TBLOB_API tblob_status tblob_verifier_update(tblob_verifier *verifier, const void *data, size_t len,
                                             tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!verifier || (!data && len)) return bad_arg(d, "verifier and data are required");
  return ol::verifier_update(verifier, data, len, d);
}

TBLOB_API tblob_status tblob_verifier_final(tblob_verifier *verifier, char *actual_digest,
                                            size_t actual_digest_capacity, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!verifier) return bad_arg(d, "verifier is required");
  if (actual_digest && actual_digest_capacity < ol::kDigestBuf) return bad_arg(d, "actual_digest needs 72 bytes");
  return ol::verifier_final(verifier, actual_digest, actual_digest_capacity, d);
}

TBLOB_API void tblob_verifier_close(tblob_verifier *verifier) noexcept { ol::verifier_close(verifier); }

TBLOB_API tblob_status tblob_store_import(const tblob_store *store, const char *name, size_t name_len,
                                          const char *source_dir, const tblob_import_options *options,
                                          tblob_import_result *result, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!store || !source_dir || (!name && name_len)) return bad_arg(d, "store, name and source_dir are required");
  uint32_t flags = 0;
  const tblob_open_options *open = nullptr;
  ol::ImportProgress progress;
  if (options) {
    const uint32_t n = options->struct_size;
    if (n < offsetof(tblob_import_options, flags) + sizeof(uint32_t)) return bad_arg(d, "options->struct_size");
    flags = options->flags;
    if (has_field(n, offsetof(tblob_import_options, open), sizeof(void *))) open = options->open;
    if (has_field(n, offsetof(tblob_import_options, progress_user), sizeof(void *))) {
      progress.fn = options->progress;
      progress.user = options->progress_user;
    }
  }
  if (result && !TBLOB_COVERS(result, bytes_written)) return bad_arg(d, "result->struct_size");
  tblob::Limits limits;
  if (!tblob::resolve_limits(open, &limits)) return bad_arg(d, "options->open: struct_size or mode");
  return ol::import_model(*store, name, name_len, source_dir, flags, limits, progress, result, d);
}

TBLOB_API tblob_status tblob_store_gc(const tblob_store *store, const tblob_gc_options *options,
                                      tblob_gc_result *result, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!store) return bad_arg(d, "store is required");
  if (options && !TBLOB_COVERS(options, flags))
    return bad_arg(d, "options->struct_size");
  if (result && !TBLOB_COVERS(result, removed_bytes)) return bad_arg(d, "result->struct_size");
  return ol::gc_store(*store, options, result, d);
}

}  // extern "C"
