// Hugging Face block FP8 (QuantScheme::kBlockFp8): the one 2-D block scheme. It does not fit
// the row-group descriptor rules of validate_desc(), so it has its own validation and entry
// point; its kernel slot in every KernelTable is the scalar one below.
//
// Definition. The tensor is `rows` x `cols` E4M3 codes, one byte each, row-major
// (data_bytes == rows * cols). Scales (HF `weight_scale_inv`, despite the name a multiplier)
// form a row-major ceil(rows/G) x ceil(cols/G) array of f32, bf16 or f16, G = group_size, the
// block edge (128 in every checkpoint seen; blocks are square); edge blocks may be partial.
// Element (r, c) uses scale (r / G) * ceil(cols / G) + c / G. Arithmetic, as the reference
// dequantizers do it (DeepSeek-V3 `weight_dequant`, `w.float() * s` then a cast):
//     p = f32(E4M3(code) * f32(scale))   one IEEE f32 multiply, rounded to nearest even
//     out = round_O(p)                   f32 -> f16 / bf16 to nearest even (f32: p itself)
// A NaN product becomes the canonical quiet NaN. E4M3 follows OCP (0x7F/0xFF NaN) unless
// `special` has kSpecE4M3MaxFinite. No bias, no global scale; bits is 0 or 8.
#pragma once
#include <cstddef>
#include <cstdint>

#include "dequant/kernel_table.h"
#include "dequant/quant_desc.h"

namespace tblob {

// TBLOB_OK or the kStatusQuant* status of the first broken rule (order as validate_desc:
// scheme/bits/flags, group size, scale dtype, bias, global scale, data size, scale size),
// TBLOB_E_SHAPE_OVERFLOW, TBLOB_E_INVALID_ARGUMENT for a NULL pointer with a length.
Status validate_block_fp8(const QuantDesc &d);

// Scale count (ceil(rows/G) * ceil(cols/G)) of a descriptor that passed validation.
uint64_t block_fp8_scale_count(const QuantDesc &d);

// dequantize_rows() for kBlockFp8 descriptors: same statuses, same buffer rules.
Status dequantize_block_fp8(const QuantDesc &d, uint32_t out_dtype, uint64_t row_begin,
                            uint64_t row_end, void *dst, size_t dst_bytes);

namespace scalar {
template <uint32_t OUT> void block_fp8_rows(const QuantDesc &, uint64_t, uint64_t, void *);
}  // namespace scalar

}  // namespace tblob
