// Sharded checkpoints: model.safetensors.index.json ({"metadata": {...}, "weight_map":
// {tensor: shard file}}) plus the shard files beside it, opened as one model.
#include <cstring>

#include "formats/safetensors/safetensors.h"
#include "json/json_lex.h"
#include "json/json_walk.h"
#include "json/st_scanner.h"

namespace tblob {

namespace {

using json::Cursor;
using json::StringSlice;

struct WeightMapEntry {
  StringSlice tensor;
  StringSlice file;
};

// Walks the index: for each weight_map entry calls fn(entry); returns false on a JSON error
// (c.err set) or when fn returns a status (in *s).
template <class Fn>
bool walk_index(Cursor &c, uint32_t max_depth, Fn fn, Status *s, bool *saw_map) {
  json::skip_ws(c);
  if (c.p >= c.end || *c.p != '{') return c.fail(json::Err::kGrammar, c.p, "index is not a JSON object");
  const bool ok = json::walk_object(c, 0, max_depth, [&](const StringSlice &k, Cursor &) -> bool {
    if (!json::decoded_equals(k, "weight_map", 10)) return json::skip_value(c, 1, max_depth);
    if (*saw_map) return c.fail(json::Err::kGrammar, k.at, "duplicate weight_map");
    *saw_map = true;
    if (c.p >= c.end || *c.p != '{') return c.fail(json::Err::kGrammar, c.p, "weight_map is not an object");
    return json::walk_object(c, 1, max_depth, [&](const StringSlice &tensor, Cursor &) -> bool {
      WeightMapEntry e;
      e.tensor = tensor;
      if (c.p >= c.end || *c.p != '"') return c.fail(json::Err::kGrammar, c.p, "weight_map value is not a string");
      if (!json::scan_string(c, &e.file)) return false;
      return (*s = fn(e)) == TBLOB_OK;
    });
  });
  if (!ok) return false;
  json::skip_ws(c);
  if (c.p != c.end) return c.fail(json::Err::kGrammar, c.p, "trailing characters after the index");
  return true;
}

// A shard name must be a plain file name in the index's directory.
bool plain_file_name(const char *p, size_t n) {
  if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return false;
  for (size_t i = 0; i < n; ++i)
    if (p[i] == '/' || p[i] == '\\' || p[i] == '\0') return false;
  return true;
}

Status index_error(const Diag &diag, const Cursor &c) {
  const uint64_t off = c.offset(c.err_at ? c.err_at : c.p);
  return diag.fail(TBLOB_E_SHARD_INDEX, off, -1, "shard index is not valid at byte %llu: %s",
                   static_cast<unsigned long long>(off), c.err_what ? c.err_what : "syntax");
}

}  // namespace

bool st_looks_like_shard_index(const uint8_t *p, size_t n, uint64_t file_size) {
  // A safetensors file whose header length happens to start with '{' (N = 123, say) is
  // still safetensors: its length fits the file and its header opens an object.
  uint64_t len = 0;
  if (n >= 9 && file_size >= 8 && st_header_length(p, n, &len)) {
    if (len <= file_size - 8) {
      size_t i = 8;
      while (i < n && json::is_ws(p[i])) ++i;
      if (i < n && p[i] == '{') return false;
    }
  }
  // Otherwise a file that is a JSON object is taken as an index: its own checks say what
  // is wrong with it (no weight_map, ...).
  size_t i = 0;
  while (i < n && json::is_ws(p[i])) ++i;
  return i < n && p[i] == '{';
}

Status st_open_sharded(tblob_model *m, const char *dir, const uint8_t *index_json,
                       size_t index_len, const Limits &limits, const Diag &diag, const Source *parent) {
  m->format = TBLOB_FORMAT_SAFETENSORS_SHARDED;
  const size_t dir_len = std::strlen(dir);
  // Pass 1: the distinct shard files, in order of first mention.
  Cursor c{index_json, index_json, index_json + index_len};
  Status s = TBLOB_OK;
  bool saw_map = false;
  uint64_t entries = 0;
  auto add_file = [&](const WeightMapEntry &e) -> Status {
    ++entries;
    char name[4096];
    const size_t n = json::decode_into(e.file, name, sizeof(name));
    if (n >= sizeof(name) || !plain_file_name(name, n))
      return diag.fail(TBLOB_E_SHARD_INDEX, c.offset(e.file.at), -1,
                       "weight_map names \"%.*s\" (byte %llu), which is not a file name in the index's directory",
                       static_cast<int>(n < 200 ? n : 200), name,
                       static_cast<unsigned long long>(c.offset(e.file.at)));
    for (size_t i = 0; i < m->files.size(); ++i) {
      const FileDesc &f = m->files[i];
      if (f.path_len == dir_len + 1 + n && std::memcmp(f.path + dir_len + 1, name, n) == 0) return TBLOB_OK;
    }
    if (m->files.size() >= limits.max_files)
      return diag.fail(TBLOB_E_LIMIT_FILES, c.offset(e.file.at), -1,
                       "the index names more than %u shard files", limits.max_files);
    char *path = static_cast<char *>(m->arena.alloc(dir_len + 1 + n + 1));
    if (!path) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    std::memcpy(path, dir, dir_len);
    path[dir_len] = '/';
    std::memcpy(path + dir_len + 1, name, n);
    path[dir_len + 1 + n] = '\0';
    FileDesc f{};
    f.path = path;
    f.path_len = dir_len + 1 + n;
    return m->files.push(f) ? TBLOB_OK : diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  };
  if (!walk_index(c, limits.max_json_depth, add_file, &s, &saw_map))
    return s != TBLOB_OK ? s : index_error(diag, c);
  if (!saw_map)
    return diag.fail(TBLOB_E_SHARD_INDEX, 0, -1, "shard index has no weight_map");

  // Open and scan every shard, then the checks that need all of them.
  for (uint32_t i = 0; i < m->files.size(); ++i) {
    if (parent) {
      const char *name = m->files[i].path + dir_len + 1;
      s = source_open_sibling(*parent, name, m->files[i].path_len - dir_len - 1, m->alloc, &m->files[i].source, diag);
      if (s == TBLOB_OK) s = st_fetch_header(&m->files[i].source, limits, m->alloc, diag);
    } else {
      s = source_open_file(m->files[i].path, limits.mode, m->alloc, &m->files[i].source, diag);
    }
    if (s != TBLOB_OK) return s;
    s = st_scan_into_model(m, i, limits, diag);
    if (s != TBLOB_OK) return s;
  }
  for (uint32_t i = 0; i < m->files.size(); ++i) st_sort_rows(m, i);
  if ((s = m->index_names(diag, true)) != TBLOB_OK) return s;
  for (uint32_t i = 0; i < m->files.size(); ++i)
    if ((s = st_check_ranges(m, i, diag)) != TBLOB_OK) return s;
  if ((s = m->index_metadata_first_wins(diag)) != TBLOB_OK) return s;

  // Pass 2: every weight_map entry names a tensor in the shard it says; every tensor is
  // listed (entries == tensors, and names are unique on both sides).
  c = Cursor{index_json, index_json, index_json + index_len};
  saw_map = false;
  uint8_t *seen = static_cast<uint8_t *>(m->arena.alloc(m->tensors.size()));
  if (!seen) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  std::memset(seen, 0, m->tensors.size());
  auto cross_check = [&](const WeightMapEntry &e) -> Status {
    char name[4096];
    size_t n = json::decode_into(e.tensor, name, sizeof(name));
    const char *tname = name;
    char *big = nullptr;
    if (n > sizeof(name)) {
      big = static_cast<char *>(m->arena.alloc(n));
      if (!big) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      json::decode_into(e.tensor, big, n);
      tname = big;
    }
    const size_t pos = m->tensor_index.find(tname, n);
    const int shown = static_cast<int>(n < 200 ? n : 200);
    if (pos == SIZE_MAX)
      return diag.fail(TBLOB_E_SHARD_INDEX, c.offset(e.tensor.at), -1,
                       "weight_map lists tensor \"%.*s\" (byte %llu), which no shard holds", shown,
                       tname, static_cast<unsigned long long>(c.offset(e.tensor.at)));
    if (seen[pos])
      return diag.fail(TBLOB_E_SHARD_INDEX, c.offset(e.tensor.at), static_cast<int64_t>(pos),
                       "weight_map lists tensor \"%.*s\" twice (byte %llu)", shown, tname,
                       static_cast<unsigned long long>(c.offset(e.tensor.at)));
    seen[pos] = 1;
    const FileDesc &f = m->files[m->tensors[pos].file_index];
    char file[4096];
    const size_t fn = json::decode_into(e.file, file, sizeof(file));
    if (f.path_len != dir_len + 1 + fn || std::memcmp(f.path + dir_len + 1, file, fn) != 0)
      return diag.fail(TBLOB_E_SHARD_INDEX, c.offset(e.tensor.at), static_cast<int64_t>(pos),
                       "weight_map puts tensor \"%.*s\" in %.*s but it is in %s", shown, tname,
                       static_cast<int>(fn < 200 ? fn : 200), file, f.path + dir_len + 1);
    return TBLOB_OK;
  };
  if (!walk_index(c, limits.max_json_depth, cross_check, &s, &saw_map))
    return s != TBLOB_OK ? s : index_error(diag, c);
  if (entries != m->tensors.size())
    return diag.fail(TBLOB_E_SHARD_INDEX, TBLOB_NO_OFFSET, -1,
                     "weight_map has %llu entries but the shards hold %llu tensors",
                     static_cast<unsigned long long>(entries),
                     static_cast<unsigned long long>(m->tensors.size()));
  return st_resolve_companions_beside(m, limits, diag);
}

}  // namespace tblob
