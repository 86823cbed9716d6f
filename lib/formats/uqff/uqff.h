// mistral.rs UQFF exports: shard sets -> one tensor table.
//
// What the table holds for a UQFF model (docs/uqff.md):
//   * one row per quantized layer, named `<key>.weight`: dtype and bytes are those of the
//     stored `<key>.weight` entry (U8 blocks, U32 AFQ words, F8_E4M3, ...), shape and
//     element_count are the LOGICAL shape (`.weight.shape`, or derived from the packed shape);
//   * one row per `<key>.bias` and per residual.safetensors tensor, as stored.
// The layer's family, bits, group size, components and stack layout are kept in a RowExt
// placed in the arena right before the row's shape array (see uqff_row.h), so the handle
// needs nothing beyond the common tensor table.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/limits.h"
#include "table/model.h"
#include "core/status.h"

namespace tblob {
namespace uqff {

// The version this reader implements (mistral.rs UQFF_VERSION_*).
constexpr uint32_t kVersionMajor = 1;
constexpr uint32_t kVersionMinor = 2;
constexpr uint32_t kVersionPatch = 0;

// QuantizedSerdeType values stored in `<key>.weight.format`.
enum class Family : uint32_t {
  kGgml = 0,
  kUnquant = 1,
  kHqq = 2,
  kFp8 = 3,
  kAfq = 4,
  kF8q8 = 5,
  kMxfp4 = 6,
  kNone = 255,  // a plain tensor (bias, residual) or an unresolved layer
};
constexpr uint32_t kFamilyCount = 7;
const char *family_name(Family f);  // "gguf", "unquant", "hqq", "fp8", "afq", "f8q8", "mxfp4"

// ---- reports --------------------------------------------------------------------------------
enum class Severity : uint32_t { kError = 0, kWarning = 1 };
enum class EntryKind : uint32_t { kSet = 0, kShard = 1, kLayer = 2, kTensor = 3 };

constexpr size_t kProblemMessageBytes = 240;
constexpr uint32_t kMaxProblems = 8;

struct Problem {
  Severity severity;
  Status status;
  char message[kProblemMessageBytes];
};

// One line of the verify report (everything borrowed for the duration of the callback).
struct ReportEntry {
  EntryKind kind;
  const char *name;  // set: first path; shard: path; layer: "<key>.weight"; tensor: its name
  size_t name_len;
  Family family;        // layers (kNone when unresolved)
  const char *label;    // mistral.rs-style stored label: "q4k", "afq4", "hqq8", "fp8", ... or ""
  uint32_t ggml_type;   // GGML layers; UINT32_MAX otherwise
  uint32_t bits;        // element bits (GGML: nominal; unquant: dtype bits); 0 when unknown
  uint32_t group_size;  // AFQ/HQQ group, GGML/F8Q8/MXFP4 block; 0 when none
  uint32_t shard;       // file index of `<key>.weight` (layers), of the tensor, of the shard
  uint32_t shard_span;  // layers: number of distinct shards its entries are in (2+ = straddles)
  uint32_t dtype;       // stored dtype of `<key>.weight` / the tensor
  uint32_t rank;
  const uint64_t *shape;  // logical shape (may be null when unresolved)
  uint64_t experts;       // leading dim of a stacked [E, out, in] layer, 0 otherwise
  uint64_t stored_bytes;  // bytes of all the layer's entries
  uint32_t has_bias;
  // set entries: the version found (0 when absent), counts
  uint32_t version_major, version_minor, version_patch;
  uint32_t problem_count;
  const Problem *problems;
};

// Called per entry in report mode; non-zero stops the verify with TBLOB_E_CANCELLED.
using ReportFn = int (*)(void *user, const ReportEntry &entry);

struct VerifySummary {
  uint32_t version_major = 0, version_minor = 0, version_patch = 0;
  uint32_t shards = 0;
  uint64_t layers = 0;
  uint64_t tensors = 0;  // bias + residual tensors
  uint64_t errors = 0;
  uint64_t warnings = 0;
};

// ---- entry points ---------------------------------------------------------------------------
// Opens the set named by paths (a directory, one shard, or an explicit list of shard files)
// into m (an empty model). Strict: the first version, structural or container problem fails.
Status open_set(tblob_model *m, const char *const *paths, size_t path_count, const Limits &limits,
                const Diag &diag);

// Report mode: the same checks, every problem reported; returns TBLOB_OK when no error was
// found, else the first error's status (also in diag). m is a scratch model owned by the
// caller (closed afterwards).
Status verify_set(tblob_model *m, const char *const *paths, size_t path_count, const Limits &limits,
                  ReportFn fn, void *user, VerifySummary *summary, const Diag &diag);

// Shards held in memory (borrowed; no siblings). fn null: strict open; else report mode.
Status open_buffers(tblob_model *m, const uint8_t *const *bufs, const size_t *lens, size_t count,
                    const Limits &limits, ReportFn fn, void *user, VerifySummary *summary, const Diag &diag);

// Content detection: a directory holding `*.uqff` shards (or uqff_report.json), or a
// safetensors file whose header names UQFF entries (`uqff.version.*` or `*.weight.format`).
// looks_like_shard decides from the file, table_says_shard (the same rule) from the table of
// the file already opened as safetensors (what tblob_model_open uses).
bool looks_like_dir(const char *path);
bool looks_like_shard(const char *path, const uint8_t *head, size_t head_len);
bool table_says_shard(const tblob_model *m, const char *path);

// Opens the shard set of `path`, whose file m already holds as file 0, scanned as
// safetensors (st_scan_single): when path is the set's first shard its scan is kept, so the
// file is parsed once; otherwise m is emptied and every file opened afresh.
Status open_scanned(tblob_model *m, const char *path, const Limits &limits, const Diag &diag);

// Opens a shard read through a byte source, which m holds as file 0 scanned as safetensors
// (st_scan_single), as a one-shard set (no siblings, no residual, like open_buffers): only
// the entries of at most kSmallEntryBytes bytes are read; layer parts are read on dequantize.
Status open_source_shard(tblob_model *m, const Limits &limits, const Diag &diag);

// ---- layers of an open model ----------------------------------------------------------------
struct LayerView {
  bool is_layer;          // false: a plain tensor (bias, residual)
  Family family;
  const char *label;
  uint32_t ggml_type;     // UINT32_MAX unless GGML
  uint32_t bits;
  uint32_t group_size;
  uint32_t weight_dtype;  // stored dtype of `<key>.weight` (plain: the tensor's dtype)
  uint32_t scale_dtype;   // AFQ/HQQ scales, FP8 scale (F32), MXFP4 E8M0 (F8_E8M0), else 0
  uint32_t shard;
  uint32_t shard_span;
  uint64_t experts;       // 0 unless a stacked [E, out, in] layer
  uint64_t rows;          // per expert for stacks; product of the leading dims otherwise
  uint64_t cols;          // last logical dim (1 for a 0-d tensor)
  uint64_t stored_bytes;
  uint32_t has_bias;
};
Status layer_view(const tblob_model *m, uint64_t index, LayerView *out, const Diag &diag);

// `expert` value meaning "the whole stack, its leading axes folded into rows" (E * out rows).
constexpr uint64_t kAllExperts = UINT64_MAX;

// Bytes dequantize() writes.
Status dequant_bytes(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t expert,
                     uint64_t row_begin, uint64_t row_end, uint64_t *bytes, const Diag &diag);
// Decodes rows [row_begin, row_end) of row `index` (for a stacked layer: of expert `expert`,
// which must be 0 otherwise; kAllExperts: rows of the folded [E*out, in] view) into dst as
// out_dtype (F32/F16/BF16), row-major; row_end UINT64_MAX: through the last row.
// tblob_tensor_dequantize on a UQFF model is
// dequantize(m, index, out, kAllExperts, row_begin, row_end, ...).
Status dequantize(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t expert,
                  uint64_t row_begin, uint64_t row_end, void *dst, size_t dst_bytes,
                  const Diag &diag);

// The operations a UQFF model carries (uqff_format.cpp): the two functions above over the
// folded view, detection and open.
extern const FormatOps kFormat;

}  // namespace uqff
}  // namespace tblob
