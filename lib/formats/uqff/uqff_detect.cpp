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

// The one rule, whether the names come from a header being scanned or from a table: an
// entry `uqff.version.*` or `*.weight.format` marks a shard. A later shard of a set may hold
// only `<key>.weight` entries (the layer's other entries are in an earlier shard): its
// metadata says UQFF, and so does residual.safetensors'; the two are told apart by the
// shard name `<stem>-N.uqff` (never the format itself).
bool marker_entry(const char *name, size_t n) {
  return (n > 13 && std::memcmp(name, "uqff.version.", 13) == 0) || ends_with(name, n, ".weight.format");
}
bool decide(bool marker, bool version_metadata, const char *path) {
  return marker || (version_metadata && is_shard_name(path));
}

// Watches a header scan for the rule's names (decoded, as the table would hold them).
class MarkerSink final : public StSink {
 public:
  explicit MarkerSink(const Allocator *a) : name_(a) {}
  Status on_tensor(const StTensorEntry &e) override {
    const char *p = e.ev.name;
    size_t n = e.ev.name_len;
    if (e.ev.name_has_escapes) {
      if (!name_.resize(n)) return TBLOB_E_OUT_OF_MEMORY;
      n = json::decode_into(e.name(), name_.data(), n);
      p = name_.data();
    }
    if (!marker_entry(p, n)) return TBLOB_OK;
    marker = true;
    return TBLOB_E_CANCELLED;  // decided
  }
  Status on_metadata(const StMetaEntry &e) override {
    if (json::decoded_equals(e.key, "uqff.version", 12)) version_metadata = true;
    return TBLOB_OK;
  }
  bool marker = false;
  bool version_metadata = false;

 private:
  PodVec<char> name_;
};
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
  MarkerSink sink(&a);
  StScanSummary sum;
  static_cast<void>(st_scan_header(src.data, src.len, Limits(), &sink, &sum, quiet));
  source_close(&src, a);
  return decide(sink.marker, sink.version_metadata, path);
}

// The same decision from the table of a file already opened as safetensors: one pass over
// the names, so a plain safetensors file pays next to nothing for UQFF detection.
bool table_says_shard(const tblob_model *m, const char *path) {
  bool marker = false, version = false;
  for (size_t i = 0; i < m->tensors.size() && !marker; ++i)
    marker = marker_entry(m->tensors[i].name, m->tensors[i].name_len);
  for (size_t i = 0; i < m->metadata.size() && !version; ++i)
    version = m->metadata[i].name_len == 12 && std::memcmp(m->metadata[i].name, "uqff.version", 12) == 0;
  return decide(marker, version, path);
}

}  // namespace uqff
}  // namespace tblob
