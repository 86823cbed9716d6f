// Ollama stores: the internal interface shared by the files of this folder.
//
//   digest.cpp    the one digest grammar check, and blob file names built from it
//   name.cpp      [host/][namespace/]model[:tag] grammar and defaults
//   store.cpp     the store root: directory descriptors, safe openat walks, listing
//   manifest.cpp  manifest JSON (framing statuses, then simdjson DOM)
//   blob.cpp      blob layouts into the tensor table (files opened through lib/io)
//   model.cpp     a store model as one tblob_model; tblob_model_open detection
//   verify.cpp    SHA-256 verification (threads, progress) and the incremental verifier
//   import.cpp    `ollama create` for a safetensors directory (headers written by
//                 formats/safetensors/st_writer, files replaced through io/file.h)
//   gc.cpp        unreferenced blobs
// The extern "C" functions of this part are in lib/capi/ollama_api.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <sys/stat.h>

#include "core/allocator.h"
#include "core/limits.h"
#include "table/model.h"
#include "core/status.h"
#include "tensorblob.h"

// Opaque handles of the public API.
struct tblob_store {
  explicit tblob_store(const tblob_allocator *hook) : alloc(hook) {}
  tblob::Allocator alloc;
  int root_fd = -1;
  int manifests_fd = -1;
  int blobs_fd = -1;
  char *root = nullptr;  // as given (NUL-terminated), allocated through alloc
  size_t root_len = 0;
  uint64_t max_manifest_bytes = TBLOB_OLLAMA_MAX_MANIFEST;
  uint64_t max_config_bytes = TBLOB_OLLAMA_MAX_CONFIG;
};

namespace tblob {
namespace ollama {

// ---- digest.cpp ------------------------------------------------------------------------
enum class DigestForm : uint8_t { kManifest, kFile };  // "sha256:" / "sha256-"
constexpr size_t kDigestChars = 71;                    // "sha256:" + 64
constexpr size_t kDigestBuf = 72;                      // + NUL

// THE digest grammar: exactly "sha256:" (or "sha256-") followed by 64 of [0-9a-f].
bool digest_valid(const char *p, size_t n, DigestForm form);
// Same check with a diagnostic naming `what` (e.g. "layers[3].digest").
Status check_digest(const char *p, size_t n, DigestForm form, const char *what, const Diag &diag);
// Builds the blob file name "sha256-<hex>" (NUL-terminated) from a manifest digest,
// re-checking it with digest_valid first: nothing unchecked ever reaches a path.
Status blob_file_name(const char *digest, size_t n, char out[kDigestBuf], const Diag &diag);

// ---- name.cpp --------------------------------------------------------------------------
struct ModelName {
  char host[352];
  char ns[82];
  char model[82];
  char tag[82];
  size_t host_len, ns_len, model_len, tag_len;
};
constexpr size_t kFullNameBuf = 352 + 82 * 3 + 4;

enum class NamePart : uint8_t { kHost, kNamespace, kModel, kTag };
bool name_part_valid(NamePart part, const char *p, size_t n);
// Parses [host/][namespace/]model[:tag] with the defaults registry.ollama.ai, library, latest.
Status parse_name(const char *p, size_t n, ModelName *out, const Diag &diag);
// "host/ns/model:tag" (NUL-terminated, returns length). buf >= kFullNameBuf.
size_t format_full_name(const ModelName &n, char *buf);
// As `ollama list` shows: drops the default host and namespace.
size_t format_short_name(const ModelName &n, char *buf);

// ---- store.cpp -------------------------------------------------------------------------
// Reads a manifest file into a buffer allocated through s.alloc (*buf, *len; free with
// s.alloc.free(*buf, *cap)). Every directory on the way is opened with O_NOFOLLOW.
struct FileBytes {
  uint8_t *data = nullptr;
  size_t len = 0;
  size_t cap = 0;
  int64_t mtime = 0;
};
Status read_manifest_file(const tblob_store &s, const ModelName &name, FileBytes *out,
                          const Diag &diag);
void free_bytes(const tblob_store &s, FileBytes *b);

// Opens blobs/<sha256-hex> for reading (O_NOFOLLOW, O_NONBLOCK against FIFOs) and fstat()s
// it: BLOB_MISSING / BLOB_PARTIAL / PATH / NOT_A_FILE. `digest` is a manifest digest.
Status open_blob(const tblob_store &s, const char *digest, size_t n, int *fd, struct stat *st,
                 const Diag &diag);
// "<root>/blobs/sha256-<hex>" into buf (NUL-terminated); returns its length or 0 if cap
// is too small.
size_t blob_path(const tblob_store &s, const char *digest, char *buf, size_t cap);

// Store open/close (capi and model detection use them).
Status store_open(const char *root, const tblob_store_options *options, tblob_store **out,
                  const Diag &diag);
void store_close(tblob_store *s);
// True when dir is a directory holding manifests/ and blobs/ directories.
bool looks_like_store(const char *dir);

// Every manifest path manifests/<h>/<n>/<m>/<t>: fn(ctx, name, status) per entry, where
// status is OK for a regular file with a valid name, else why not (name may be partial).
struct ListedName {
  ModelName name;
  Status status;      // OK, OLLAMA_NAME, OLLAMA_PATH (symlink), OLLAMA_NOT_A_FILE
  char raw[kFullNameBuf];  // h/n/m/t as found on disk (for messages)
};
Status list_manifest_names(const tblob_store &s, PodVec<ListedName> *out, const Diag &diag);

// ---- manifest.cpp ----------------------------------------------------------------------
struct LayerRec {
  uint32_t kind;  // tblob_layer_kind
  const char *media_type;
  size_t media_type_len;
  char digest[kDigestBuf];  // validated "sha256:<hex>"
  uint64_t size;
  const char *name;
  size_t name_len;
  const char *from;
  size_t from_len;
  uint32_t dtype;
  uint32_t has_shape;
  uint32_t rank;
  uint64_t *shape;
};

}  // namespace ollama
}  // namespace tblob

struct tblob_manifest {
  explicit tblob_manifest(const tblob_allocator *hook) : alloc(hook), arena(&alloc), layers(&alloc) {}
  tblob::Allocator alloc;
  tblob::Arena arena;
  tblob::PodVec<tblob::ollama::LayerRec> layers;
  tblob::ollama::LayerRec config{};
  bool has_config = false;
  uint64_t schema_version = 0;
  const char *media_type = nullptr;  // empty when absent
  size_t media_type_len = 0;
  char id[65] = {0};                 // SHA-256 hex of the manifest bytes
  uint64_t bytes = 0;
};

namespace tblob {
namespace ollama {

tblob_manifest *manifest_new(const tblob_allocator *hook);
void manifest_free(tblob_manifest *m);
// Parses manifest bytes into m (empty). Statuses: ZERO_LENGTH, LIMIT_MANIFEST, EMPTY,
// TRUNCATED, DOUBLED, JSON, SCHEMA, VERSION, DIGEST, LAYER_CONFLICT, OUT_OF_MEMORY.
Status parse_manifest(const uint8_t *p, size_t n, uint64_t max_bytes, tblob_manifest *m,
                      const Diag &diag);
// Reads and parses the manifest of `name`.
Status load_manifest(const tblob_store &s, const ModelName &name, tblob_manifest **out,
                     int64_t *mtime, const Diag &diag);
// One valid JSON document (simdjson), for config and JSON layers.
bool json_document_valid(const uint8_t *p, size_t n);
uint32_t layer_kind_of(const char *media_type, size_t n);

// ---- blob.cpp --------------------------------------------------------------------------
// Adds the blob of `layer` to m as a new file and its tensors to the table, applying the
// layout rules (data renaming, component prefixes, dtype/shape cross-check, ranges).
// *is_data_blob tells whether the blob was a single "data" tensor renamed from the layer.
Status add_blob(tblob_model *m, const tblob_store &s, const LayerRec &layer, size_t layer_index,
                const Limits &limits, bool *is_data_blob, const Diag &diag);
// Opens the blob of `layer` (size and emptiness checked against the manifest) and appends it
// to m's files without reading its content; *file_name: its "sha256-..." name (arena).
Status add_blob_file(tblob_model *m, const tblob_store &s, const LayerRec &layer, size_t layer_index,
                     const Limits &limits, const char **file_name, const Diag &diag);
// A further layer of a "data" blob already opened: one more row (the layer's name) over the
// tensor at `row`, so the blob stays one file however many layers share it.
Status add_data_alias(tblob_model *m, const LayerRec &layer, size_t row, const Diag &diag);

// ---- model.cpp -------------------------------------------------------------------------
// Which layers open (tblob_store_open_options.part / part_index).
struct PartSelect {
  uint32_t part = TBLOB_STORE_PART_MODEL;
  uint64_t index = 0;
};
Status open_model(const tblob_store &s, const ModelName &name, const Limits &limits,
                  const char *component, size_t component_len, tblob_model **out,
                  const Diag &diag, const PartSelect &part = PartSelect());
// tblob_model_open hooks. *handled false: not an Ollama path, continue detection.
Status try_open_path(const char *path, const Limits &limits, tblob_model **out, bool *handled,
                     const Diag &diag);
bool looks_like_manifest(const uint8_t *p, size_t n);
Status open_manifest_path(const char *path, const Limits &limits, tblob_model **out,
                          const Diag &diag);

// ---- verify.cpp ------------------------------------------------------------------------
// name nullptr: every model of the store.
Status verify_store(const tblob_store &s, const char *name, size_t name_len,
                    const tblob_verify_options *opt, tblob_verify_summary *sum, const Diag &diag);
Status verifier_open(const char *digest, size_t n, uint64_t expected_size, tblob_verifier **out,
                     const Diag &diag);
Status verifier_update(tblob_verifier *v, const void *p, size_t n, const Diag &diag);
Status verifier_final(tblob_verifier *v, char *actual, size_t cap, const Diag &diag);
void verifier_close(tblob_verifier *v);

// ---- import.cpp ------------------------------------------------------------------------
struct ImportProgress {
  tblob_import_progress_fn fn = nullptr;
  void *user = nullptr;
};
Status import_model(const tblob_store &s, const char *name, size_t name_len, const char *src_dir,
                    uint32_t flags, const Limits &limits, const ImportProgress &progress,
                    tblob_import_result *result, const Diag &diag);
// The expert group a tensor belongs to ("model.layers.3.mlp.experts"), or length 0.
size_t expert_group_of(const char *name, size_t n);

// ---- gc.cpp ----------------------------------------------------------------------------
Status gc_store(const tblob_store &s, const tblob_gc_options *opt, tblob_gc_result *res, const Diag &diag);

// The operations of the Ollama format (ollama_format.cpp): detection and open.
extern const FormatOps kFormat;

}  // namespace ollama
}  // namespace tblob
