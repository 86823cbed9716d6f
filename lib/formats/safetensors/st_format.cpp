// safetensors as tables of operations (table/format_ops.h): the base container, which
// detection falls back to (lib/formats/open.cpp scans it and lets formats built on it claim
// the table), and a sharded checkpoint, told by its index (model.safetensors.index.json: a
// directory holding one, or the index file itself).
#include <cstring>

#include "formats/safetensors/safetensors.h"
#include "io/source.h"
#include "json/json_lex.h"
#include "table/format_ops.h"

namespace tblob {
namespace {

constexpr char kShardIndexName[] = "model.safetensors.index.json";

Status finish(tblob_model *m, Status s, tblob_model **out) {
  if (s != TBLOB_OK) {
    model_free(m);
    return s;
  }
  *out = m;
  return TBLOB_OK;
}

// The directory part of name (up to its last '/'; "." for none), in m's arena.
char *dir_of(tblob_model *m, const char *name, size_t n) {
  size_t cut = n;
  while (cut > 0 && name[cut - 1] != '/') --cut;
  char *dir = static_cast<char *>(m->arena.alloc(cut + 2));
  if (!dir) return nullptr;
  if (cut == 0) {
    dir[0] = '.';
    dir[1] = '\0';
  } else {
    std::memcpy(dir, name, cut - 1 ? cut - 1 : 1);
    dir[cut - 1 ? cut - 1 : 1] = '\0';
  }
  return dir;
}

// Opens the shard index at index_path (its directory holds the shards) into m (no files).
Status open_shard_index(tblob_model *m, const char *index_path, const Limits &limits, const Diag &diag) {
  Source idx;
  Status s = source_open_file(index_path, TBLOB_OPEN_READ, m->alloc, &idx, diag);
  if (s != TBLOB_OK) return s;
  const char *dir = dir_of(m, index_path, std::strlen(index_path));
  if (!dir) {
    source_close(&idx, m->alloc);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  s = st_open_sharded(m, dir, idx.data, idx.len, limits, diag);
  source_close(&idx, m->alloc);
  return s;
}

// A directory: its shard index, or no container this build reads (every format that claims
// directories came before in the registry).
bool claims_directory(const char *path, const Limits &limits, tblob_model **out, Status *st, const Diag &diag) {
  if (!path_is_directory(path)) return false;
  tblob_model *m = model_new(limits.allocator);
  if (!m) {
    *st = diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    return true;
  }
  const size_t n = std::strlen(path);
  char *index = static_cast<char *>(m->arena.alloc(n + sizeof(kShardIndexName) + 1));
  if (!index) {
    *st = finish(m, diag.fail_plain(TBLOB_E_OUT_OF_MEMORY), out);
    return true;
  }
  std::memcpy(index, path, n);
  size_t k = n;
  if (k == 0 || index[k - 1] != '/') index[k++] = '/';
  std::memcpy(index + k, kShardIndexName, sizeof(kShardIndexName));
  if (path_is_regular_file(index)) {
    *st = finish(m, open_shard_index(m, index, limits, diag), out);
    return true;
  }
  *st = finish(m,
               diag.fail(TBLOB_E_UNKNOWN_FORMAT, TBLOB_NO_OFFSET, -1,
                         "directory %s holds no container this build reads (no %s)", path, kShardIndexName),
               out);
  return true;
}

// A JSON object (that is not a safetensors header) is taken as an index: its own checks say
// what is wrong with it. Nine bytes tell a header length from JSON.
ProbeResult probe_index(const uint8_t *p, size_t n, uint64_t total, bool more) {
  size_t i = 0;
  while (i < n && json::is_ws(p[i])) ++i;
  if (n == 0 || (i < n && p[i] != '{')) return kProbeNo;
  if (more && n < 9) return kProbeMore;
  return st_looks_like_shard_index(p, n, total) ? kProbeYes : kProbeNo;
}

Status open_index(const OpenRequest &r, tblob_model **out) {
  if (r.input == kInputPath) {  // the index is read again, whole, beside its shards
    model_free(r.m);
    tblob_model *m = model_new(r.limits.allocator);
    if (!m) return r.diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    return finish(m, open_shard_index(m, r.path, r.limits, r.diag), out);
  }
  // A byte source: the index is read whole; the model's files are its shards (siblings).
  tblob_model *m = r.m;
  Source idx = m->files[0].source;
  m->files[0].source = Source{};
  m->files.pop();
  Status s = source_read_whole(&idx, kMaxConfigJsonBytes, TBLOB_E_LIMIT_HEADER_BYTES, m->alloc, "the shard index",
                               r.diag);
  if (s == TBLOB_OK) {
    const char *dir = dir_of(m, idx.reader->name, idx.reader->name_len);
    s = dir ? st_open_sharded(m, dir, idx.data, idx.len, r.limits, r.diag, &idx) : r.diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  source_close(&idx, m->alloc);
  return finish(m, s, out);
}

constexpr FormatOps make_sharded() {
  FormatOps o;
  o.name = "safetensors-sharded";
  o.format = TBLOB_FORMAT_SAFETENSORS_SHARDED;
  o.inputs = kInputPath | kInputSource;  // the shards are the index's siblings
  o.claims_path = &claims_directory;
  o.probe_bytes = 9;
  o.probe = &probe_index;
  o.open = &open_index;
  return o;
}

constexpr FormatOps make_single() {
  FormatOps o;
  o.name = "safetensors";
  o.format = TBLOB_FORMAT_SAFETENSORS;
  o.inputs = kInputPath | kInputMemory | kInputSource;  // detection's fallback: no probe
  return o;
}

}  // namespace

namespace safetensors {
const FormatOps kShardedFormat = make_sharded();
const FormatOps kFormat = make_single();
}  // namespace safetensors

}  // namespace tblob
