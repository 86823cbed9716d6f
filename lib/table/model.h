// The tensor table: what every container resolves to. One per open handle, immutable
// after open. Formats fill it through ModelBuilder-style code in their own folders.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"
#include "core/once.h"
#include "table/meta_index.h"
#include "table/name_index.h"
#include "core/status.h"
#include "io/source.h"
#include "table/format_ops.h"

namespace tblob {

struct TensorDesc {
  const char *name;
  size_t name_len;
  const uint64_t *shape;
  uint32_t rank;
  uint32_t dtype;
  uint32_t file_index;
  Status entry_status;  // used while building (range checks)
  uint64_t begin, end;  // data_offsets, relative to the file's data region
  uint64_t file_offset; // absolute offset of begin in the file
  uint64_t elements;
  uint64_t order;       // position in its header (tie-break, diagnostics)
  uint64_t key_offset;  // byte offset of the entry in its file
};

// 24 bytes: metadata may hold a million keys of a few bytes each. Lengths fit in 32 bits
// (keys are capped by max_name_bytes, values by the header: GGUF strings at 2^30 bytes,
// safetensors headers at 100 MB); meta_len_ok() says so before a row is made.
struct MetaDesc {
  const char *name;  // the key
  const char *value;
  uint32_t name_len;
  uint32_t value_len;
};
inline bool meta_len_ok(size_t key_len, size_t value_len) { return key_len <= UINT32_MAX && value_len <= UINT32_MAX; }
inline MetaDesc meta_desc(const char *name, size_t name_len, const char *value, size_t value_len) {
  MetaDesc d;
  d.name = name;
  d.value = value;
  d.name_len = static_cast<uint32_t>(name_len);
  d.value_len = static_cast<uint32_t>(value_len);
  return d;
}

struct FileDesc {
  Source source;
  const char *path;  // NUL-terminated, arena-owned ("" for memory)
  size_t path_len;
  uint64_t data_offset;  // where the data region starts
  uint64_t data_bytes;   // length of the data region
  size_t tensor_begin, tensor_end;      // this file's rows in the tensor table
  size_t metadata_begin, metadata_end;  // and in the metadata table
  bool rows_in_order;  // the rows are known to be in (begin, end) order: no sort needed
  // The scan saw every row begin where the previous one ended, each with a sound entry: the
  // tiling walk would pass, covering rows_cover bytes (st_check_ranges then skips it).
  bool rows_tiled;
  uint64_t rows_cover;
  // dtypes: bit d set when a row of this file has dtype d, for files whose rows came from the
  // safetensors scan (dtypes_known); the companion resolver skips tables without packed or
  // FP8 weights without reading their rows.
  bool dtypes_known;
  uint64_t dtypes;
};

// A quantized logical tensor resolved from a packed weight and its companions at open
// (formats/safetensors/st_companions.cpp). The logical tensor is the packed weight's row.
constexpr uint64_t kNoTensor = UINT64_MAX;
struct QuantRecord {
  uint64_t tensor;                     // the packed weight
  uint64_t scale, bias, global_scale;  // companion rows, kNoTensor when absent
  const uint64_t *shape;               // logical shape (arena), `rank` dims
  uint32_t rank;
  uint32_t scheme;                     // dequant/quant_desc.h QuantScheme value
  uint32_t bits, group_size, scale_dtype, bias_dtype, special, global_scale_mode;
  uint32_t source;                     // tblob_quant_source
  Status status;                       // TBLOB_OK, or what dequantizing it returns
  const char *note;                    // static text explaining a resolution-time status
  uint64_t rows, cols;                 // logical matrix view (leading axes folded into rows)
};


}  // namespace tblob

struct tblob_model {
  explicit tblob_model(const tblob_allocator *hook)
      : alloc(hook), arena(&alloc), tensors(&alloc), metadata(&alloc), files(&alloc), scan_hashes(&alloc),
        quant(&alloc) {}
  ~tblob_model();

  tblob::Allocator alloc;
  tblob::Arena arena;
  uint32_t format = TBLOB_FORMAT_UNKNOWN;
  tblob::PodVec<tblob::TensorDesc> tensors;
  tblob::PodVec<tblob::MetaDesc> metadata;
  tblob::PodVec<tblob::FileDesc> files;
  tblob::NameIndex tensor_index;
  tblob::MetaIndex metadata_index;  // small: metadata may hold a million keys
  // While opening: each row's name_hash(), taken by the safetensors scan while the name was in
  // cache, row for row, beside the slot it filled in tensor_index (NameIndex::fill), so
  // building the index reads neither the names nor the rows again. st_sort_rows drops both
  // when it reorders rows (drop_scan_names).
  tblob::PodVec<uint64_t> scan_hashes;
  // The operations of the format the rows came from (lookup, row descriptions and decoding,
  // typed metadata: table/format_ops.h), set at open; nullptr: the table's defaults (plain
  // safetensors rows). ext is that format's state, allocated in the arena (trivially
  // destructible, released with it); nullptr for formats that need none.
  const tblob::FormatOps *ops = nullptr;
  const void *ext = nullptr;
  // Quantized companions: records in tensor order; quant_of (arena, one per tensor, null
  // when there are no records) holds 1 + the record a tensor belongs to, as weight or
  // companion, 0 for none.
  tblob::PodVec<tblob::QuantRecord> quant;
  uint32_t *quant_of = nullptr;
  // Metadata made on first use: when a format sets build_metadata at open, `metadata` and
  // `metadata_index` are empty until metadata_ready() has run it (once, whatever the threads),
  // so a command that never reads metadata never pays for its rows and index (a GGUF file
  // may hold a million key/values). Every reader of those two calls metadata_ready() first.
  tblob::Status (*build_metadata)(tblob_model *m) = nullptr;
  // Not std::call_once: it needs the C++ runtime (and its exceptions), which a C program
  // linking the static library must not.
  mutable tblob::Once<tblob::Status> metadata_once;
  // TBLOB_OK when the metadata table is there (TBLOB_E_OUT_OF_MEMORY when making it failed).
  tblob::Status metadata_ready() const;

  // Builds the tensor name index; DUPLICATE_NAME when two tensors share a name. A reader
  // whose rows still carry the names and order the safetensors scan gave them may pass
  // use_scan_hashes (see scan_hashes); scan_hashes is freed either way.
  tblob::Status index_names(const tblob::Diag &diag, bool use_scan_hashes = false);
  // Forgets what the scan filled (the rows no longer match it).
  void drop_scan_names() {
    scan_hashes.reset();
    tensor_index.reset();
  }
  // Drops metadata keys already seen in an earlier file (first occurrence wins), then
  // indexes the rest. Duplicates inside one file are the format's to reject first.
  tblob::Status index_metadata_first_wins(const tblob::Diag &diag);
};

namespace tblob {
// Creates an empty model through the allocator in options (nullptr on OOM).
tblob_model *model_new(const tblob_allocator *hook);
void model_free(tblob_model *m);

// Every opener's frame: a new model from the options' allocator, built by fill(m); on success
// *out takes it, otherwise it is freed and fill's status returned.
template <class Fill>
Status model_build(const tblob_allocator *hook, tblob_model **out, const Diag &diag, Fill &&fill) {
  tblob_model *m = model_new(hook);
  if (!m) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  const Status s = fill(m);
  if (s != TBLOB_OK) {
    model_free(m);
    return s;
  }
  *out = m;
  return TBLOB_OK;
}

// Appends the next file of m: the file at path (mapped or read as mode says; path copied into
// the arena), or a caller buffer borrowed as it is (path "").
Status model_add_file(tblob_model *m, const char *path, uint32_t mode, const Diag &diag);
Status model_add_buffer(tblob_model *m, const void *buf, size_t len, const Diag &diag);
}  // namespace tblob
