// Manifest JSON. Framing first, with the strict zero-allocation lexer, so that the ways a
// manifest file goes bad in the field get their own statuses (zero length, only
// whitespace/NUL, truncated by a crash, two documents); then simdjson's DOM for the
// content, and the digest grammar on every digest.
#include <algorithm>
#include <cstring>
#include <new>

#include <simdjson.h>

#include "core/dtype.h"
#include "formats/ollama/ollama.h"
#include "hash/sha256.h"
#include "json/json_lex.h"

namespace tblob {
namespace ollama {

namespace {

constexpr char kTensorType[] = "application/vnd.ollama.image.tensor";
constexpr uint32_t kManifestDepth = 64;

bool eq(std::string_view a, const char *b) { return a == std::string_view(b); }

struct Ctx {
  tblob_manifest *m;
  const Diag &diag;
};

Status schema(const Diag &diag, const char *fmt, const char *a, const char *b = "") {
  return diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1, fmt, a, b);
}

bool copy_str(tblob_manifest *m, std::string_view v, const char **p, size_t *n) {
  char *d = static_cast<char *>(m->arena.alloc(v.size() + 1));
  if (!d) return false;
  if (!v.empty()) std::memcpy(d, v.data(), v.size());
  d[v.size()] = '\0';
  *p = d;
  *n = v.size();
  return true;
}

// Parses one layer object (or the config entry) into rec. `where` names it in messages.
Status parse_layer(Ctx &c, simdjson::dom::element el, const char *where, LayerRec *rec) {
  std::memset(rec, 0, sizeof(*rec));
  simdjson::dom::object obj;
  if (el.get_object().get(obj)) return schema(c.diag, "%s is not an object%s", where);
  bool seen_media = false, seen_digest = false, seen_size = false, seen_name = false,
       seen_from = false, seen_dtype = false, seen_shape = false;
  for (simdjson::dom::key_value_pair kv : obj) {
    const std::string_view k = kv.key;
    bool *seen = nullptr;
    if (eq(k, "mediaType")) seen = &seen_media;
    else if (eq(k, "digest")) seen = &seen_digest;
    else if (eq(k, "size")) seen = &seen_size;
    else if (eq(k, "name")) seen = &seen_name;
    else if (eq(k, "from")) seen = &seen_from;
    else if (eq(k, "dtype")) seen = &seen_dtype;
    else if (eq(k, "shape")) seen = &seen_shape;
    else continue;  // annotations, urls, platform, ...: tolerated
    if (*seen) {
      return c.diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1,
                         "%s has the key \"%.*s\" twice", where, static_cast<int>(k.size()), k.data());
    }
    *seen = true;
    if (eq(k, "size")) {
      if (kv.value.is_int64()) {
        const int64_t v = kv.value.get_int64().value_unsafe();
        if (v < 0)
          return schema(c.diag, "%s.size is negative%s", where);
        rec->size = static_cast<uint64_t>(v);
      } else if (kv.value.is_uint64()) {
        return schema(c.diag, "%s.size is above 2^63 - 1%s", where);
      } else {
        return schema(c.diag, "%s.size is not an integer%s", where);
      }
      continue;
    }
    if (eq(k, "shape")) {
      simdjson::dom::array arr;
      if (kv.value.get_array().get(arr)) return schema(c.diag, "%s.shape is not an array%s", where);
      const size_t rank = arr.size();
      rec->has_shape = 1;
      rec->rank = static_cast<uint32_t>(rank > UINT32_MAX ? UINT32_MAX : rank);
      if (rank) {
        rec->shape = static_cast<uint64_t *>(c.m->arena.alloc(rank * sizeof(uint64_t)));
        if (!rec->shape) return c.diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      }
      size_t i = 0;
      for (simdjson::dom::element d : arr) {
        int64_t v;
        if (d.get_int64().get(v) || v < 0)
          return schema(c.diag, "%s.shape holds a value that is not a non-negative integer%s", where);
        rec->shape[i++] = static_cast<uint64_t>(v);
      }
      continue;
    }
    std::string_view v;
    if (kv.value.get_string().get(v))
      return c.diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1, "%s.%.*s is not a string",
                         where, static_cast<int>(k.size()), k.data());
    if (eq(k, "digest")) {
      Status s;
      char what[64];
      std::snprintf(what, sizeof(what), "%s.digest", where);
      if ((s = check_digest(v.data(), v.size(), DigestForm::kManifest, what, c.diag)) != TBLOB_OK) return s;
      std::memcpy(rec->digest, v.data(), kDigestChars);
      rec->digest[kDigestChars] = '\0';
    } else if (eq(k, "dtype")) {
      rec->dtype = dtype_from_name(v.data(), v.size());
      if (rec->dtype == TBLOB_DTYPE_INVALID)
        return c.diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1,
                           "%s.dtype \"%.*s\" is not a safetensors dtype", where,
                           static_cast<int>(v.size() > 32 ? 32 : v.size()), v.data());
    } else {
      if (std::memchr(v.data(), '\0', v.size()))
        return c.diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1, "%s.%.*s contains a NUL byte",
                           where, static_cast<int>(k.size()), k.data());
      const char **dst = eq(k, "mediaType") ? &rec->media_type : eq(k, "name") ? &rec->name : &rec->from;
      size_t *dst_len = eq(k, "mediaType") ? &rec->media_type_len : eq(k, "name") ? &rec->name_len : &rec->from_len;
      if (!copy_str(c.m, v, dst, dst_len)) return c.diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
  }
  if (!seen_media) return schema(c.diag, "%s has no mediaType%s", where);
  if (!seen_digest) return schema(c.diag, "%s has no digest%s", where);
  if (!seen_size) return schema(c.diag, "%s has no size%s", where);
  rec->kind = layer_kind_of(rec->media_type, rec->media_type_len);
  return TBLOB_OK;
}

// Whether a lexer error at `at` is the end of input cutting a token short: inside a
// string that never closes, or a literal/number running into the end.
bool cut_short(const uint8_t *p, size_t n, const uint8_t *at) {
  const uint8_t *end = p + n;
  bool in_string = false, escape = false;
  for (const uint8_t *q = p; q < at; ++q) {
    if (in_string) {
      if (escape) escape = false;
      else if (*q == '\\') escape = true;
      else if (*q == '"') in_string = false;
    } else if (*q == '"') {
      in_string = true;
    }
  }
  if (*at == '"' && !in_string) in_string = true;
  bool quote_after = false;
  for (const uint8_t *q = at + 1; q < end; ++q) quote_after = quote_after || *q == '"';
  if (in_string) return !quote_after;
  const size_t rest = static_cast<size_t>(end - at);
  for (const char *lit : {"true", "false", "null"})
    if (rest < std::strlen(lit) && std::memcmp(at, lit, rest) == 0) return true;
  for (const uint8_t *q = at; q < end; ++q)
    if (!((*q >= '0' && *q <= '9') || *q == '-' || *q == '+' || *q == '.' || *q == 'e' || *q == 'E')) return false;
  return true;
}

// Framing: what is in the file around the first JSON value.
Status frame(const uint8_t *p, size_t n, size_t *begin, size_t *end, const Diag &diag) {
  size_t i = 0;
  while (i < n && (json::is_ws(p[i]) || p[i] == 0)) ++i;
  if (i == n)
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_EMPTY, 0, -1,
                     "manifest holds %zu bytes of whitespace/NUL and no JSON document", n);
  if (p[i] == 0) {
    // NUL bytes before the document: a zero-filled block from a crash.
  }
  json::Cursor c{p, p + i, p + n};
  if (!json::skip_value(c, 0, kManifestDepth)) {
    const uint8_t *at = c.err_at ? c.err_at : c.p;
    bool only_nul_after = true;
    for (const uint8_t *q = at; q < p + n; ++q)
      if (*q != 0) {
        only_nul_after = false;
        break;
      }
    if (at >= p + n || only_nul_after || cut_short(p, n, at))
      return diag.fail(TBLOB_E_OLLAMA_MANIFEST_TRUNCATED, c.offset(at), -1,
                       "manifest JSON ends at byte %llu before its document is complete",
                       static_cast<unsigned long long>(c.offset(at)));
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_JSON, c.offset(at), -1, "manifest is not valid JSON at byte %llu: %s",
                     static_cast<unsigned long long>(c.offset(at)), c.err_what ? c.err_what : "syntax error");
  }
  *begin = i;
  *end = static_cast<size_t>(c.p - p);
  json::skip_ws(c);
  if (c.p < c.end) {
    const uint8_t *q = c.p;
    while (q < c.end && *q == 0) ++q;
    if (q == c.end)  // a zero-filled tail (preallocation, a crash), not a second writer
      return diag.fail(TBLOB_E_OLLAMA_MANIFEST_DOUBLED, c.offset(c.p), -1,
                       "the manifest's JSON document is followed by %llu NUL bytes from byte %llu",
                       static_cast<unsigned long long>(c.end - c.p), static_cast<unsigned long long>(c.offset(c.p)));
    const bool second = *c.p == '{' || *c.p == '[';
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_DOUBLED, c.offset(c.p), -1,
                     second ? "a second JSON document starts at byte %llu after the manifest"
                            : "bytes follow the manifest's JSON document at byte %llu",
                     static_cast<unsigned long long>(c.offset(c.p)));
  }
  return TBLOB_OK;
}

}  // namespace

uint32_t layer_kind_of(const char *media_type, size_t n) {
  const std::string_view t(media_type ? media_type : "", n);
  if (t == kTensorType) return TBLOB_LAYER_TENSOR;
  if (t == "application/vnd.ollama.image.json" || t == "application/vnd.ollama.image.config" ||
      t == "application/vnd.ollama.image.params" || t == "application/vnd.docker.container.image.v1+json" ||
      t == "application/vnd.oci.image.config.v1+json")
    return TBLOB_LAYER_JSON;
  return TBLOB_LAYER_OTHER;
}

tblob_manifest *manifest_new(const tblob_allocator *hook) {
  Allocator a(hook);
  void *mem = a.alloc(sizeof(tblob_manifest));
  if (!mem) return nullptr;
  return new (mem) tblob_manifest(hook);
}

void manifest_free(tblob_manifest *m) {
  if (!m) return;
  Allocator a = m->alloc;
  m->~tblob_manifest();
  a.free(m, sizeof(tblob_manifest));
}

bool json_document_valid(const uint8_t *p, size_t n) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  return !parser.parse(p, n, true).get(doc);
}

Status parse_manifest(const uint8_t *p, size_t n, uint64_t max_bytes, tblob_manifest *m,
                      const Diag &diag) {
  m->bytes = n;
  if (n == 0)
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_ZERO_LENGTH, 0, -1, "manifest file is zero bytes long");
  if (n > max_bytes)
    return diag.fail(TBLOB_E_OLLAMA_LIMIT_MANIFEST, TBLOB_NO_OFFSET, -1,
                     "manifest is %zu bytes, above the limit of %llu", n, static_cast<unsigned long long>(max_bytes));
  uint8_t id[kSha256Bytes];
  if (!sha256(p, n, id)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  sha256_hex(id, m->id);
  m->id[64] = '\0';
  size_t begin = 0, end = 0;
  Status s = frame(p, n, &begin, &end, diag);
  if (s != TBLOB_OK) return s;

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const simdjson::error_code err = parser.parse(p + begin, end - begin, true).get(doc);
  if (err == simdjson::MEMALLOC) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  // The framing above checked the grammar, so a number error here is a well-formed number out of
  // range (2^64, 1e400): no manifest field holds one.
  if (err == simdjson::NUMBER_ERROR || err == simdjson::NUMBER_OUT_OF_RANGE)
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1,
                     "manifest holds a number out of range (an integer of 2^64 or more?): %s", simdjson::error_message(err));
  if (err)
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_JSON, TBLOB_NO_OFFSET, -1, "manifest is not valid JSON: %s",
                     simdjson::error_message(err));
  simdjson::dom::object root;
  if (doc.get_object().get(root))
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, 0, -1, "manifest is not a JSON object");
  Ctx c{m, diag};
  bool seen_version = false, seen_media = false, seen_config = false, seen_layers = false;
  simdjson::dom::element config_el, layers_el;
  for (simdjson::dom::key_value_pair kv : root) {
    const std::string_view k = kv.key;
    bool *seen = eq(k, "schemaVersion") ? &seen_version
                 : eq(k, "mediaType")   ? &seen_media
                 : eq(k, "config")      ? &seen_config
                 : eq(k, "layers")      ? &seen_layers
                                        : nullptr;
    if (!seen) continue;
    if (*seen)
      return diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1, "manifest has the key \"%.*s\" twice",
                       static_cast<int>(k.size()), k.data());
    *seen = true;
    if (seen == &seen_version) {
      int64_t v;
      if (kv.value.get_int64().get(v))
        return diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1, "schemaVersion is not an integer");
      if (v != 2)
        return diag.fail(TBLOB_E_OLLAMA_MANIFEST_VERSION, TBLOB_NO_OFFSET, -1,
                         "schemaVersion is %lld; only 2 is supported", static_cast<long long>(v));
      m->schema_version = 2;
    } else if (seen == &seen_media) {
      std::string_view v;
      if (kv.value.get_string().get(v))
        return diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1, "mediaType is not a string");
      if (v != "application/vnd.docker.distribution.manifest.v2+json" &&
          v != "application/vnd.oci.image.manifest.v1+json")
        return diag.fail(TBLOB_E_OLLAMA_MANIFEST_VERSION, TBLOB_NO_OFFSET, -1, "manifest mediaType \"%.*s\" is not supported",
                         static_cast<int>(v.size() > 80 ? 80 : v.size()), v.data());
      if (!copy_str(m, v, &m->media_type, &m->media_type_len)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    } else if (seen == &seen_config) {
      config_el = kv.value;
    } else {
      layers_el = kv.value;
    }
  }
  if (!seen_version)
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1, "manifest has no schemaVersion");
  if (!seen_config)
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1, "manifest has no config");
  if (!seen_layers)
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1, "manifest has no layers");
  if (!m->media_type && !copy_str(m, std::string_view(), &m->media_type, &m->media_type_len))
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  if ((s = parse_layer(c, config_el, "config", &m->config)) != TBLOB_OK) return s;
  m->has_config = true;
  simdjson::dom::array layers;
  if (layers_el.get_array().get(layers))
    return diag.fail(TBLOB_E_OLLAMA_MANIFEST_SCHEMA, TBLOB_NO_OFFSET, -1, "layers is not an array");
  if (!m->layers.reserve(layers.size())) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  size_t i = 0;
  for (simdjson::dom::element el : layers) {
    char where[40];
    std::snprintf(where, sizeof(where), "layers[%zu]", i);
    LayerRec rec;
    if ((s = parse_layer(c, el, where, &rec)) != TBLOB_OK) return s;
    if (!m->layers.push(rec)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    ++i;
  }
  // One digest, one size and one media type.
  const size_t total = m->layers.size() + 1;
  PodVec<uint32_t> order(&m->alloc);
  if (!order.reserve(total)) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  for (size_t k = 0; k < total; ++k) order.push(static_cast<uint32_t>(k));
  auto rec_at = [m](uint32_t k) -> const LayerRec & { return k == 0 ? m->config : m->layers[k - 1]; };
  std::sort(order.data(), order.data() + total, [&](uint32_t a, uint32_t b) {
    const int d = std::memcmp(rec_at(a).digest, rec_at(b).digest, kDigestChars);
    return d != 0 ? d < 0 : a < b;
  });
  for (size_t k = 1; k < total; ++k) {
    const LayerRec &a = rec_at(order[k - 1]), &b = rec_at(order[k]);
    if (std::memcmp(a.digest, b.digest, kDigestChars) != 0) continue;
    const bool size_differs = a.size != b.size;
    const bool type_differs = a.media_type_len != b.media_type_len ||
                              std::memcmp(a.media_type, b.media_type, a.media_type_len) != 0;
    if (size_differs || type_differs) {
      char wa[32], wb[32];
      if (order[k - 1] == 0) std::snprintf(wa, sizeof(wa), "config");
      else std::snprintf(wa, sizeof(wa), "layers[%u]", order[k - 1] - 1);
      std::snprintf(wb, sizeof(wb), "layers[%u]", order[k] - 1);
      return diag.fail(TBLOB_E_OLLAMA_LAYER_CONFLICT, TBLOB_NO_OFFSET, -1,
                       "%s and %s share digest %.19s... but differ in %s", wa, wb, a.digest,
                       size_differs ? "size" : "mediaType");
    }
  }
  return TBLOB_OK;
}

Status load_manifest(const tblob_store &s, const ModelName &name, tblob_manifest **out,
                     int64_t *mtime, const Diag &diag) {
  *out = nullptr;
  FileBytes b;
  Status st = read_manifest_file(s, name, &b, diag);
  if (st != TBLOB_OK) return st;
  if (mtime) *mtime = b.mtime;
  tblob_manifest *m = manifest_new(nullptr);
  if (!m) {
    free_bytes(s, &b);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  // Re-frame the parse error with the model's name.
  tblob_diag inner = TBLOB_DIAG_INIT;
  Diag d;
  d.out = &inner;
  st = parse_manifest(b.data, b.len, s.max_manifest_bytes, m, d);
  free_bytes(s, &b);
  if (st != TBLOB_OK) {
    manifest_free(m);
    char full[kFullNameBuf];
    format_full_name(name, full);
    return diag.fail(st, inner.offset, -1, "manifest of %s: %s", full, inner.message);
  }
  *out = m;
  return TBLOB_OK;
}

}  // namespace ollama
}  // namespace tblob
