// A container format as one table of operations. Each format defines one FormatOps in its own
// folder (lib/formats/<name>/<name>_format.cpp) and lists it once in lib/formats/registry.cpp;
// detection (lib/formats/open.cpp) walks the registry, and a model keeps a pointer to the
// operations of the format its rows came from (tblob_model::ops), so nothing above the format
// asks which format a model is. A null operation means "the table's default": the name index,
// the row's dtype and quantized companions, the string metadata pairs.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "tensorblob.h"

struct tblob_model;

namespace tblob {

struct Limits;
struct QuantDesc;
struct Source;

// How the input reached open: detection offers a format only the inputs it lists.
enum OpenInput : uint32_t {
  kInputPath = 1u << 0,    // tblob_model_open: a path (file 0 mapped or read as the mode says)
  kInputMemory = 1u << 1,  // tblob_model_open_memory: a borrowed buffer
  kInputSource = 1u << 2,  // tblob_model_open_source: a caller's byte source (a prefix in memory)
};

// What detection hands a format's open(): a new model whose file 0 is the input, its first
// bytes in memory (all of them unless input is kInputSource), and, when the format claimed a
// scanned table (claims_table, `scanned`), the rows the safetensors scan put in it. open owns
// m: on success *out takes it (or a model built in its place), otherwise open frees it.
struct OpenRequest {
  OpenInput input;
  const char *path;  // kInputPath: as given; otherwise m->files[0].path names the input
  tblob_model *m;
  const Limits &limits;
  const Diag &diag;
  bool scanned;
};

// A probe's answer; kProbeMore: the first probe_bytes bytes would tell (a byte source's
// prefix is shorter and more bytes may come). Asked again with them, a probe must decide.
enum ProbeResult { kProbeNo = 0, kProbeYes = 1, kProbeMore = 2 };

// One typed key/value as the format stores it (the public tblob_metadata_value's fields).
struct TypedMeta {
  uint32_t value_type = 0, element_type = 0;  // tblob_meta_type
  const char *key = nullptr;
  size_t key_len = 0;
  const void *data = nullptr;  // the stored bytes (an array's elements)
  uint64_t data_bytes = 0;
  uint64_t count = 1;  // array elements
  bool is_array = false;
  size_t meta_row = 0;  // a scalar's text / a string's bytes: this row of the metadata table
  uint64_t uint_value = 0;
  int64_t int_value = 0;
  double float_value = 0;
};

struct FormatOps {
  const char *name = nullptr;  // "gguf", as tblob_format_name spells it
  uint32_t format = TBLOB_FORMAT_UNKNOWN;

  // ---- detection and opening, in registry order (lib/formats/open.cpp) ----
  uint32_t inputs = 0;  // OpenInput bits detection offers this format
  // A path the format recognises before any file is read (a directory, a store path): opens
  // it and returns true, or returns false having done nothing.
  bool (*claims_path)(const char *path, const Limits &limits, tblob_model **out, Status *st,
                      const Diag &diag) = nullptr;
  // The first bytes say this format (a magic): head holds the first len bytes (at most 4096),
  // `total` is the input's size or TBLOB_SOURCE_SIZE_UNKNOWN, `more` whether a byte source
  // could give more. probe_bytes: what kProbeMore asks for.
  size_t probe_bytes = 0;
  ProbeResult (*probe)(const uint8_t *head, size_t len, uint64_t total, bool more) = nullptr;
  // A file scanned as safetensors whose table says it is really this format.
  bool (*claims_table)(const tblob_model *m, const char *path) = nullptr;
  Status (*open)(const OpenRequest &req, tblob_model **out) = nullptr;

  // ---- rows ----
  // Lookup by name where the name index cannot answer (SLM1 stores only name hashes).
  Status (*find)(const tblob_model *m, const char *name, size_t name_len, uint64_t *index,
                 const Diag &diag) = nullptr;
  // The descriptor of row `index` where it lies (SLM1 rows: codes and scales in place) and its
  // logical shape (nullptr: the table's).
  Status (*describe)(const tblob_model *m, uint64_t index, QuantDesc *q, const uint64_t **shape,
                     uint32_t *rank) = nullptr;
  // With describe: where in file 0 row `index`'s scales lie, for a byte source that has not
  // read them (describe then leaves QuantDesc::scales null).
  uint64_t (*scales_offset)(const tblob_model *m, uint64_t index) = nullptr;
  // Formats that decode rows themselves (GGML blocks, UQFF layers): the output size and the
  // decoding of rows [row_begin, row_end) (row_end TBLOB_ALL_ROWS: through the last).
  Status (*output_bytes)(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin,
                         uint64_t row_end, uint64_t *bytes, const Diag &diag) = nullptr;
  Status (*decode)(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin,
                   uint64_t row_end, void *dst, size_t dst_bytes, const Diag &diag) = nullptr;

  // ---- typed metadata (null: the metadata table's string pairs) ----
  uint64_t (*meta_count)(const tblob_model *m) = nullptr;
  // false: entry `index` is a plain string pair (metadata row `index`).
  bool (*meta_at)(const tblob_model *m, uint64_t index, TypedMeta *out) = nullptr;
  uint64_t (*meta_find)(const tblob_model *m, const char *key, size_t key_len) = nullptr;  // UINT64_MAX: none
  Status (*meta_array_get)(const tblob_model *m, uint64_t index, uint64_t first, uint64_t count, void *buf,
                           size_t cap, const Diag &diag) = nullptr;
  Status (*meta_array_strings)(const tblob_model *m, uint64_t index, uint64_t first, uint64_t count, bool resume,
                               uint64_t *element, uint64_t *position, tblob_metadata_string_fn fn, void *user,
                               const Diag &diag) = nullptr;
  uint64_t (*meta_cursor_check)(const tblob_model *m, uint64_t index, uint64_t element,
                                uint64_t position) = nullptr;

  // ---- writing: a slot for the writers to come (GGUF, quantized safetensors) ----
  const void *writer = nullptr;
};

}  // namespace tblob
