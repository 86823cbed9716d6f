// GGUF v2/v3 files (ggml's container): header, metadata and tensor infos -> the tensor table.
//
// What the table holds for a GGUF file (docs/gguf.md):
//   * one row per tensor info, in header order (which the layout rule makes offset order);
//     shape outermost-first (GGUF's ne reversed), element_count the logical element count;
//   * dtype F32/F16/BF16/F64/I8/I16/I32/I64 for ggml's plain types, U8 for every block type
//     (the bytes are ggml blocks; the row's ggml type is in the model's GgufExt);
//   * metadata: string and scalar key/values (scalars rendered as text), arrays left out;
//     every key/value, arrays included, with its type in GgufExt::kvs (the typed table).
// Strings and names point into the file; nothing in the header is copied except shapes and
// rendered scalars.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/endian.h"
#include "core/limits.h"
#include "core/status.h"
#include "table/model.h"

namespace tblob {
namespace gguf {

// ---- ggml tensor types -----------------------------------------------------------------------
struct TypeInfo {
  uint32_t id;           // ggml_type
  const char *name;      // ggml's name: "f32", "q4_K", "iq2_xxs", ...
  uint32_t block_elems;  // 0: an id ggml has removed (Q4_2, Q4_0_4_4, ...)
  uint32_t block_bytes;
  uint32_t dtype;        // tblob_dtype of the row: the plain type, or U8 for block types
};
// nullptr for an id ggml never assigned. Removed ids give an entry with block_elems 0.
const TypeInfo *type_info(uint32_t ggml_type);

// ---- metadata value types (gguf_type) ----------------------------------------------------------
enum ValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8,
  kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12, kValueTypeCount = 13
};
// Bytes of one scalar of a value type; 0 for string, array and unknown types.
constexpr uint32_t scalar_bytes(uint32_t t) {
  switch (t) {
    case kU8: case kI8: case kBool: return 1;
    case kU16: case kI16: return 2;
    case kU32: case kI32: case kF32: return 4;
    case kU64: case kI64: case kF64: return 8;
    default: return 0;
  }
}

constexpr uint32_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 4;          // GGML_MAX_DIMS
constexpr uint32_t kMaxNameBytes = 63;    // GGML_MAX_NAME 64, with its NUL
constexpr uint64_t kMaxStringBytes = uint64_t{1} << 30;
constexpr uint64_t kMaxArrayElems = uint64_t{1} << 30;

// One key/value as the file holds it (nothing copied), decoded from its KvRef on demand.
struct MetaKv {
  const char *key;
  size_t key_len;
  uint32_t type;          // ValueType
  uint32_t element_type;  // arrays: the elements' ValueType
  const uint8_t *data;    // scalar: its bytes; string: its bytes; array: the first element
  uint64_t bytes;         // bytes at data (arrays: every element, strings with their lengths)
  uint64_t count;         // arrays: elements; otherwise 1
  size_t meta_row;        // its row in the model's metadata table; SIZE_MAX for arrays
};

// What the typed table keeps per key/value: where it starts, 8 bytes (a decoded MetaKv was 56:
// a file of a million one-byte key/values cost 56 MB for 20 MB of input). Everything else is
// read back from the file's bytes, validated at open; an array's element bytes (a string
// array's take a walk to know) are in GgufExt::arrays.
struct KvRef {
  const uint8_t *start;  // the key's length field
};
// The key of r.
inline const char *kv_key(const KvRef &r, size_t *len) {
  *len = static_cast<size_t>(load_le64(r.start));
  return reinterpret_cast<const char *>(r.start + 8);
}
// Element bytes of the array that is key/value `kv` (sorted by kv, one per array).
struct ArrayBytes {
  size_t kv;
  uint64_t bytes;
};

// What a model keeps about its GGUF rows: one ggml type per row of [first_row, first_row + rows),
// and every key/value with its type.
constexpr uint64_t kExtMagic = 0x4747554645585431ull;  // "GGUFEXT1"
struct GgufExt {
  uint64_t magic;
  size_t first_row;
  size_t rows;
  const uint32_t *types;
  uint32_t alignment;
  uint32_t version;
  const KvRef *kvs;        // file order
  size_t kv_count;
  size_t meta_prefix;      // metadata rows before the file's own (a store model's ollama.* keys)
  size_t meta_rows;        // the file's own metadata rows, in kv order (arrays have none)
  const ArrayBytes *arrays;
  size_t array_count;
};
// Key/value i of e, decoded; its meta_row (scalars and strings) found in m's metadata rows.
MetaKv decode_kv(const tblob_model *m, const GgufExt &e, size_t i);
// The ext of m when its rows came from a GGUF file, else nullptr.
const GgufExt *ext_of(const tblob_model *m);

// ---- typed metadata (gguf_metadata.cpp) -----------------------------------------------------
// The typed table of a model with GGUF rows: the metadata rows before the file's own
// (strings), then every key/value of the file.
inline size_t typed_count(const GgufExt &e) { return e.meta_prefix + e.kv_count; }
// The key/value at typed index i into *kv; false for a prefix row (a plain string pair).
inline bool typed_kv(const tblob_model *m, const GgufExt &e, uint64_t i, MetaKv *kv) {
  if (i < e.meta_prefix || i - e.meta_prefix >= e.kv_count) return false;
  *kv = decode_kv(m, e, static_cast<size_t>(i - e.meta_prefix));
  return true;
}
// Typed index of the first key/value named key, or UINT64_MAX.
uint64_t typed_find(const tblob_model *m, const GgufExt &e, const char *key, size_t key_len);
// A scalar's value: unsigned kinds and bool in *u, signed in *i, floats in *f (others 0).
void scalar_value(const MetaKv &kv, uint64_t *u, int64_t *i, double *f);
// Elements [first, first + count) of a numeric or bool array into buf, host byte order.
Status array_get(const MetaKv &kv, uint64_t first, uint64_t count, void *buf, size_t cap, const Diag &diag);
// Walks string elements [first, first + count) of kv, from (*element, *position) when that is
// a valid start at or before first, else from 0; leaves them after the last element walked.
// fn returning non-zero stops the walk with TBLOB_E_CANCELLED.
using StringFn = int (*)(void *user, uint64_t element, const char *s, size_t len);
Status array_strings(const MetaKv &kv, uint64_t first, uint64_t count, bool resume, uint64_t *element,
                     uint64_t *position, StringFn fn, void *user, const Diag &diag);
// The value that ties a cursor (array, element, position) to kv of this model.
uint64_t cursor_check(const MetaKv &kv, uint64_t array, uint64_t element, uint64_t position);

// True when the bytes start with the GGUF magic.
bool looks_like(const uint8_t *p, size_t n);

// Parses file `file_index` of m (source set, tables empty or holding earlier rows) and
// appends its tensors and metadata; sets the file's data region, m->ext and
// m->ops. Indexes nothing.
Status read_file(tblob_model *m, uint32_t file_index, const Limits &limits, const Diag &diag);

// tblob_model_open / _open_memory: file 0 of m holds a GGUF file. Sets the format, indexes
// names and metadata.
Status open_detected(tblob_model *m, const Limits &limits, const Diag &diag);
// tblob_model_open: file 0 of m is a GGUF file opened by path. When its name is
// NAME-0000k-of-0000n.gguf (n > 1), the whole split set (gguf_split.cpp); otherwise
// open_detected(), refusing a file whose split.count says it is one part of several.
Status open_file(tblob_model *m, const Limits &limits, const Diag &diag);
// tblob_model_open_source, after *m opened a GGUF source: when the source's name is
// NAME-0000k-of-0000n.gguf (n > 1), replaces *m (freed) with the whole set, the other parts
// opened through open_sibling by their names relative to the directory; otherwise refuses a
// part holding split.count > 1 and leaves *m.
Status open_source_set(tblob_model **m, const Limits &limits, const Diag &diag);

// tblob_tensor_dequantize on a row of a model whose ext_of() is set: rows of the logical
// shape (every axis but the last folded), ggml blocks through the GGML kernel table.
Status dequantize(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin,
                  uint64_t row_end, void *dst, size_t dst_bytes, const Diag &diag);
// Bytes dequantize() writes for these arguments (the same checks); tblob_tensor_dequant_size.
Status dequant_bytes(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin,
                     uint64_t row_end, uint64_t *bytes, const Diag &diag);
// tblob_model_open_source: file 0 of m is a byte source starting with the magic. Reads a
// prefix that doubles while the parser says the bytes ran out (up to the size or the header
// limit), then opens as open_detected. Owns m: *out takes the model, or it is freed.
Status open_source_prefix(tblob_model *m, const Limits &limits, tblob_model **out, const Diag &diag);

// The operations a model with GGUF rows carries (read_file sets m->ops; gguf_format.cpp).
extern const FormatOps kFormat;

}  // namespace gguf
}  // namespace tblob
