// Import of a safetensors directory into a store: the `ollama create` flow
// (docs/ollama.md). One minimal Go-writer blob per tensor, expert tensors
// grouped per layer into packed blobs (the original tensors, as the unquantized groups of
// the Feb-Jul 2026 layouts hold them), JSON files as ...image.json layers, a ConfigV2
// config blob, and the manifest last. Blobs are content-addressed, so identical tensors
// of different models share one file; every file is written to a temporary name, fsynced
// and renamed, so a crash never leaves a half-written blob or manifest under its real name.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/checked.h"
#include "core/dtype.h"
#include "formats/ollama/ollama.h"
#include "formats/open.h"
#include "formats/safetensors/st_writer.h"
#include "hash/sha256.h"
#include "io/file.h"
#include "io/source.h"
#include "json/json_walk.h"

namespace tblob {
namespace ollama {

// ---- expert groups -------------------------------------------------------------------------

size_t expert_group_of(const char *name, size_t n) {
  static const char *const kSeps[] = {".mlp.experts.", ".mlp.shared_experts.", ".mlp.switch_mlp.",
                                      ".moe.experts.", ".mixer.experts.", ".mixer.shared_experts."};
  static const char *const kPrefixes[] = {"model.language_model.backbone.", "model.language_model.",
                                          "language_model.model.", "language_model.backbone.",
                                          "language_model.", "model.", "backbone.", "mtp.", ""};
  for (const char *sep : kSeps) {
    const size_t k = std::strlen(sep);
    for (size_t pos = 0; pos + k <= n; ++pos) {
      if (std::memcmp(name + pos, sep, k) != 0) continue;
      // name[0, pos) must be (prefix)?layers.<digits>
      for (const char *pre : kPrefixes) {
        const size_t pl = std::strlen(pre);
        if (pos < pl + 8 || std::memcmp(name, pre, pl) != 0) continue;
        if (std::memcmp(name + pl, "layers.", 7) != 0) continue;
        size_t d = pl + 7;
        if (d >= pos) continue;
        bool digits = true;
        for (size_t i = d; i < pos; ++i) digits = digits && name[i] >= '0' && name[i] <= '9';
        if (digits) return pos + k - 1;  // up to the separator, without its last '.'
      }
      break;
    }
  }
  return 0;
}

namespace {

constexpr char kTensorType[] = "application/vnd.ollama.image.tensor";
constexpr char kJsonType[] = "application/vnd.ollama.image.json";
constexpr char kConfigType[] = "application/vnd.docker.container.image.v1+json";
constexpr char kManifestType[] = "application/vnd.docker.distribution.manifest.v2+json";
constexpr char kIndexName[] = "model.safetensors.index.json";

struct Piece {
  const uint8_t *p;
  size_t n;
};

struct Src {
  tblob_model *m;
  const char *component;  // nullptr: top level
  size_t component_len;
};

struct Item {
  uint32_t src;
  uint32_t row;
  const char *layer;  // layer name: [component/]tensor
  size_t layer_len;
  const char *group;  // [component/]group prefix, or nullptr
  size_t group_len;
};

struct OutLayer {
  const char *media_type;
  char digest[kDigestBuf];
  uint64_t size;
  const char *name;
  size_t name_len;
};

// The names the ConfigV2 blob records: model_type and architectures[0] of config.json, or
// _class_name of an image-generation model_index.json; the first of each key counts, decoded.
// False when the document is not one valid JSON object (then no name is used).
bool config_names(const uint8_t *p, size_t n, bool image_gen, ByteBuf *family, ByteBuf *arch) {
  if (n == 0) return false;
  json::Cursor c{p, p, p + n};
  bool seen_family = false, seen_arch = false;
  auto take = [](const json::StringSlice &s, ByteBuf *out) {
    return out->resize(s.len) && out->resize(json::decode_into(s, out->data(), s.len));
  };
  auto string_or_skip = [&](json::Cursor &cc, uint32_t depth, ByteBuf *out) {
    if (cc.p < cc.end && *cc.p == '"') {
      json::StringSlice v;
      return json::scan_string(cc, &v) && take(v, out);
    }
    return json::skip_value(cc, depth, kMaxJsonDepth);
  };
  const bool ok = json::walk_object(c, 0, kMaxJsonDepth, [&](const json::StringSlice &k, json::Cursor &cc) {
    if (!seen_family && !image_gen && json::decoded_equals(k, "model_type", 10)) {
      seen_family = true;
      return string_or_skip(cc, 1, family);
    }
    if (!seen_arch && image_gen && json::decoded_equals(k, "_class_name", 11)) {
      seen_arch = true;
      return string_or_skip(cc, 1, arch);
    }
    if (!seen_arch && !image_gen && json::decoded_equals(k, "architectures", 13)) {
      seen_arch = true;
      if (cc.p >= cc.end || *cc.p != '[') return json::skip_value(cc, 1, kMaxJsonDepth);
      bool first = true;
      return json::walk_array(cc, 1, kMaxJsonDepth, [&](json::Cursor &ec) {
        if (!first) return json::skip_value(ec, 2, kMaxJsonDepth);
        first = false;
        return string_or_skip(ec, 2, arch);
      });
    }
    return json::skip_value(cc, 1, kMaxJsonDepth);
  });
  return ok && json::at_end(c);
}

bool ends_with(const char *s, const char *suffix) {
  const size_t n = std::strlen(s), k = std::strlen(suffix);
  return n >= k && std::memcmp(s + n - k, suffix, k) == 0;
}

int cmp_bytes(const char *a, size_t an, const char *b, size_t bn) {
  const int d = std::memcmp(a, b, std::min(an, bn));
  return d != 0 ? d : (an < bn ? -1 : an > bn ? 1 : 0);
}

class Importer {
 public:
  Importer(const tblob_store &s, uint32_t flags, const Limits &limits, const ImportProgress &progress,
           const Diag &diag)
      : s_(s), flags_(flags), limits_(limits), progress_(progress), diag_(diag), arena_(&s.alloc), srcs_(&s.alloc),
        items_(&s.alloc), layers_(&s.alloc) {}
  ~Importer() {
    for (size_t i = 0; i < srcs_.size(); ++i) model_free(srcs_[i].m);
  }

  Status run(const ModelName &name, const char *src_dir, tblob_import_result *res);

 private:
  Status fail_io(const char *what, const char *name) {
    return diag_.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "%s %s: %s", what, name, std::strerror(errno));
  }
  Status list_dir(const char *dir, PodVec<const char *> *names);
  Status scan_source(const char *dir, const char *component, PodVec<const char *> *json_files, bool top);
  Status open_source(const char *path, const char *component);
  Status plan();
  Status write_blob(const Piece *pieces, size_t np, char digest[kDigestBuf], uint64_t *size);
  Status hash_file_matches(int fd, const char *digest, bool *match);
  Status write_tensor_blobs();
  Status write_json_layers(const PodVec<const char *> &files, const char *src_dir);
  Status write_config(const char *src_dir, OutLayer *config);
  Status write_manifest(const ModelName &name, const OutLayer &config);
  Status check_blobs_still_there(const OutLayer &config);
  char *join(const char *a, const char *b);
  Status report(uint64_t tensors_done, uint64_t bytes_done);

  const tblob_store &s_;
  uint32_t flags_;
  Limits limits_;
  ImportProgress progress_;
  uint64_t tensors_total_ = 0, bytes_total_ = 0;
  const Diag &diag_;
  Arena arena_;
  PodVec<Src> srcs_;
  PodVec<Item> items_;
  PodVec<OutLayer> layers_;
  bool image_gen_ = false;
  tblob_import_result res_{};
};

char *Importer::join(const char *a, const char *b) {
  const size_t an = std::strlen(a), bn = std::strlen(b);
  char *p = static_cast<char *>(arena_.alloc(an + bn + 2));
  if (!p) return nullptr;
  std::memcpy(p, a, an);
  p[an] = '/';
  std::memcpy(p + an + 1, b, bn + 1);
  return p;
}

Status Importer::list_dir(const char *dir, PodVec<const char *> *names) {
  DIR *d = ::opendir(dir);
  if (!d)
    return diag_.fail(errno == ENOENT ? TBLOB_E_NOT_FOUND : TBLOB_E_OLLAMA_IMPORT_SOURCE, TBLOB_NO_OFFSET, -1,
                      "cannot read source directory %s: %s", dir, std::strerror(errno));
  while (struct dirent *e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char *n = arena_.copy(e->d_name, std::strlen(e->d_name) + 1);
    if (!n || !names->push(n)) {
      ::closedir(d);
      return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
  }
  ::closedir(d);
  // os.ReadDir order: by file name.
  std::sort(names->data(), names->data() + names->size(),
            [](const char *a, const char *b) { return std::strcmp(a, b) < 0; });
  return TBLOB_OK;
}

Status Importer::open_source(const char *path, const char *component) {
  tblob_model *m = nullptr;
  tblob_diag inner = TBLOB_DIAG_INIT;
  Diag d;
  d.out = &inner;
  Status st = open_path(path, limits_, &m, d);
  if (st != TBLOB_OK)
    return diag_.fail(st, inner.offset, inner.tensor_index, "import source %s: %s", path, inner.message);
  Src src{m, component, component ? std::strlen(component) : 0};
  if (!srcs_.push(src)) {
    model_free(m);
    return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  return TBLOB_OK;
}

Status Importer::scan_source(const char *dir, const char *component, PodVec<const char *> *json_files,
                             bool top) {
  PodVec<const char *> names(&s_.alloc);
  Status st = list_dir(dir, &names);
  if (st != TBLOB_OK) return st;
  bool has_index = false;
  for (size_t i = 0; i < names.size(); ++i) has_index = has_index || std::strcmp(names[i], kIndexName) == 0;
  if (has_index && (st = open_source(dir, component)) != TBLOB_OK) return st;
  for (size_t i = 0; i < names.size(); ++i) {
    const char *n = names[i];
    char *path = join(dir, n);
    if (!path) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    struct stat stt;
    if (::stat(path, &stt) != 0) continue;
    if (S_ISDIR(stt.st_mode)) {
      if (top && (st = scan_source(path, n, json_files, false)) != TBLOB_OK) return st;
      continue;
    }
    if (!S_ISREG(stt.st_mode)) continue;
    if (ends_with(n, ".safetensors")) {
      if (!has_index && (st = open_source(path, component)) != TBLOB_OK) return st;
    } else if (ends_with(n, ".json") && std::strcmp(n, kIndexName) != 0) {
      if (top && std::strcmp(n, "model_index.json") == 0) image_gen_ = true;
      // Layer name: [component/]file.json; the path is kept beside it.
      const char *layer = component ? join(component, n) : n;
      if (!layer || !json_files->push(layer) || !json_files->push(path)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
  }
  return TBLOB_OK;
}

Status Importer::plan() {
  for (size_t si = 0; si < srcs_.size(); ++si) {
    const Src &src = srcs_[si];
    for (size_t r = 0; r < src.m->tensors.size(); ++r) {
      const TensorDesc &t = src.m->tensors[r];
      Item it{};
      it.src = static_cast<uint32_t>(si);
      it.row = static_cast<uint32_t>(r);
      if (src.component) {
        char *p = static_cast<char *>(arena_.alloc(src.component_len + 1 + t.name_len));
        if (!p) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
        std::memcpy(p, src.component, src.component_len);
        p[src.component_len] = '/';
        std::memcpy(p + src.component_len + 1, t.name, t.name_len);
        it.layer = p;
        it.layer_len = src.component_len + 1 + t.name_len;
      } else {
        it.layer = t.name;
        it.layer_len = t.name_len;
      }
      const size_t g = expert_group_of(t.name, t.name_len);
      if (g) {
        it.group = it.layer;
        it.group_len = (it.layer_len - t.name_len) + g;
      }
      if (!items_.push(it)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
  }
  if (items_.size() == 0)
    return diag_.fail(TBLOB_E_OLLAMA_IMPORT_SOURCE, TBLOB_NO_OFFSET, -1,
                      "the source holds no safetensors tensors (*.safetensors or %s)", kIndexName);
  // Non-expert tensors by name, then expert groups by group name (planFloat order).
  std::sort(items_.data(), items_.data() + items_.size(), [](const Item &a, const Item &b) {
    if ((a.group != nullptr) != (b.group != nullptr)) return a.group == nullptr;
    if (a.group) {
      const int d = cmp_bytes(a.group, a.group_len, b.group, b.group_len);
      if (d != 0) return d < 0;
    }
    return cmp_bytes(a.layer, a.layer_len, b.layer, b.layer_len) < 0;
  });
  for (size_t i = 1; i < items_.size(); ++i) {
    const Item &a = items_[i - 1], &b = items_[i];
    if (cmp_bytes(a.layer, a.layer_len, b.layer, b.layer_len) == 0) {
      const ShownName shown_name(a.layer, a.layer_len);
      const int shown = shown_name.len;
      const char *ell = shown_name.ell;
      return diag_.fail(TBLOB_E_OLLAMA_IMPORT_SOURCE, TBLOB_NO_OFFSET, -1,
                        "tensor \"%.*s%s\" appears in two source files", shown, shown_name.text, ell);
    }
  }
  return TBLOB_OK;
}

Status Importer::hash_file_matches(int fd, const char *digest, bool *match) {
  *match = false;
  Sha256 h;
  if (!h.init()) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  const size_t kChunk = size_t{1} << 20;
  uint8_t *buf = static_cast<uint8_t *>(s_.alloc.alloc(kChunk));
  if (!buf) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  for (;;) {
    const ssize_t r = ::read(fd, buf, kChunk);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      s_.alloc.free(buf, kChunk);
      return fail_io("cannot read blob", digest);
    }
    if (r == 0) break;
    h.update(buf, static_cast<size_t>(r));
  }
  s_.alloc.free(buf, kChunk);
  uint8_t dg[kSha256Bytes];
  char hex[64];
  if (!h.final(dg)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  sha256_hex(dg, hex);
  *match = std::memcmp(hex, digest + 7, 64) == 0;
  return TBLOB_OK;
}

Status Importer::write_blob(const Piece *pieces, size_t np, char digest[kDigestBuf], uint64_t *size) {
  Sha256 h;
  if (!h.init()) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  uint64_t total = 0;
  for (size_t i = 0; i < np; ++i) {
    h.update(pieces[i].p, pieces[i].n);
    if (!checked_add(total, pieces[i].n, &total)) return diag_.fail_plain(TBLOB_E_SHAPE_OVERFLOW);
  }
  uint8_t dg[kSha256Bytes];
  if (!h.final(dg)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  std::memcpy(digest, "sha256:", 7);
  sha256_hex(dg, digest + 7);
  digest[kDigestChars] = '\0';
  *size = total;
  char file[kDigestBuf];
  Status st = blob_file_name(digest, kDigestChars, file, diag_);
  if (st != TBLOB_OK) return st;
  // De-duplication: a blob already present with these bytes is reused.
  struct stat have;
  if (::fstatat(s_.blobs_fd, file, &have, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(have.st_mode))
      return diag_.fail(TBLOB_E_OLLAMA_PATH, TBLOB_NO_OFFSET, -1, "blob %s is a symlink; left alone", file);
    if (!S_ISREG(have.st_mode))
      return diag_.fail(TBLOB_E_OLLAMA_NOT_A_FILE, TBLOB_NO_OFFSET, -1, "blob %s is not a file; left alone", file);
    if (static_cast<uint64_t>(have.st_size) == total) {
      bool match = (flags_ & TBLOB_IMPORT_TRUST_EXISTING) != 0;
      if (!match) {
        const int fd = open_nofollow(s_.blobs_fd, file);
        if (fd < 0) return fail_io("cannot open blob", file);
        st = hash_file_matches(fd, digest, &match);
        ::close(fd);
        if (st != TBLOB_OK) return st;
      }
      if (match) {
        ++res_.blobs_reused;
        return TBLOB_OK;
      }
    }
    // Present but corrupt: replaced atomically below.
  }
  // The blobs directory is synced once, before the manifest (run()).
  char tag[17];
  std::snprintf(tag, sizeof(tag), "%.16s", digest + 7);
  AtomicFile out;
  if (!out.create(s_.blobs_fd, tag, 0644)) return fail_io("cannot create a temporary blob for", file);
  bool ok = true;
  for (size_t i = 0; ok && i < np; ++i) ok = out.write(pieces[i].p, pieces[i].n);
  if (ok) ok = out.commit(file, false);
  if (!ok) {
    const int e = errno;
    out.abort();
    errno = e;
    return fail_io("cannot write blob", file);
  }
  ++res_.blobs_written;
  res_.bytes_written += total;
  return TBLOB_OK;
}

Status Importer::report(uint64_t tensors_done, uint64_t bytes_done) {
  if (!progress_.fn) return TBLOB_OK;
  const tblob_import_progress p = {sizeof(p), 0, tensors_total_, tensors_done, bytes_total_, bytes_done};
  if (progress_.fn(progress_.user, &p) == 0) return TBLOB_OK;
  return diag_.fail(TBLOB_E_CANCELLED, TBLOB_NO_OFFSET, -1,
                    "import cancelled by the progress callback after %llu of %llu tensors; manifest not written",
                    static_cast<unsigned long long>(tensors_done), static_cast<unsigned long long>(tensors_total_));
}

Status Importer::write_tensor_blobs() {
  PodVec<HeaderTensor> ts(&s_.alloc);
  PodVec<Piece> pieces(&s_.alloc);
  ByteBuf header(&s_.alloc);
  tensors_total_ = items_.size();
  bytes_total_ = 0;
  for (size_t k = 0; k < items_.size(); ++k) {
    const TensorDesc &t = srcs_[items_[k].src].m->tensors[items_[k].row];
    if (!checked_add(bytes_total_, t.end - t.begin, &bytes_total_)) bytes_total_ = UINT64_MAX;  // only a figure
  }
  uint64_t bytes_done = 0;
  Status st = report(0, 0);
  if (st != TBLOB_OK) return st;
  size_t i = 0;
  while (i < items_.size()) {
    size_t j = i + 1;
    if (items_[i].group)
      while (j < items_.size() && items_[j].group &&
             cmp_bytes(items_[j].group, items_[j].group_len, items_[i].group, items_[i].group_len) == 0)
        ++j;
    ts.reset();
    pieces.reset();
    header.clear();
    if (!pieces.push(Piece{nullptr, 0})) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    for (size_t k = i; k < j; ++k) {
      const Src &src = srcs_[items_[k].src];
      const TensorDesc &t = src.m->tensors[items_[k].row];
      const FileDesc &f = src.m->files[t.file_index];
      const uint64_t bytes = t.end - t.begin;
      size_t nb;
      if (!to_size(bytes, &nb) || !range_inside(t.file_offset, bytes, f.source.len))
        return diag_.fail(TBLOB_E_RANGE, t.file_offset, -1, "tensor data outside its source file");
      bytes_done += bytes;
      HeaderTensor h{t.name, t.name_len, t.dtype, t.shape, t.rank, bytes};
      if (!ts.push(h) || !pieces.push(Piece{f.source.data ? f.source.data + t.file_offset : nullptr, nb}))
        return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
    if (!go_writer_header(ts.data(), ts.size(), &header)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    pieces[0] = Piece{reinterpret_cast<const uint8_t *>(header.data()), header.size()};
    OutLayer l{};
    l.media_type = kTensorType;
    st = write_blob(pieces.data(), pieces.size(), l.digest, &l.size);
    if (st != TBLOB_OK) return st;
    l.name = items_[i].group ? items_[i].group : items_[i].layer;
    l.name_len = items_[i].group ? items_[i].group_len : items_[i].layer_len;
    if (!layers_.push(l)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    res_.tensors += j - i;
    i = j;
    if ((st = report(i, bytes_done)) != TBLOB_OK) return st;
  }
  return TBLOB_OK;
}

Status Importer::write_json_layers(const PodVec<const char *> &files, const char *) {
  for (size_t i = 0; i + 1 < files.size(); i += 2) {
    const char *layer = files[i], *path = files[i + 1];
    Source src;
    Status st = source_read_bounded(path, s_.max_config_bytes, TBLOB_E_OLLAMA_LIMIT_CONFIG, s_.alloc, &src, diag_);
    if (st != TBLOB_OK) return st;
    if (src.len == 0 || !json_document_valid(src.data, src.len)) {
      source_close(&src, s_.alloc);
      return diag_.fail(TBLOB_E_OLLAMA_IMPORT_SOURCE, TBLOB_NO_OFFSET, -1, "%s is not valid JSON", path);
    }
    Piece p{src.data, src.len};
    OutLayer l{};
    l.media_type = kJsonType;
    l.name = layer;
    l.name_len = std::strlen(layer);
    st = write_blob(&p, 1, l.digest, &l.size);
    source_close(&src, s_.alloc);
    if (st != TBLOB_OK) return st;
    if (!layers_.push(l)) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  return TBLOB_OK;
}

// ConfigV2 as Ollama writes it (types/model/config.go field order; json.Encoder: compact,
// then "\n").
Status Importer::write_config(const char *src_dir, OutLayer *config) {
  ByteBuf family(&s_.alloc), arch(&s_.alloc);
  Source src;
  char *cfg = join(src_dir, image_gen_ ? "model_index.json" : "config.json");
  if (!cfg) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  tblob_diag ignore = TBLOB_DIAG_INIT;
  Diag quiet;  // no config, or one that cannot be read: the fields stay empty
  quiet.out = &ignore;
  if (source_read_bounded(cfg, s_.max_config_bytes, TBLOB_E_OLLAMA_LIMIT_CONFIG, s_.alloc, &src, quiet) == TBLOB_OK) {
    if (!config_names(src.data, src.len, image_gen_, &family, &arch)) {
      family.clear();
      arch.clear();
    }
    source_close(&src, s_.alloc);
  }
  ByteBuf b(&s_.alloc);
  bool ok = b.append("{\"model_format\":\"safetensors\",\"model_family\":") &&
            go_json_string(&b, family.data(), family.size()) && b.append(",\"model_families\":");
  if (family.size() == 0) {
    ok = ok && b.append("null");
  } else {
    ok = ok && b.push('[') && go_json_string(&b, family.data(), family.size()) && b.push(']');
  }
  ok = ok && b.append(",\"model_type\":\"\",\"file_type\":\"\",\"requires\":\"0.19.0\",\"capabilities\":[") &&
       b.append(image_gen_ ? "\"image\"" : "\"completion\"") && b.append("],\"architecture\":") &&
       go_json_string(&b, arch.data(), arch.size()) && b.append(",\"os\":\"\"}\n");
  if (!ok) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  Piece p{reinterpret_cast<const uint8_t *>(b.data()), b.size()};
  config->media_type = kConfigType;
  config->name = nullptr;
  config->name_len = 0;
  return write_blob(&p, 1, config->digest, &config->size);
}

Status Importer::write_manifest(const ModelName &name, const OutLayer &config) {
  ByteBuf b(&s_.alloc);
  auto layer_json = [&b](const OutLayer &l) {
    return b.append("{\"mediaType\":\"") && b.append(l.media_type) && b.append("\",\"digest\":\"") &&
           b.append(l.digest) && b.append("\",\"size\":") && b.append_u64(l.size) &&
           (l.name_len == 0 || (b.append(",\"name\":") && go_json_string(&b, l.name, l.name_len))) && b.push('}');
  };
  bool ok = b.append("{\"schemaVersion\":2,\"mediaType\":\"") && b.append(kManifestType) &&
            b.append("\",\"config\":") && layer_json(config) && b.append(",\"layers\":[");
  for (size_t i = 0; ok && i < layers_.size(); ++i) ok = (i == 0 || b.push(',')) && layer_json(layers_[i]);
  ok = ok && b.append("]}\n");
  if (!ok) return diag_.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  // The reader refuses manifests above this store's limit, and one such manifest would stop gc
  // for the whole store, so it is never written.
  if (b.size() > s_.max_manifest_bytes)
    return diag_.fail(TBLOB_E_OLLAMA_LIMIT_MANIFEST, TBLOB_NO_OFFSET, -1,
                      "the manifest for %s would be %zu bytes, above the store's limit of %llu "
                      "(max_manifest_bytes); manifest not written",
                      name.tag, b.size(), static_cast<unsigned long long>(s_.max_manifest_bytes));
  res_.layers = layers_.size();
  // manifests/<host>/<namespace>/<model>/, each level created and opened without following links.
  const char *parts[3] = {name.host, name.ns, name.model};
  int dir = s_.manifests_fd, owned = -1;
  for (const char *part : parts) {
    if (::mkdirat(dir, part, 0755) != 0 && errno != EEXIST) {
      if (owned >= 0) ::close(owned);
      return fail_io("cannot create manifest directory", part);
    }
    const int fd = open_dir_nofollow(dir, part);
    if (fd < 0) {
      if (owned >= 0) ::close(owned);
      return diag_.fail(TBLOB_E_OLLAMA_PATH, TBLOB_NO_OFFSET, -1,
                        "manifest directory %s is a symlink or not a directory; left alone", part);
    }
    if (owned >= 0) ::close(owned);
    owned = dir = fd;
  }
  // Unchanged manifest: nothing to do (re-running an import is a no-op).
  const int old = open_nofollow(dir, name.tag);
  if (old >= 0) {
    struct stat st;
    bool same = false;
    if (::fstat(old, &st) == 0 && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) == b.size()) {
      ByteBuf have(&s_.alloc);
      char chunk[4096];
      ssize_t r;
      while ((r = ::read(old, chunk, sizeof(chunk))) > 0)
        if (!have.append(chunk, static_cast<size_t>(r))) break;
      same = have.size() == b.size() && std::memcmp(have.data(), b.data(), b.size()) == 0;
    }
    ::close(old);
    if (same) {
      ::close(dir);
      res_.manifest_written = 0;
      return TBLOB_OK;
    }
  }
  AtomicFile out;
  if (!out.create(dir, name.tag, 0644)) {
    const int e = errno;
    ::close(dir);
    errno = e;
    return fail_io("cannot create a temporary manifest for", name.tag);
  }
  if (!out.write(b.data(), b.size()) || !out.commit(name.tag, true)) {
    const int e = errno;
    out.abort();
    ::close(dir);
    return diag_.fail(e == EISDIR ? TBLOB_E_OLLAMA_NOT_A_FILE : TBLOB_E_IO, TBLOB_NO_OFFSET, -1,
                      "cannot write the manifest %s: %s", name.tag, std::strerror(e));
  }
  ::close(dir);
  res_.manifest_written = 1;
  return TBLOB_OK;
}

// Just before the manifest: every blob it will name is still a file of the right size. Blobs
// written by this import are unreferenced until then, so a concurrent `gc --remove` (or a
// hand) may have deleted one; failing here leaves no manifest naming a missing blob, and the
// next run writes it again.
Status Importer::check_blobs_still_there(const OutLayer &config) {
  for (size_t i = 0; i <= layers_.size(); ++i) {
    const OutLayer &l = i == 0 ? config : layers_[i - 1];
    char file[kDigestBuf];
    Status st = blob_file_name(l.digest, kDigestChars, file, diag_);
    if (st != TBLOB_OK) return st;
    struct stat have;
    if (::fstatat(s_.blobs_fd, file, &have, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(have.st_mode) &&
        static_cast<uint64_t>(have.st_size) == l.size)
      continue;
    const ShownName shown_name(l.name ? l.name : "config", l.name ? l.name_len : 6);
    const int shown = shown_name.len;
    const char *ell = shown_name.ell;
    return diag_.fail(TBLOB_E_OLLAMA_BLOB_MISSING, TBLOB_NO_OFFSET, -1,
                      "blob %s (%.*s%s) was removed or changed during the import (a concurrent gc?); "
                      "manifest not written: run the import again",
                      file, shown, shown_name.text, ell);
  }
  return TBLOB_OK;
}

Status Importer::run(const ModelName &name, const char *src_dir, tblob_import_result *res) {
  if (looks_like_store(src_dir))
    return diag_.fail(TBLOB_E_OLLAMA_IMPORT_SOURCE, TBLOB_NO_OFFSET, -1, "%s is an Ollama store, not a model directory",
                      src_dir);
  PodVec<const char *> json_files(&s_.alloc);
  Status st = scan_source(src_dir, nullptr, &json_files, true);
  if (st == TBLOB_OK) st = plan();
  if (st == TBLOB_OK) st = write_tensor_blobs();
  if (st == TBLOB_OK) st = write_json_layers(json_files, src_dir);
  OutLayer config{};
  if (st == TBLOB_OK) st = write_config(src_dir, &config);
  if (st == TBLOB_OK) ::fsync(s_.blobs_fd);  // the renames are durable before the manifest
  if (st == TBLOB_OK) st = check_blobs_still_there(config);
  if (st == TBLOB_OK) st = write_manifest(name, config);
  if (res && res->struct_size >= sizeof(tblob_import_result)) {
    const uint32_t size = res->struct_size;
    *res = res_;
    res->struct_size = size;
  }
  return st;
}

}  // namespace

Status import_model(const tblob_store &s, const char *name, size_t name_len, const char *src_dir,
                    uint32_t flags, const Limits &limits, const ImportProgress &progress,
                    tblob_import_result *result, const Diag &diag) {
  ModelName mn;
  Status st = parse_name(name, name_len, &mn, diag);
  if (st != TBLOB_OK) return st;
  Importer imp(s, flags, limits, progress, diag);
  return imp.run(mn, src_dir, result);
}

}  // namespace ollama
}  // namespace tblob
