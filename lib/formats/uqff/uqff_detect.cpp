// Content detection of UQFF inputs for tblob_model_open (never by file name alone: a
// directory qualifies by holding shards, a file by the entry names in its header).
#include <cstring>

#include "core/allocator.h"
#include "table/model.h"
#include "formats/uqff/uqff.h"
#include "formats/uqff/uqff_discover.h"
#include "io/source.h"
#include "json/st_scanner.h"

namespace tblob {
namespace uqff {

namespace {
bool contains(const uint8_t *p, size_t n, const char *needle) {
  return ::memmem(p, n, needle, std::strlen(needle)) != nullptr;
}

bool ends_with(const char *p, size_t n, const char *suffix) {
  const size_t k = std::strlen(suffix);
  return n >= k && std::memcmp(p + n - k, suffix, k) == 0;
}

bool is_shard_name(const char *path) {
  const char *base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t stem;
  uint64_t index;
  return parse_shard_name(base, std::strlen(base), &stem, &index);
}
}  // namespace

bool looks_like_dir(const char *path) {
  bool found = false;
  list_dir(path, [&](const char *name, size_t n) {
    if ((n > 5 && std::memcmp(name + n - 5, ".uqff", 5) == 0) ||
        (n == 16 && std::memcmp(name, "uqff_report.json", 16) == 0))
      found = true;
    return !found;
  });
  return found;
}

bool looks_like_shard(const char *path, const uint8_t *head, size_t head_len) {
  uint64_t n = 0;
  if (head_len < 10 || !st_header_length(head, head_len, &n)) return false;
  if (n < 2 || n > TBLOB_SAFETENSORS_MAX_HEADER || head[8] != '{') return false;
  // The whole header: the UQFF names can be anywhere in it.
  Allocator a;
  Source src;
  Diag quiet;
  if (source_open_file(path, TBLOB_OPEN_MAP, a, &src, quiet) != TBLOB_OK) return false;
  bool hit = false;
  if (src.len >= 8 + n) {
    const uint8_t *h = src.data + 8;
    const size_t hl = static_cast<size_t>(n);
    hit = contains(h, hl, "\"uqff.version.") || contains(h, hl, ".weight.format\"");
    // A later shard of a set may hold only `<key>.weight` entries (the layer's other entries
    // are in an earlier shard): its metadata says UQFF, and so does residual.safetensors'.
    // The two are told apart by the shard name `<stem>-N.uqff` (never the format itself).
    if (!hit && contains(h, hl, "\"uqff.version\"")) hit = is_shard_name(path);
  }
  source_close(&src, a);
  return hit;
}

// The same decision from the table of a file already opened as safetensors: one pass over
// the names instead of searching the header text, so a plain safetensors file pays next to
// nothing for UQFF detection.
bool table_says_shard(const tblob_model *m, const char *path) {
  for (size_t i = 0; i < m->tensors.size(); ++i) {
    const TensorDesc &t = m->tensors[i];
    if ((t.name_len > 13 && std::memcmp(t.name, "uqff.version.", 13) == 0) ||
        ends_with(t.name, t.name_len, ".weight.format"))
      return true;
  }
  return m->metadata_index.find("uqff.version", 12) != SIZE_MAX && is_shard_name(path);
}

}  // namespace uqff
}  // namespace tblob

// Entry points for formats/open.cpp (declared there at the detection hooks).
namespace tblob {
bool uqff_is_dir(const char *path) { return uqff::looks_like_dir(path); }
bool uqff_table_says_shard(const tblob_model *m, const char *path) {
  return uqff::table_says_shard(m, path);
}
Status uqff_open_detected(tblob_model *m, const char *path, const Limits &limits, const Diag &diag) {
  const char *paths[1] = {path};
  return uqff::open_set(m, paths, 1, limits, diag);
}
}  // namespace tblob
