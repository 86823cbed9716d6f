// Content detection of UQFF inputs for tblob_open_path (never by file name alone: a
// directory qualifies by holding shards, a file by the entry names in its header).
#include <cstring>

#include "core/allocator.h"
#include "formats/uqff/uqff.h"
#include "formats/uqff/uqff_discover.h"
#include "io/source.h"

namespace tblob {
namespace uqff {

namespace {
bool contains(const uint8_t *p, size_t n, const char *needle) {
  const size_t k = std::strlen(needle);
  if (n < k) return false;
  const uint8_t first = static_cast<uint8_t>(needle[0]);
  for (size_t i = 0; i + k <= n; ++i) {
    const void *hit = std::memchr(p + i, first, n - k + 1 - i);
    if (!hit) return false;
    i = static_cast<size_t>(static_cast<const uint8_t *>(hit) - p);
    if (std::memcmp(p + i, needle, k) == 0) return true;
  }
  return false;
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
  if (head_len < 10) return false;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | head[i];
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
    if (!hit && contains(h, hl, "\"uqff.version\"")) {
      const char *base = std::strrchr(path, '/');
      base = base ? base + 1 : path;
      size_t stem;
      uint64_t index;
      hit = parse_shard_name(base, std::strlen(base), &stem, &index);
    }
  }
  source_close(&src, a);
  return hit;
}

}  // namespace uqff
}  // namespace tblob

// Entry points for formats/open.cpp (declared there at the detection hooks).
namespace tblob {
bool uqff_is_dir(const char *path) { return uqff::looks_like_dir(path); }
bool uqff_is_shard(const char *path, const uint8_t *head, size_t head_len) {
  return uqff::looks_like_shard(path, head, head_len);
}
Status uqff_open_detected(tblob_model *m, const char *path, const Limits &limits, const Diag &diag) {
  const char *paths[1] = {path};
  return uqff::open_set(m, paths, 1, limits, diag);
}
}  // namespace tblob
