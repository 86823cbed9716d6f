#include "formats/open.h"

#include <cstring>

#include "core/checked.h"

#include "formats/safetensors/safetensors.h"
#include "json/json_lex.h"
#include "io/source.h"
#include "tblob_config.h"
#if TBLOB_HAVE_OLLAMA
#include "formats/ollama/ollama.h"
#endif
#if TBLOB_HAVE_SLM1
#include "formats/slm1/format.h"
#include "formats/slm1/slm1.h"
#endif
#if TBLOB_HAVE_UQFF
#include "formats/uqff/uqff.h"
#endif
#if TBLOB_HAVE_GGUF
#include "formats/gguf/gguf.h"
#endif

namespace tblob {

namespace {

constexpr char kShardIndexName[] = "model.safetensors.index.json";

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

// ---- the probe/open table ------------------------------------------------------------------
// Each format's hooks, tried in table order at three points of open_path. A hook returns
// false when the input is not its format (having done nothing), true when it is: it then
// owns the open and *st is the result (*out set on success).
struct Input {
  const char *path;
  const uint8_t *head;  // the file's first bytes (content hooks)
  size_t head_len;
  const Limits &limits;
  const Diag &diag;
};
// Before anything else: paths a format recognises by themselves (directories, store paths).
using PathHook = bool (*)(const Input &in, tblob_model **out, Status *st);
// Files recognised by their first bytes, before the safetensors fallbacks.
using ContentHook = bool (*)(const Input &in, tblob_model **out, Status *st);
// A file scanned as safetensors (m: its rows and metadata, not yet checked as a whole) that
// is really this format, told by its table; the hook then owns m (reuses or frees it).
using TableHook = bool (*)(const Input &in, tblob_model *m, tblob_model **out, Status *st);

struct FormatHooks {
  PathHook path;
  ContentHook content;
  TableHook table;
};

#if TBLOB_HAVE_OLLAMA
// A store root, "<root>/<model>[:tag]" or <root>/manifests/<h>/<n>/<m>/<t>.
bool ollama_path(const Input &in, tblob_model **out, Status *st) {
  bool handled = false;
  *st = ollama::try_open_path(in.path, in.limits, out, &handled, in.diag);
  return handled;
}
// A manifest outside a store layout: said so instead of being read as safetensors.
bool ollama_content(const Input &in, tblob_model **out, Status *st) {
  if (!ollama::looks_like_manifest(in.head, in.head_len)) return false;
  *st = ollama::open_manifest_path(in.path, in.limits, out, in.diag);
  return true;
}
#endif

#if TBLOB_HAVE_UQFF
Status uqff_open_path(const Input &in, tblob_model **out) {
  tblob_model *m = model_new(in.limits.allocator);
  if (!m) return in.diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  const char *paths[1] = {in.path};
  return finish(m, uqff::open_set(m, paths, 1, in.limits, in.diag), out);
}
// A directory holding *.uqff shards or uqff_report.json.
bool uqff_path(const Input &in, tblob_model **out, Status *st) {
  if (!path_is_directory(in.path) || !uqff::looks_like_dir(in.path)) return false;
  *st = uqff_open_path(in, out);
  return true;
}
// A UQFF shard is a safetensors file whose entry names say UQFF; it is opened as a shard set
// (its siblings are found from its name), keeping the scan already made of it.
bool uqff_table(const Input &in, tblob_model *m, tblob_model **out, Status *st) {
  if (!uqff::table_says_shard(m, in.path)) return false;
  *st = finish(m, uqff::open_scanned(m, in.path, in.limits, in.diag), out);
  return true;
}
#endif

#if TBLOB_HAVE_SLM1 || TBLOB_HAVE_GGUF
// A file told by its magic: opened as file 0 of a new model by the format's reader.
bool open_by_magic(const Input &in, bool is_it, Status (*reader)(tblob_model *, const Limits &, const Diag &),
                   tblob_model **out, Status *st) {
  if (!is_it) return false;
  tblob_model *m = model_new(in.limits.allocator);
  if (!m) {
    *st = in.diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    return true;
  }
  Status s = model_add_file(m, in.path, in.limits.mode, in.diag);
  if (s == TBLOB_OK) s = reader(m, in.limits, in.diag);
  *st = finish(m, s, out);
  return true;
}
#endif

#if TBLOB_HAVE_SLM1
// Magic "SLM1".
bool slm1_content(const Input &in, tblob_model **out, Status *st) {
  return open_by_magic(in, slm1_looks_like(in.head, in.head_len), &slm1_open_detected, out, st);
}
#endif

#if TBLOB_HAVE_GGUF
// Magic "GGUF".
bool gguf_content(const Input &in, tblob_model **out, Status *st) {
  return open_by_magic(in, gguf::looks_like(in.head, in.head_len), &gguf::open_file, out, st);
}
#endif

const FormatHooks kFormats[] = {
#if TBLOB_HAVE_OLLAMA
    {ollama_path, ollama_content, nullptr},
#endif
#if TBLOB_HAVE_UQFF
    {uqff_path, nullptr, uqff_table},
#endif
#if TBLOB_HAVE_SLM1
    {nullptr, slm1_content, nullptr},
#endif
#if TBLOB_HAVE_GGUF
    {nullptr, gguf_content, nullptr},
#endif
    {nullptr, nullptr, nullptr},  // keeps the table non-empty in a safetensors-only build
};

// A file whose magic names a format this build left out. No such file is valid safetensors
// ("GGUF" or "SLM1" as the low bytes of the header length is over the format's 100 MB cap), so
// the honest answer is that the part is missing, not a safetensors error.
Status compiled_out(const uint8_t *head, size_t len, const Diag &diag, bool memory = false) {
  // memory: tblob_model_open_memory reads GGUF and safetensors only, whatever the build.
  struct Magic { const char bytes[5]; const char *name; bool built; bool in_memory; };
  static constexpr Magic kMagics[] = {{"GGUF", "GGUF", TBLOB_HAVE_GGUF != 0, true},
                                      {"SLM1", "SLM1", TBLOB_HAVE_SLM1 != 0, false}};
  for (const Magic &mg : kMagics)
    if (!mg.built && (mg.in_memory || !memory) && len >= 4 && std::memcmp(head, mg.bytes, 4) == 0)
      return diag.fail(TBLOB_E_FEATURE_DISABLED, 0, -1, "a %s file, and this build has no %s support", mg.name,
                       mg.name);
  return TBLOB_OK;
}

}  // namespace

Status open_path(const char *path, const Limits &limits, tblob_model **out, const Diag &diag) {
  Input in{path, nullptr, 0, limits, diag};
  Status st;
  for (const FormatHooks &f : kFormats)
    if (f.path && f.path(in, out, &st)) return st;
  tblob_model *m = model_new(limits.allocator);
  if (!m) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
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
    st = model_add_file(m, path, limits.mode, diag);  // reports the open error
    return finish(m, st == TBLOB_OK ? diag.fail_plain(TBLOB_E_IO) : st, out);
  }
  in.head = head;
  in.head_len = static_cast<size_t>(got);
  for (const FormatHooks &f : kFormats)
    if (f.content && f.content(in, out, &st)) {
      model_free(m);
      return st;
    }
  if ((st = compiled_out(head, in.head_len, diag)) != TBLOB_OK) return finish(m, st, out);
  if (st_looks_like_shard_index(head, in.head_len, path_file_size(path)))
    return finish(m, open_shard_index(m, path, limits, diag), out);
  // Anything else is read as safetensors, whose checks say precisely what is wrong.
  st = model_add_file(m, path, limits.mode, diag);
  if (st == TBLOB_OK) st = st_scan_single(m, limits, diag);
  if (st == TBLOB_OK)
    for (const FormatHooks &f : kFormats)
      if (f.table && f.table(in, m, out, &st)) return st;
  if (st == TBLOB_OK) st = st_finish_single(m, limits, diag);
  return finish(m, st, out);
}

namespace {

#if TBLOB_HAVE_GGUF
// Copies the caller diag's record of a failed attempt (one whose error is final after all).
void diag_copy(const tblob_diag &from, const Diag &to) {
  if (!to.out) return;
  to.reset();
  to.fail(from.status, from.offset, from.tensor_index, "%s", from.message);
}

// GGUF through a byte source: the header's length is known only once parsed, so the parser
// runs on a prefix that doubles while it says the bytes ran out, up to the size or the
// header limit. A failed attempt's model is freed without its source (kept for the next).
Status open_gguf_source(tblob_model *m, const Limits &limits, tblob_model **out, const Diag &diag) {
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
    s = gguf::open_detected(t, limits, ld);
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
      if (s == TBLOB_OK) s = gguf::open_source_set(&t, limits, diag);  // a split set: all its parts
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
#endif

#if TBLOB_HAVE_UQFF
// A UQFF shard through a byte source: a layer's header is its small side entries (format,
// shape, bits, group size, scalars), so only the safetensors header and those entries are
// read; opened as a one-shard set (siblings are not looked for, as for
// tblob_uqff_open_memory). Layer parts are read when dequantized.
Status open_uqff_source(tblob_model *m, const Limits &limits, tblob_model **out, const Diag &diag) {
  return finish(m, uqff::open_source_shard(m, limits, diag), out);
}
#endif

// Reads the first `want` bytes (fewer when the size says so) for detection.
Status sniff(Source *src, uint64_t want, const Allocator &a, const Diag &diag) {
  return source_grow_prefix(src, want, a, "the first bytes", diag, true);
}

}  // namespace

Status open_source(const tblob_byte_source *bs, const Limits &limits, tblob_model **out, const Diag &diag) {
  tblob_model *m = model_new(limits.allocator);
  if (!m) {
    if (bs->close) bs->close(bs->user);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  FileDesc f{};
  Status s = source_open_callback(bs, m->alloc, &f.source, diag);  // closes on failure
  if (s != TBLOB_OK) return finish(m, s, out);
  f.path = f.source.reader->name;
  f.path_len = f.source.reader->name_len;
  if (!m->files.push(f)) {
    source_close(&f.source, m->alloc);
    return finish(m, diag.fail_plain(TBLOB_E_OUT_OF_MEMORY), out);
  }
  Source &src = m->files[0].source;
  s = sniff(&src, 8, m->alloc, diag);
  if (s != TBLOB_OK) return finish(m, s, out);
#if TBLOB_HAVE_GGUF
  if (gguf::looks_like(src.data, src.len)) return open_gguf_source(m, limits, out, diag);
#endif
#if TBLOB_HAVE_SLM1
  if (slm1_looks_like(src.data, src.len)) {
    const uint64_t total = source_total(src);
    if (!(limits.flags & TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM) || total == TBLOB_SOURCE_SIZE_UNKNOWN) {
      // The checksum covers every byte (and an unknown size has no end to check regions
      // against): the file is read whole.
      s = source_read_whole(&src, UINT64_MAX - 1, TBLOB_E_LIMIT_HEADER_BYTES, m->alloc, "the SLM1 file", diag);
    } else {
      // Without the checksum only [0, tensor_data_offset) is read: the header, checked first
      // against the declared size, then the tokenizer section and the directory it places.
      s = source_grow_prefix(&src, slm1::kHeaderBytes, m->alloc, "the SLM1 header", diag);
      slm1::Header h;
      if (s == TBLOB_OK) s = slm1::read_header(src.data, total, limits, &h, diag);
      if (s == TBLOB_OK) s = source_grow_prefix(&src, h.data_offset, m->alloc, "the SLM1 directory", diag);
    }
    if (s == TBLOB_OK) s = slm1_open_detected(m, limits, diag);
    return finish(m, s, out);
  }
#endif
  size_t i = 0;
  while (i < src.len && json::is_ws(src.data[i])) ++i;
  if (src.len > 0 && (i == src.len || src.data[i] == '{')) {
    s = sniff(&src, 9, m->alloc, diag);
    if (s != TBLOB_OK) return finish(m, s, out);
    if (st_looks_like_shard_index(src.data, src.len, source_total(src) == TBLOB_SOURCE_SIZE_UNKNOWN
                                                          ? UINT64_MAX
                                                          : source_total(src))) {
      // The index is read whole; the model's files are its shards (siblings).
      Source idx = src;
      m->files[0].source = Source{};
      m->files.pop();
      s = source_read_whole(&idx, kMaxConfigJsonBytes, TBLOB_E_LIMIT_HEADER_BYTES, m->alloc, "the shard index", diag);
      if (s == TBLOB_OK) {
        const char *name = idx.reader->name;
        size_t cut = idx.reader->name_len;
        while (cut > 0 && name[cut - 1] != '/') --cut;
        char *dir = static_cast<char *>(m->arena.alloc(cut + 2));
        if (!dir) {
          s = diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
        } else {
          if (cut == 0) {
            dir[0] = '.';
            dir[1] = '\0';
          } else {
            std::memcpy(dir, name, cut - 1 ? cut - 1 : 1);
            dir[cut - 1 ? cut - 1 : 1] = '\0';
          }
          s = st_open_sharded(m, dir, idx.data, idx.len, limits, diag, &idx);
        }
      }
      source_close(&idx, m->alloc);
      return finish(m, s, out);
    }
  }
  if ((s = compiled_out(src.data, src.len, diag)) != TBLOB_OK) return finish(m, s, out);
  s = st_fetch_header(&src, limits, m->alloc, diag);
  if (s == TBLOB_OK) s = st_scan_single(m, limits, diag);
#if TBLOB_HAVE_UQFF
  if (s == TBLOB_OK && uqff::table_says_shard(m, m->files[0].path)) return open_uqff_source(m, limits, out, diag);
#endif
  if (s == TBLOB_OK) s = st_finish_single(m, limits, diag);
  return finish(m, s, out);
}

Status open_memory(const void *buf, size_t len, const Limits &limits, tblob_model **out,
                   const Diag &diag) {
  tblob_model *m = model_new(limits.allocator);
  if (!m) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  const Status st = model_add_buffer(m, buf, len, diag);
  if (st != TBLOB_OK) return finish(m, st, out);
#if TBLOB_HAVE_GGUF
  if (gguf::looks_like(static_cast<const uint8_t *>(buf), len)) return finish(m, gguf::open_detected(m, limits, diag), out);
#endif
  const Status off = compiled_out(static_cast<const uint8_t *>(buf), len, diag, true);
  return finish(m, off != TBLOB_OK ? off : st_open_single(m, limits, diag), out);
}

}  // namespace tblob
