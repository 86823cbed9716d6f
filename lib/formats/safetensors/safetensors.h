// safetensors: files, blobs, buffers, and sharded checkpoints, into the tensor table.
#pragma once
#include <cstdint>

#include "core/limits.h"
#include "table/model.h"
#include "core/status.h"

namespace tblob {

// Scans file `file_index` of m (its source already set) and appends its tensors and
// metadata: steps 1-5 and per-entry checks. Also rejects duplicate metadata keys in it.
Status st_scan_into_model(tblob_model *m, uint32_t file_index, const Limits &limits,
                          const Diag &diag);

// A file read through a byte source (kCallback): reads exactly the 8-byte length and the
// header it declares into the source's prefix, so st_scan_into_model sees a whole header.
// Lengths the scan would reject (too large, over the limit) read nothing more; a header
// past a known size is TBLOB_E_HEADER_LENGTH unread.
Status st_fetch_header(Source *src, const Limits &limits, const Allocator &a, const Diag &diag);

// Orders one scanned file's rows by (begin, end) (their file offsets were set by the scan).
void st_sort_rows(tblob_model *m, uint32_t file_index);

// Whole-table checks of one sorted file: tiling in (begin, end) order, then the data
// region's exact length.
Status st_check_ranges(tblob_model *m, uint32_t file_index, const Diag &diag);

// A complete single-buffer open (the source of file 0 is set): scan, duplicate names,
// ranges, metadata index.
Status st_open_single(tblob_model *m, const Limits &limits, const Diag &diag);
// The same in two steps, so a caller can look at the scanned table before finishing: the
// scan (rows sorted by offset), then duplicate names, ranges, metadata index, companions.
Status st_scan_single(tblob_model *m, const Limits &limits, const Diag &diag);
Status st_finish_single(tblob_model *m, const Limits &limits, const Diag &diag);

// A sharded checkpoint from its index JSON (bytes of model.safetensors.index.json) and
// the directory holding the shards.
// With `parent` (the index read through a byte source) the shards are its siblings, opened
// through its open_sibling and read header first.
Status st_open_sharded(tblob_model *m, const char *dir, const uint8_t *index_json,
                       size_t index_len, const Limits &limits, const Diag &diag,
                       const Source *parent = nullptr);

// True when a file of file_size bytes starting with p[0..n) is a shard index (a JSON
// object) rather than a safetensors file.
bool st_looks_like_shard_index(const uint8_t *p, size_t n, uint64_t file_size);

// Quantized companions (st_companions.cpp, docs/dequant.md): after the table is complete and
// its names indexed, records each packed weight + companions as one logical tensor in
// m->quant / m->quant_of. Fails only with TBLOB_E_OUT_OF_MEMORY; an inconsistent set is
// recorded with the status dequantizing it returns.
struct CompanionOptions {
  const char *config_dir = nullptr;      // directory whose config.json is read when needed
  const uint8_t *config_json = nullptr;  // or its bytes (win over config_dir)
  size_t config_json_len = 0;
  // Look metadata up in each tensor's own file range (files[i].metadata_begin/end), as for
  // the blobs of an Ollama store model, instead of the model-wide metadata index.
  bool per_file_metadata = false;
  uint32_t max_json_depth = TBLOB_DEFAULT_JSON_DEPTH;
  // A byte source whose sibling "config.json" is read when needed (instead of config_dir).
  const Source *config_parent = nullptr;
};
Status st_resolve_companions(tblob_model *m, const CompanionOptions &options, const Diag &diag);
// The same with the config.json of the directory holding file 0 (none for a memory buffer).
Status st_resolve_companions_beside(tblob_model *m, const Limits &limits, const Diag &diag);

// The operations of a single file (detection's fallback) and of a sharded checkpoint, found
// by its index (st_format.cpp).
namespace safetensors {
extern const FormatOps kFormat;
extern const FormatOps kShardedFormat;
}  // namespace safetensors

}  // namespace tblob
