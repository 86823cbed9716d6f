// GGUF v2/v3 files (ggml's container): header, metadata and tensor infos -> the tensor table.
//
// What the table holds for a GGUF file (docs/gguf.md):
//   * one row per tensor info, in header order (which the layout rule makes offset order);
//     shape outermost-first (GGUF's ne reversed), element_count the logical element count;
//   * dtype F32/F16/BF16/F64/I8/I16/I32/I64 for ggml's plain types, U8 for every block type
//     (the bytes are ggml blocks; the row's ggml type is in the model's GgufExt);
//   * metadata: string and scalar key/values (scalars rendered as text), arrays left out.
// Strings and names point into the file; nothing in the header is copied except shapes and
// rendered scalars.
#pragma once
#include <cstddef>
#include <cstdint>

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

constexpr uint32_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 4;          // GGML_MAX_DIMS
constexpr uint32_t kMaxNameBytes = 63;    // GGML_MAX_NAME 64, with its NUL
constexpr uint64_t kMaxStringBytes = uint64_t{1} << 30;
constexpr uint64_t kMaxArrayElems = uint64_t{1} << 30;

// What a model keeps about its GGUF rows: one ggml type per row of [first_row, first_row + rows).
constexpr uint64_t kExtMagic = 0x4747554645585431ull;  // "GGUFEXT1"
struct GgufExt {
  uint64_t magic;
  size_t first_row;
  size_t rows;
  const uint32_t *types;
  uint32_t alignment;
  uint32_t version;
};
// The ext of m when its rows came from a GGUF file, else nullptr.
const GgufExt *ext_of(const tblob_model *m);

// True when the bytes start with the GGUF magic.
bool looks_like(const uint8_t *p, size_t n);

// Parses file `file_index` of m (source set, tables empty or holding earlier rows) and
// appends its tensors and metadata; sets the file's data region, m->ext and
// m->dequant_hooks. Indexes nothing.
Status read_file(tblob_model *m, uint32_t file_index, const Limits &limits, const Diag &diag);

// tblob_model_open / _open_memory: file 0 of m holds a GGUF file. Sets the format, indexes
// names and metadata.
Status open_detected(tblob_model *m, const Limits &limits, const Diag &diag);

// tblob_tensor_dequantize on a row of a model whose ext_of() is set: rows of the logical
// shape (every axis but the last folded), ggml blocks through the GGML kernel table.
Status dequantize(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin,
                  uint64_t row_end, void *dst, size_t dst_bytes, const Diag &diag);
// Bytes dequantize() writes for these arguments (the same checks); tblob_tensor_dequant_size.
Status dequant_bytes(const tblob_model *m, uint64_t index, uint32_t out_dtype, uint64_t row_begin,
                     uint64_t row_end, uint64_t *bytes, const Diag &diag);
// The DequantHooks a model with GGUF rows carries (read_file sets m->dequant_hooks): the two
// functions above.
extern const DequantHooks kDequantHooks;

}  // namespace gguf
}  // namespace tblob
