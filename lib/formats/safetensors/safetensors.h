// safetensors: files, blobs, buffers, and sharded checkpoints, into the tensor table.
#pragma once
#include <cstdint>

#include "core/limits.h"
#include "core/model.h"
#include "core/status.h"

namespace tblob {

// Scans file `file_index` of m (its source already set) and appends its tensors and
// metadata: steps 1-5 and per-entry checks. Also rejects duplicate metadata keys in it.
Status st_scan_into_model(tblob_model *m, uint32_t file_index, const Limits &limits,
                          const Diag &diag);

// Orders one scanned file's rows by (begin, end) and sets their file offsets.
void st_sort_rows(tblob_model *m, uint32_t file_index);

// Whole-table checks of one sorted file: tiling in (begin, end) order, then the data
// region's exact length.
Status st_check_ranges(tblob_model *m, uint32_t file_index, const Diag &diag);

// A complete single-buffer open (the source of file 0 is set): scan, duplicate names,
// ranges, metadata index.
Status st_open_single(tblob_model *m, const Limits &limits, const Diag &diag);

// A sharded checkpoint from its index JSON (bytes of model.safetensors.index.json) and
// the directory holding the shards.
Status st_open_sharded(tblob_model *m, const char *dir, const uint8_t *index_json,
                       size_t index_len, const Limits &limits, const Diag &diag);

// True when the bytes look like a shard index (a JSON object with a "weight_map" key).
bool st_looks_like_shard_index(const uint8_t *p, size_t n);

}  // namespace tblob
