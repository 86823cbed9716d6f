// GGML block quantization (the inverse of lib/dequant/ggml): one table of row quantizers by
// ggml type id and the checked driver behind tblob_ggml_quantize. Every quantizer is a scalar
// transcription of the rules of ggml's own `quantize_<type>` (what ggml_quantize_chunk calls),
// bit-exact with ggml built without floating-point contraction (docs/quantize.md "GGML
// blocks"): this folder is compiled with -ffp-contract=off (meson.build), and every float
// operation is written in ggml's order, each rounded to f32.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace tblob {
namespace ggml {

// Quantizes one row of `cols` values (a multiple of the type's block size) into its
// row-size bytes at dst_row (any alignment). importance: nullptr or `cols` finite,
// non-negative weights (already checked), for the types that take them. Must not read or write
// anything else, allocate, or keep state: rows run on several threads at once.
using RowQuantizeFn = void (*)(const float *row, void *dst_row, int64_t cols, const float *importance);

struct RowQuantizer {
  uint32_t ggml_type;
  RowQuantizeFn fn;
};

// The quantizer of a ggml type id, or nullptr when the type has none.
const RowQuantizer *row_quantizer(uint32_t ggml_type);

// Checked driver: rows x cols values of src_dtype (TBLOB_DTYPE_F32/F16/BF16) at src (exactly
// src_bytes) into rows * row size bytes at dst; `threads` as tblob_quantize_options.threads.
// Statuses as tblob_ggml_quantize (include/tensorblob.h).
Status quantize(uint32_t ggml_type, uint32_t src_dtype, const void *src, uint64_t src_bytes,
                uint64_t rows, uint64_t cols, const float *importance, void *dst, uint64_t dst_bytes,
                uint32_t threads, const Diag &diag);

// Bytes of one row of `cols` values: TBLOB_E_UNSUPPORTED (unknown id), TBLOB_E_QUANT_GROUP_SIZE
// (cols not a multiple of the block), TBLOB_E_SHAPE_OVERFLOW.
Status row_size(uint32_t ggml_type, uint64_t cols, uint64_t *bytes, const Diag &diag);

}  // namespace ggml
}  // namespace tblob
