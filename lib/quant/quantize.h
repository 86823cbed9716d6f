// The quantizers: the exact inverses of the scalar decoders in lib/dequant/scalar, for the
// schemes docs/quantize.md lists ("MLX and FP8 schemes"). Each works on a range of rows (block
// FP8: of block rows), reads its input through a Source and writes the descriptor's data,
// scales and biases for exactly those rows; nothing is allocated.
#pragma once
#include <cstdint>

#include "core/status.h"
#include "dequant/quant_desc.h"
#include "quant/source.h"

namespace tblob {
namespace quant {

// Sets d->data_bytes, scales_bytes, biases_bytes, global_scale_bytes from the other fields;
// TBLOB_OK or the status validate_desc() gives for them.
Status sizes(QuantDesc *d);

// Checks that d (validated, sizes exact, buffers set) is a descriptor these quantizers write:
// TBLOB_OK, or a status with *why naming the rule (static text).
Status check_quantizable(const QuantDesc &d, const char **why);

// Quantizes all of src (d.rows x d.cols, d checked) on `threads` workers (0: one per core).
// TBLOB_OK, or TBLOB_E_QUANT_NONFINITE / TBLOB_E_QUANT_VALUE with the earliest refused value
// in *err.
Status quantize(const QuantDesc &d, const Source &src, uint32_t threads, ValueError *err);

// Per-scheme workers over units [ub, ue): rows, or block rows for block FP8. Each records the
// first refused value of its range in *err and carries on (the report is the earliest).
void affine_rows(const QuantDesc &d, const Source &src, uint64_t ub, uint64_t ue, ValueError *err);
void mxfp_rows(const QuantDesc &d, const Source &src, uint64_t ub, uint64_t ue, ValueError *err);
void nvfp4_rows(const QuantDesc &d, const Source &src, uint64_t ub, uint64_t ue, ValueError *err);
void block_fp8_rows(const QuantDesc &d, const Source &src, uint64_t ub, uint64_t ue, ValueError *err);
void slm1_rows(const QuantDesc &d, const Source &src, uint64_t ub, uint64_t ue, ValueError *err);

}  // namespace quant
}  // namespace tblob
